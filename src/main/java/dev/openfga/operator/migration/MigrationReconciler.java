package dev.openfga.operator.migration;

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
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The JOSDK reconciler, one pass per reconcile: observe once everything the decision needs (the
 * caches, what the last run found, and — when the Deployment wants a Job, which is decided from
 * that observation — the Jobs and migration pods on its database and what the caches cannot know) →
 * decide once ({@link Planner}, pure) → act ({@link StepRunner}, conditional writes) → tell the
 * framework when to look again. What a run finds (a name taken, a create refused) is an observation
 * of the next pass, soon after ({@link Findings}): nothing is decided again on the spot.
 */
public final class MigrationReconciler implements Reconciler<Deployment> {
  private static final Logger LOG = LoggerFactory.getLogger(MigrationReconciler.class);

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

  /** What a run found that the caches cannot show, for the next reconcile to observe. */
  private final Findings findings = new Findings();

  /** The watch events that only show this process's own writes, which wake nothing. */
  private final Echoes echoes = new Echoes();

  private final boolean dryRun;

  /** Dry run: what was last logged as would-be writes, per Deployment (logged once). */
  private final Map<ResourceID, String> wouldWrite = new ConcurrentHashMap<>();

  /** The caches besides the Deployments'. */
  private final MigrationCaches caches = new MigrationCaches();

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
    return caches.prepare(context, echoes);
  }

  /** Starts the Job, record and migration-pod informers now ({@link MigrationCaches#start}). */
  public void startOwnedInformers() {
    caches.start();
  }

  @Override
  public UpdateControl<Deployment> reconcile(Deployment deployment, Context<Deployment> context) {
    MDC.put("namespace", deployment.getMetadata().getNamespace());
    MDC.put("deployment", deployment.getMetadata().getName());
    MDC.put("job", Names.job(deployment.getMetadata().getName()));
    Planner.desiredVersion(deployment).ifPresent(v -> MDC.put("version", v));
    ResourceID id = ResourceID.fromResource(deployment);
    try {
      Observation o = observe(deployment);
      Optional<List<String>> wanted = planner.wantedJobDatabases(o);
      Plan plan;
      if (wanted.isPresent()) {
        synchronized (creating) {
          o = beforeCreate(o, wanted.get());
          plan = planner.plan(o);
          run(id, plan, o);
        }
      } else {
        plan = planner.plan(o);
        run(id, plan, o);
      }
      record(deployment, plan, o, context);
      return next(id, plan);
    } catch (StepRunner.NameTaken taken) {
      // SPEC rule 7: the name is read directly at the next look, not created again and again
      findings.taken(taken);
      return UpdateControl.<Deployment>noUpdate().rescheduleAfter(Timing.SHORT);
    } catch (StepRunner.Rejected rejected) {
      // SPEC section 10: the refusal is an observation; the next decision reports it (condition,
      // Event) and blocks, so the create is tried again with backoff
      findings.rejected(id, rejected.rejection);
      return UpdateControl.<Deployment>noUpdate().rescheduleAfter(Timing.SHORT);
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409 && e.getCode() != 404) {
        throw e;
      }
      // Someone changed an object between our read and our conditional write (409), or deleted
      // it (404: e.g. the failed Job, to retry at once): look again, nothing is wrong.
      LOG.debug("write target changed or gone, looking again: {}", e.getMessage());
      return UpdateControl.<Deployment>noUpdate().rescheduleAfter(Timing.SHORT);
    } finally {
      MDC.remove("namespace");
      MDC.remove("deployment");
      MDC.remove("job");
      MDC.remove("version");
    }
  }

  /** When to look again, as the plan says. */
  private UpdateControl<Deployment> next(ResourceID id, Plan plan) {
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
  }

  /**
   * What a Job create needs observed besides the caches' Job and record ({@link
   * Planner#wantedJobDatabases}): the Jobs on the same databases, from the cache and from this
   * process's own recent creates, and the cached migration pods on them; then, if the Deployment
   * still creates its Job with them ({@link Planner#createsJob}), what the caches cannot know
   * ({@link #readDirectly}). Held under the creating lock with the decision and its run.
   */
  private Observation beforeCreate(Observation o, List<String> databases) {
    if (!databases.isEmpty()) {
      o =
          o.withDatabaseJobs(databaseJobs(databases, o.now()))
              .withDatabasePods(caches.pods(p -> Database.sharesOne(databases, p)).toList());
    }
    return planner.createsJob(o) ? readDirectly(o) : o;
  }

  /**
   * Before a create, what the caches cannot know (ADR 0016): the record, when none is cached (the
   * cache holds only the operator's own ConfigMaps, and a foreign one with the record's name must
   * be found before a migration runs: afterwards the result could not be recorded); the Job name,
   * in a dry run (which creates nothing, so no AlreadyExists would tell it of a foreign Job: a
   * legacy Helm hook, a hand-made one) or when the name was found taken ({@link Findings}), until
   * that read finds none. Otherwise nothing is read: a foreign Job answers the create with
   * AlreadyExists, and is read at the next look.
   */
  private Observation readDirectly(Observation o) {
    String ns = o.deployment().getMetadata().getNamespace();
    String name = o.deployment().getMetadata().getName();
    if (o.statusConfigMap().isEmpty()) {
      o = o.withStatusConfigMap(readRecord(ns, name));
    }
    ResourceID job = new ResourceID(Names.job(name), ns);
    if (dryRun || findings.jobTaken(job)) {
      Job directJob = client.batch().v1().jobs().inNamespace(ns).withName(job.getName()).get();
      if (directJob != null) {
        o = o.withJob(directJob);
      } else {
        findings.jobKnown(job);
      }
    }
    return o;
  }

  /** The record read directly from the API (empty: there is none). */
  private Optional<ConfigMap> readRecord(String ns, String deployment) {
    ResourceID record = new ResourceID(Names.statusConfigMap(deployment), ns);
    Optional<ConfigMap> read =
        Optional.ofNullable(client.configMaps().inNamespace(ns).withName(record.getName()).get());
    if (read.isEmpty()) {
      findings.recordKnown(record);
    }
    return read;
  }

  /**
   * The Jobs on the databases: the cached ones, and those this process created that it lacks. The
   * created ones are taken first: one the cache shows by the time it is listed is then counted
   * twice, never not at all.
   */
  private List<Job> databaseJobs(List<String> databases, Instant now) {
    List<Job> remembered = own.jobsCreated(j -> Database.sharesOne(databases, j), now);
    List<Job> found = new java.util.ArrayList<>();
    caches.jobs(j -> Database.sharesOne(databases, j)).forEach(found::add);
    // a Job the cache shows is taken as the cache has it (newer: its status), else as created
    java.util.Set<String> cached = new java.util.HashSet<>();
    found.forEach(j -> cached.add(OwnWrites.key(j)));
    remembered.stream().filter(j -> !cached.contains(OwnWrites.key(j))).forEach(found::add);
    return found;
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
          findings.forget(id);
        }
      }
      for (ResourceID id : List.copyOf(wouldWrite.keySet())) {
        if (context.getPrimaryCache().get(id).isEmpty()) {
          wouldWrite.remove(id);
        }
      }
    }
  }

  /**
   * What the decision needs, but for the reads before a create ({@link #beforeCreate}): the caches'
   * Job and record (or the record this process wrote since, if the cache is behind), the time, what
   * the last run found ({@link Findings}: a record name taken is read directly, a refused create
   * observed once), and what a Job there needs read ({@link #aboutTheJob}).
   */
  Observation observe(Deployment deployment) {
    String ns = deployment.getMetadata().getNamespace();
    String name = deployment.getMetadata().getName();
    Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
    ResourceID jobId = new ResourceID(Names.job(name), ns);
    Optional<Job> job = caches.job(jobId);
    if (job.isPresent()) {
      own.jobCached(ns, jobId.getName());
      findings.jobKnown(jobId);
    }
    // the record as the cache has it, or the one this process wrote since, if the cache is behind
    ResourceID recordId = new ResourceID(Names.statusConfigMap(name), ns);
    Optional<ConfigMap> status =
        own.record(
            ns,
            recordId.getName(),
            caches.record(recordId),
            deployment.getMetadata().getUid(),
            now);
    if (status.isPresent()) {
      findings.recordKnown(recordId);
    } else if (findings.recordTaken(recordId)) {
      // SPEC rule 5: someone else's ConfigMap holds the name (a create found it taken)
      status = readRecord(ns, name);
    }
    Observation o =
        new Observation(deployment, status, job, now)
            .withJobRejection(findings.takeRejection(ResourceID.fromResource(deployment)));
    return job.isPresent() ? aboutTheJob(o, job.get()) : o;
  }

  /**
   * What the Job needs read besides itself: its migration pods (a running migrate whose pod is not
   * Ready, behind a mesh proxy, is never interrupted); for a failed Job of ours whose evidence is
   * not recorded yet, what its pod left behind (read now, before anything can delete it; then kept
   * on the Job, in the condition and in the Event); for a Job of ours the Job controller made no
   * pod for, why.
   */
  private Observation aboutTheJob(Observation o, Job job) {
    Deployment deployment = o.deployment();
    o = o.withDatabasePods(caches.pods(p -> Database.isPodOf(p, job)).toList());
    boolean ours = MigrationJob.isTrusted(job, deployment);
    if (evidence.enabled()
        && ours
        && MigrationJob.isFailed(job)
        && MigrationJob.annotation(job, Keys.FAILURE_EVIDENCE) == null) {
      o = o.withFailureEvidence(evidence.read(job));
    }
    Instant now = o.now();
    // A Job of ours the Job controller has looked at and made no pod for, a few seconds after its
    // creation: ask the Job controller's Events why (Pod Security admission, a quota, a missing
    // ServiceAccount). A Job it has not looked at yet (no start time) is not asked about: no pod
    // of it was refused, and on the change path that list would be one request more per change.
    if (ours
        && MigrationJob.madeNoPod(job)
        && Timestamps.parse(job.getMetadata().getCreationTimestamp())
            .map(created -> !now.isBefore(created.plus(POD_CREATE_GRACE)))
            .orElse(false)) {
      o = o.withPodCreateFailure(evidence.podCreateFailure(job));
    }
    return o;
  }
}
