package dev.openfga.operator.migration;

import dev.openfga.operator.Controllers;
import dev.openfga.operator.kube.CompactingStore;
import dev.openfga.operator.kube.Echoes;
import dev.openfga.operator.kube.EventRecorder;
import dev.openfga.operator.kube.Names;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Database;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.MigrationJob;
import dev.openfga.operator.migration.rules.Observation;
import dev.openfga.operator.migration.rules.Plan;
import dev.openfga.operator.migration.rules.Planner;
import dev.openfga.operator.migration.rules.Step;
import dev.openfga.operator.migration.rules.Timing;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.FieldSelectorBuilder;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The JOSDK reconciler: observe (cache reads) → decide ({@link Planner}, pure) → act ({@link
 * StepRunner}, conditional writes) → tell the framework when to look again.
 */
public final class MigrationReconciler implements Reconciler<Deployment> {
  private static final Logger LOG = LoggerFactory.getLogger(MigrationReconciler.class);
  static final String JOBS = "migration-jobs";
  static final String CONFIG_MAPS = "status-configmaps";
  static final String PODS = "migration-pods";

  private final Planner planner;
  private final StepRunner steps;
  private final KubernetesClient client;
  private final Clock clock;
  private final MigrationMetrics metrics;

  /**
   * How long after its creation a Job the Job controller made no pod for is asked about: the Job
   * controller sends its Events in the background, so its {@code FailedCreate} may come after the
   * Job's status.
   */
  static final java.time.Duration POD_CREATE_GRACE = java.time.Duration.ofSeconds(3);

  /** How often the metrics of Deployments that are gone are looked for. */
  static final java.time.Duration METRICS_SWEEP = java.time.Duration.ofMinutes(1);

  private volatile Instant nextMetricsSweep = Instant.EPOCH;
  private final FailureEvidence evidence;

  /** Deployments blocked by a user error, with how many times in a row. */
  private final Map<ResourceID, Integer> blocked = new ConcurrentHashMap<>();

  /**
   * Held while a Job is decided and created: two Deployments on one database, reconciled at once,
   * must not both see the database free (SPEC section 9).
   */
  private final Object creating = new Object();

  /** What this process wrote that its caches may not show yet. */
  private final OwnWrites own = new OwnWrites();

  /**
   * The migration Job names ({@code namespace/name}) found taken by a Job that is not the
   * Deployment's own (a person's, a legacy Helm hook's): read directly before a create, until that
   * read finds none, instead of a create that fails again (SPEC rule 7).
   */
  private final Set<String> takenJobNames = ConcurrentHashMap.newKeySet();

  /** The watch events that only show this process's own writes, which wake nothing. */
  private final Echoes echoes = new Echoes();

  private final boolean dryRun;

  /** Dry run: what was last logged as would-be writes, per Deployment (logged once). */
  private final Map<ResourceID, String> wouldWrite = new ConcurrentHashMap<>();

  private InformerEventSource<Job, Deployment> jobs;
  private InformerEventSource<ConfigMap, Deployment> configMaps;
  private InformerEventSource<Pod, Deployment> pods;

  /** {@code dryRun}: plans are logged, never carried out. */
  public MigrationReconciler(
      Planner planner,
      KubernetesClient client,
      EventRecorder events,
      MigrationMetrics metrics,
      FailureEvidence evidence,
      Clock clock,
      boolean dryRun) {
    this.dryRun = dryRun;
    this.planner = planner;
    this.evidence = evidence;
    this.client = client;
    this.clock = clock;
    this.metrics = metrics;
    this.steps = new StepRunner(client, events, metrics, own, echoes);
  }

  @Override
  public List<EventSource<?, Deployment>> prepareEventSources(
      EventSourceContext<Deployment> context) {
    jobs = ownedObjects(Job.class, JOBS, context, echoes);
    configMaps = ownedObjects(ConfigMap.class, CONFIG_MAPS, context, echoes);
    pods = migrationPods(context);
    return List.of(jobs, configMaps, pods);
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
            .withInformerListLimit(Controllers.LIST_PAGE_SIZE)
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
  public void startOwnedInformers() {
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
            .withInformerListLimit(Controllers.LIST_PAGE_SIZE)
            .withSecondaryToPrimaryMapper(
                Mappers.fromOwnerReferences("apps/v1", "Deployment", false))
            .withOnAddFilter(added -> !echoes.isEchoOfCreate(added))
            .withOnUpdateFilter((newer, older) -> !echoes.isEchoOfPatch(newer, older))
            .build(),
        context);
  }

  @Override
  public UpdateControl<Deployment> reconcile(Deployment deployment, Context<Deployment> context) {
    String ns = deployment.getMetadata().getNamespace();
    String name = deployment.getMetadata().getName();
    MDC.put("namespace", ns);
    MDC.put("deployment", name);
    MDC.put("job", Names.job(name));
    Planner.desiredVersion(deployment).ifPresent(v -> MDC.put("version", v));
    try {
      Observation o = observe(deployment);
      Plan plan = planner.plan(o);
      ResourceID id = ResourceID.fromResource(deployment);
      try {
        if (createsJob(plan)) {
          synchronized (creating) {
            o = beforeCreate(o, databasesOf(plan));
            plan = planner.plan(o);
            if (createsJob(plan) && needsDirectRead(o)) {
              // only when the cache cannot know, and never for a Deployment that waits
              o = readDirectly(o);
              plan = planner.plan(o);
            }
            plan = runRecovering(id, plan, o);
          }
        } else {
          plan = runRecovering(id, plan, o);
        }
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 && e.getCode() != 404) {
          throw e;
        }
        // Someone changed an object between our read and our conditional write (409), or deleted
        // it (404: e.g. the failed Job, to retry at once): look again, nothing is wrong.
        LOG.debug("write target changed or gone, looking again: {}", e.getMessage());
        return UpdateControl.<Deployment>noUpdate().rescheduleAfter(Timing.SHORT);
      }
      record(deployment, plan, o, context);
      if (plan.next() instanceof Plan.Next.Blocked b) {
        // A user error: reported by an Event (once), looked at again with a growing delay.
        int attempt = blocked.merge(id, 1, Integer::sum);
        if (attempt == 1) {
          LOG.warn("blocked: {}", b.problem());
        }
        return UpdateControl.<Deployment>noUpdate().rescheduleAfter(Timing.blockedRetry(attempt));
      }
      blocked.remove(id);
      if (plan.next() instanceof Plan.Next.After a) {
        // a dry run changes nothing, so a plan that waits for its own write (a deleted Job gone)
        // would look again every second
        java.time.Duration delay =
            dryRun && a.delay().compareTo(Timing.WHILE_RUNNING) < 0
                ? Timing.WHILE_RUNNING
                : a.delay();
        return UpdateControl.<Deployment>noUpdate().rescheduleAfter(delay);
      }
      return UpdateControl.noUpdate();
    } finally {
      MDC.remove("namespace");
      MDC.remove("deployment");
      MDC.remove("job");
      MDC.remove("version");
    }
  }

  /**
   * The observation a Job is created from: the cached one (the skeleton keeps what the Job copies,
   * and the record this process wrote last counts until the cache shows it) with the Jobs on the
   * same databases, from the cache and from this process's own recent creates, and the cached
   * migration pods on them.
   */
  private Observation beforeCreate(Observation o, List<String> databases) {
    if (databases.isEmpty()) {
      return o;
    }
    return o.withDatabaseJobs(databaseJobs(databases, o.now()))
        .withDatabasePods(pods.list(p -> Database.sharesOne(databases, p)).toList());
  }

  /**
   * Whether the cache cannot answer what must be known before a create: no record is cached (the
   * cache holds only the operator's own ConfigMaps, and a foreign one with the record's name must
   * be found before a migration runs: afterwards the result could not be recorded); or this is a
   * dry run, which creates nothing, so no AlreadyExists would tell it of a foreign Job (a legacy
   * Helm hook, a hand-made one); or the name was found taken by a Job not the Deployment's own
   * before ({@link #takenJobNames}), which is read until it is gone. Otherwise nothing is read: a
   * foreign Job answers the create with AlreadyExists, and is then read and planned with ({@link
   * #runRecovering}). ADR 0016.
   */
  private boolean needsDirectRead(Observation o) {
    return o.statusConfigMap().isEmpty() || dryRun || takenJobNames.contains(jobKey(o));
  }

  /** {@code namespace/job name} of the Deployment's migration Job. */
  private static String jobKey(Observation o) {
    return o.deployment().getMetadata().getNamespace()
        + "/"
        + Names.job(o.deployment().getMetadata().getName());
  }

  /**
   * The observation with the record (when none is cached) and, in a dry run or when its name was
   * found taken before, the Job read.
   */
  private Observation readDirectly(Observation o) {
    String ns = o.deployment().getMetadata().getNamespace();
    String name = o.deployment().getMetadata().getName();
    if (o.statusConfigMap().isEmpty()) {
      o =
          o.withStatusConfigMap(
              Optional.ofNullable(
                  client.configMaps().inNamespace(ns).withName(Names.statusConfigMap(name)).get()));
    }
    if (dryRun || takenJobNames.contains(jobKey(o))) {
      Job directJob = client.batch().v1().jobs().inNamespace(ns).withName(Names.job(name)).get();
      if (directJob != null) {
        o = o.withJob(directJob);
      } else {
        takenJobNames.remove(jobKey(o));
      }
    }
    return o;
  }

  /** The databases the plan's Job would migrate, as the Job names them (none: no Job). */
  private static List<String> databasesOf(Plan plan) {
    return plan.steps().stream()
        .filter(s -> s instanceof Step.CreateJob)
        .map(s -> Database.keysOf(((Step.CreateJob) s).job()))
        .findFirst()
        .orElse(List.of());
  }

  /**
   * The Jobs on the databases: the cached ones, and those this process created that it lacks. The
   * created ones are taken first: one the cache shows by the time it is listed is then counted
   * twice, never not at all.
   */
  private List<Job> databaseJobs(List<String> databases, Instant now) {
    List<Job> remembered = own.jobsCreated(j -> Database.sharesOne(databases, j), now);
    List<Job> found = new java.util.ArrayList<>();
    jobs.list(j -> Database.sharesOne(databases, j)).forEach(found::add);
    // a Job the cache shows is taken as the cache has it (newer: its status), else as created
    java.util.Set<String> cached = new java.util.HashSet<>();
    found.forEach(j -> cached.add(OwnWrites.key(j)));
    remembered.stream().filter(j -> !cached.contains(OwnWrites.key(j))).forEach(found::add);
    return found;
  }

  /**
   * Runs the plan; when a name is taken by an object the cache does not hold (a legacy Helm hook, a
   * hand-made Job, someone else's ConfigMap), decides again with it instead of trying to create
   * again and again; when the API server refuses the Job (SPEC section 10), decides again with its
   * answer. Returns the plan that was run last.
   */
  private Plan runRecovering(ResourceID id, Plan plan, Observation o) {
    try {
      run(id, plan, o);
      return plan;
    } catch (StepRunner.NameTaken taken) {
      if (taken.existing instanceof Job job && !MigrationJob.isTrusted(job, o.deployment())) {
        // SPEC rule 7: from now on read that name directly, not create again and again
        takenJobNames.add(jobKey(o));
      }
      Observation again =
          taken.existing instanceof Job job
              ? o.withJob(job)
              : o.withStatusConfigMap((ConfigMap) taken.existing);
      Plan replanned = planner.plan(again);
      run(id, replanned, again);
      return replanned;
    } catch (StepRunner.Rejected rejected) {
      // SPEC section 10: the refusal is an observation; the planner reports it (condition, Event)
      // and blocks, so the create is tried again with backoff
      Observation again = o.withJobRejection(Optional.of(rejected.rejection));
      Plan replanned = planner.plan(again);
      run(id, replanned, again);
      return replanned;
    }
  }

  /**
   * Runs the plan; one log line for the transition when it wrote anything (WARN when it records a
   * failure), else DEBUG. A dry run logs, once per change, what it would have written.
   */
  private void run(ResourceID id, Plan plan, Observation o) {
    if (dryRun) {
      List<String> would = steps.describe(plan, o);
      String text = plan.summary() + ": " + String.join("; ", would);
      if (would.isEmpty()) {
        wouldWrite.remove(id);
        LOG.debug("{} ({})", plan.summary(), plan.state());
      } else if (!text.equals(wouldWrite.put(id, text))) {
        LOG.info(
            "dry run: {} ({}): would {}",
            plan.summary(),
            plan.state(),
            String.join("; would ", would));
      }
      return;
    }
    List<String> done = steps.run(plan, o);
    if (done.isEmpty()) {
      LOG.debug("{} ({})", plan.summary(), plan.state());
    } else if (plan.steps().stream()
        .anyMatch(s -> s instanceof Step.SetConditions c && c.summary().endsWith("=True"))) {
      LOG.warn("{}: {}", plan.summary(), String.join(", ", done));
    } else {
      LOG.info("{}: {}", plan.summary(), String.join(", ", done));
    }
  }

  /** Where the Deployment stands, for the metrics; forgets Deployments that are gone. */
  private void record(
      Deployment deployment, Plan plan, Observation o, Context<Deployment> context) {
    Instant now = o.now();
    metrics.standing(deployment, plan.state(), Timing.nextJobAt(plan, deployment, o.job()));
    // Deployments that are gone lose their series; looked for at most once a minute, so that a
    // reconcile does not cost a walk over every Deployment.
    if (!now.isBefore(nextMetricsSweep)) {
      nextMetricsSweep = now.plus(METRICS_SWEEP);
      for (ResourceID id : metrics.known()) {
        if (context.getPrimaryCache().get(id).isEmpty()) {
          metrics.forget(id);
        }
      }
      for (ResourceID id : List.copyOf(wouldWrite.keySet())) {
        if (context.getPrimaryCache().get(id).isEmpty()) {
          wouldWrite.remove(id);
        }
      }
    }
  }

  Observation observe(Deployment deployment) {
    String ns = deployment.getMetadata().getNamespace();
    String name = deployment.getMetadata().getName();
    Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
    Optional<Job> job = jobs.get(new ResourceID(Names.job(name), ns));
    if (job.isPresent()) {
      own.jobCached(ns, Names.job(name));
    }
    // the record as the cache has it, or the one this process wrote since, if the cache is behind
    String record = Names.statusConfigMap(name);
    Optional<ConfigMap> status =
        own.record(
            ns,
            record,
            configMaps.get(new ResourceID(record, ns)),
            deployment.getMetadata().getUid(),
            now);
    Observation o = new Observation(deployment, status, job, now);
    if (job.isPresent()) {
      // its pods: a running migrate whose pod is not Ready (a mesh proxy) is never interrupted
      o = o.withDatabasePods(pods.list(p -> Database.isPodOf(p, job.get())).toList());
    }
    // A failed Job of ours whose pod has not been read yet: read it now, before anything can
    // delete it (the evidence is then kept on the Job, in the condition and in the Event).
    if (evidence.enabled()
        && job.isPresent()
        && MigrationJob.isFailed(job.get())
        && MigrationJob.isTrusted(job.get(), deployment)
        && MigrationJob.annotation(job.get(), Keys.FAILURE_EVIDENCE) == null) {
      o = o.withFailureEvidence(evidence.read(job.get()));
    }
    // A Job of ours the Job controller has looked at and made no pod for, a few seconds after its
    // creation: ask the Job controller's Events why (Pod Security admission, a quota, a missing
    // ServiceAccount). A Job it has not looked at yet (no start time) is not asked about: no pod
    // of it was refused, and on the change path that list would be one request more per change.
    if (job.isPresent()
        && MigrationJob.isTrusted(job.get(), deployment)
        && MigrationJob.madeNoPod(job.get())
        && Timestamps.parse(job.get().getMetadata().getCreationTimestamp())
            .map(created -> !now.isBefore(created.plus(POD_CREATE_GRACE)))
            .orElse(false)) {
      o = o.withPodCreateFailure(evidence.podCreateFailure(job.get()));
    }
    return o;
  }

  private static boolean createsJob(Plan plan) {
    return plan.steps().stream().anyMatch(s -> s instanceof Step.CreateJob);
  }
}
