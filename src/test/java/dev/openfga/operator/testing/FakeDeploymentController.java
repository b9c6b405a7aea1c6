package dev.openfga.operator.testing;

import dev.openfga.operator.migration.rules.Keys;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.apps.DeploymentConditionBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatus;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Plays the Kubernetes Deployment controller on the mock API server: numbers the pod templates in
 * the annotation {@code deployment.kubernetes.io/revision}, and keeps {@code status} (the observed
 * generation, replicas, its own {@code Available} condition) in step with the spec, writing with a
 * resourceVersion-guarded patch like a real controller's update, and keeping every condition it
 * does not own — such as the operator's {@code MigrationFailed}.
 */
public final class FakeDeploymentController implements AutoCloseable {
  /** The Deployment controller's annotation: the revision of the newest pod template. */
  private static final String REVISION = Keys.DEPLOYMENT_REVISION;

  private final KubernetesClient client;
  private final ExecutorService worker = Executors.newSingleThreadExecutor();
  private final SharedIndexInformer<Deployment> informer;

  FakeDeploymentController(KubernetesClient client) {
    this.client = client;
    this.informer =
        client
            .apps()
            .deployments()
            .inAnyNamespace()
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(Deployment d) {
                    worker.execute(
                        () -> sync(d.getMetadata().getNamespace(), d.getMetadata().getName()));
                  }

                  @Override
                  public void onUpdate(Deployment oldD, Deployment newD) {
                    worker.execute(
                        () ->
                            sync(newD.getMetadata().getNamespace(), newD.getMetadata().getName()));
                  }

                  @Override
                  public void onDelete(Deployment d, boolean unknown) {}
                });
  }

  /** The pod template each Deployment (namespace/name/uid) last had, and its revision. */
  private final Map<String, String> templates = new HashMap<>();

  private final Map<String, Long> revisions = new HashMap<>();

  /**
   * The revision of the Deployment's pod template, as the Deployment controller numbers it: 1 for
   * the first, one more for each new one it sees (two changes between two looks count once).
   */
  private long revision(Deployment d) {
    String key =
        d.getMetadata().getNamespace()
            + "/"
            + d.getMetadata().getName()
            + "/"
            + d.getMetadata().getUid();
    String template = Serialization.asJson(d.getSpec().getTemplate());
    if (!template.equals(templates.get(key))) {
      templates.put(key, template);
      revisions.merge(key, 1L, Long::sum);
    }
    return revisions.get(key);
  }

  private void sync(String ns, String name) {
    for (int attempt = 0; attempt < 5; attempt++) {
      Deployment d = client.apps().deployments().inNamespace(ns).withName(name).get();
      if (d == null) {
        return;
      }
      // the revision annotation first, then the status that says the generation was observed
      String revision = Long.toString(revision(d));
      Map<String, String> annotations = d.getMetadata().getAnnotations();
      if (annotations == null || !revision.equals(annotations.get(REVISION))) {
        try {
          client
              .apps()
              .deployments()
              .inNamespace(ns)
              .withName(name)
              .patch(
                  PatchContext.of(PatchType.JSON),
                  Serialization.asJson(
                      List.of(
                          guard(d),
                          annotations == null
                              ? Map.of(
                                  "op",
                                  "add",
                                  "path",
                                  "/metadata/annotations",
                                  "value",
                                  Map.of(REVISION, revision))
                              : Map.of(
                                  "op",
                                  "add",
                                  "path",
                                  "/metadata/annotations/deployment.kubernetes.io~1revision",
                                  "value",
                                  revision))));
        } catch (KubernetesClientException conflict) {
          // someone wrote in between: read again, as a real controller would
        }
        continue;
      }
      int replicas = d.getSpec().getReplicas() == null ? 1 : d.getSpec().getReplicas();
      DeploymentStatus status = d.getStatus() == null ? new DeploymentStatus() : d.getStatus();
      String available = replicas > 0 ? "True" : "False";
      Optional<DeploymentCondition> own = find(status.getConditions(), "Available");
      if (Objects.equals(status.getReplicas(), replicas)
          && Objects.equals(status.getObservedGeneration(), d.getMetadata().getGeneration())
          && own.isPresent()
          && available.equals(own.get().getStatus())) {
        return;
      }
      List<DeploymentCondition> conditions = new ArrayList<>();
      if (status.getConditions() != null) {
        status.getConditions().stream()
            .filter(c -> !"Available".equals(c.getType()))
            .forEach(conditions::add);
      }
      conditions.add(
          new DeploymentConditionBuilder()
              .withType("Available")
              .withStatus(available)
              .withReason(replicas > 0 ? "MinimumReplicasAvailable" : "ScaledToZero")
              .withLastTransitionTime(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString())
              .build());
      DeploymentStatus next =
          new DeploymentStatusBuilder()
              .withObservedGeneration(d.getMetadata().getGeneration())
              .withReplicas(replicas)
              .withReadyReplicas(replicas)
              .withAvailableReplicas(replicas)
              .withUpdatedReplicas(replicas)
              .withConditions(conditions)
              .build();
      String patch =
          Serialization.asJson(
              List.of(guard(d), Map.of("op", "add", "path", "/status", "value", next)));
      try {
        client
            .apps()
            .deployments()
            .inNamespace(ns)
            .withName(name)
            .subresource("status")
            .patch(PatchContext.of(PatchType.JSON), patch);
        return;
      } catch (KubernetesClientException conflict) {
        // someone wrote in between: read again, as a real controller would
      }
    }
  }

  /**
   * A guard as the operator's patches have one: the mock API server answers a stale resourceVersion
   * with 409, but a failed "test" op with no answer at all (the client then resends the same stale
   * patch until its retries run out).
   */
  private static Map<String, Object> guard(Deployment d) {
    return Map.of(
        "op",
        "replace",
        "path",
        "/metadata/resourceVersion",
        "value",
        d.getMetadata().getResourceVersion());
  }

  private static Optional<DeploymentCondition> find(
      List<DeploymentCondition> conditions, String type) {
    return conditions == null
        ? Optional.empty()
        : conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
  }

  /** The operator's condition, if the Deployment has it. */
  public Optional<DeploymentCondition> migrationCondition(Deployment d) {
    return d.getStatus() == null
        ? Optional.empty()
        : find(d.getStatus().getConditions(), Keys.CONDITION_TYPE);
  }

  @Override
  public void close() {
    informer.close();
    worker.shutdownNow();
  }
}
