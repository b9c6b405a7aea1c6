package dev.openfga.operator.migration;

import dev.openfga.operator.kube.CompactingStore;
import dev.openfga.operator.kube.Echoes;
import dev.openfga.operator.kube.OperatorClient;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.Timing;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.javaoperatorsdk.operator.api.config.informer.FieldSelectorBuilder;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The migration controller's caches besides the Deployments': the operator's own Jobs and status
 * records (label {@code managed-by}), and the migration pods (label {@link Keys#DATABASE_LABEL}).
 */
final class MigrationCaches {
  private static final Logger LOG = LoggerFactory.getLogger(MigrationCaches.class);
  static final String JOBS = "migration-jobs";
  static final String CONFIG_MAPS = "status-configmaps";
  static final String PODS = "migration-pods";

  private InformerEventSource<Job, Deployment> jobs;
  private InformerEventSource<ConfigMap, Deployment> configMaps;
  private InformerEventSource<Pod, Deployment> pods;

  List<EventSource<?, Deployment>> prepare(EventSourceContext<Deployment> context, Echoes echoes) {
    jobs = ownedObjects(Job.class, JOBS, context, echoes);
    configMaps = ownedObjects(ConfigMap.class, CONFIG_MAPS, context, echoes);
    pods = migrationPods(context);
    return List.of(jobs, configMaps, pods);
  }

  Optional<Job> job(ResourceID id) {
    return jobs.get(id);
  }

  Optional<ConfigMap> record(ResourceID id) {
    return configMaps.get(id);
  }

  Stream<Job> jobs(Predicate<Job> matching) {
    return jobs.list(matching);
  }

  Stream<Pod> pods(Predicate<Pod> matching) {
    return pods.list(matching);
  }

  /**
   * An informer on the migration pods (label {@link Keys#DATABASE_LABEL}) that have not stopped
   * (phase neither {@code Succeeded} nor {@code Failed}) in the watched namespaces: a pod outlives
   * a Job deleted by someone else without waiting for it, and its database stays taken until it has
   * stopped (SPEC section 9). Its events wake nothing: a Deployment that waits for a database looks
   * again every {@link Timing#WHILE_WAITING}.
   */
  private static InformerEventSource<Pod, Deployment> migrationPods(
      EventSourceContext<Deployment> context) {
    var config = InformerEventSourceConfiguration.from(Pod.class, Deployment.class);
    if (context.getControllerConfiguration().getInformerConfig().getNamespaces().size() == 1) {
      config.withItemStore(new CompactingStore<>());
    }
    return new InformerEventSource<>(
        config
            .withName(PODS)
            .withLabelSelector(Keys.DATABASE_LABEL)
            // only pods that have not stopped: the API server sends no event of a pod once it has
            // ended (its end comes as a deletion), nor of its deletion later
            .withFieldSelector(
                new FieldSelectorBuilder()
                    .withoutField("status.phase", "Succeeded")
                    .withoutField("status.phase", "Failed")
                    .build())
            .withNamespacesInheritedFromController()
            .withInformerListLimit(OperatorClient.LIST_PAGE_SIZE)
            .withSecondaryToPrimaryMapper(pod -> java.util.Set.of())
            .build(),
        context);
  }

  /**
   * Starts the Job, record and migration-pod informers now, each on a thread of its own, beside the
   * Deployment informer. JOSDK starts a controller's own informer first and waits for it to sync
   * before it starts the others; their {@code start()} does nothing once they run and holds their
   * lock while they start, so JOSDK's own call later waits for these and returns (or, when one
   * failed here, starts it again and reports the failure itself). Events they deliver before the
   * Deployments are cached are dropped by JOSDK, which reconciles every cached Deployment once it
   * starts anyway.
   */
  void start() {
    for (InformerEventSource<?, Deployment> source : List.of(jobs, configMaps, pods)) {
      Thread starter =
          new Thread(
              () -> {
                try {
                  source.start();
                } catch (RuntimeException e) {
                  LOG.debug(
                      "early start of the {} informer failed: {}", source.name(), e.toString());
                }
              },
              "start-" + source.name());
      starter.setDaemon(true);
      starter.start();
    }
  }

  /**
   * An informer on the operator's own objects of a kind (label {@code managed-by}), in the watched
   * namespaces, whose events wake the controlling Deployment, except those that only show this
   * process's own writes ({@link Echoes}).
   */
  private static <R extends HasMetadata> InformerEventSource<R, Deployment> ownedObjects(
      Class<R> kind, String name, EventSourceContext<Deployment> context, Echoes echoes) {
    var config = InformerEventSourceConfiguration.from(kind, Deployment.class);
    if (context.getControllerConfiguration().getInformerConfig().getNamespaces().size() == 1) {
      // one informer (one namespace, or all): its store can be compacted (CompactingStore)
      config.withItemStore(new CompactingStore<>());
    }
    return new InformerEventSource<>(
        config
            .withName(name)
            .withLabelSelector(Keys.OWNED_SELECTOR)
            .withNamespacesInheritedFromController()
            // the first list in pages, as for the Deployments: thousands of records must never
            // have to fit in the heap at once
            .withInformerListLimit(OperatorClient.LIST_PAGE_SIZE)
            .withSecondaryToPrimaryMapper(
                Mappers.fromOwnerReferences("apps/v1", "Deployment", false))
            .withOnAddFilter(added -> !echoes.isEchoOfCreate(added))
            .withOnUpdateFilter((newer, older) -> !echoes.isEchoOfPatch(newer, older))
            .build(),
        context);
  }
}
