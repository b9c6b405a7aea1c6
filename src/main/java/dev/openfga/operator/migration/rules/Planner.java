package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Plan.Next;
import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.ClearRetryAfter;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.DeleteJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.PatchJob;
import dev.openfga.operator.migration.rules.Step.RepairStatusOwner;
import dev.openfga.operator.migration.rules.Step.Scale;
import dev.openfga.operator.migration.rules.Step.SetConditions;
import dev.openfga.operator.migration.rules.Step.SetRetryAfter;
import dev.openfga.operator.migration.rules.Step.WriteStatus;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The decision: a pure function of an {@link Observation} (and the operator's {@link Policy}) to a
 * {@link Plan}. SPEC section 4, rule by rule; no client, no clock, no I/O.
 */
public final class Planner {
  private final Policy policy;

  public Planner(Policy policy) {
    this.policy = Objects.requireNonNull(policy);
  }

  /**
   * The plan to carry out: {@link #decide} without the Events about a lasting state that the
   * Deployment lists as sent, and with the write that keeps that list true ({@link Reported}).
   */
  public Plan plan(Observation o) {
    Plan plan = decide(o);
    return plan.state() == State.IGNORED ? plan : Reported.settle(o.deployment(), plan);
  }

  /**
   * The decision with every Event it stands for, as if none had been sent before: what the status
   * view reads (a blocked Deployment's reason is its Event's).
   */
  public Plan decide(Observation o) {
    Deployment d = o.deployment();
    // Rule 1: discovery labels and the exact opt-in, re-checked for every request.
    if (!DeploymentSettings.isDiscovered(d)) {
      return Plan.ignored("not an OpenFGA Deployment (discovery labels missing)");
    }
    DeploymentSettings s = DeploymentSettings.of(d);
    if (!s.optedIn()) {
      return Plan.ignored("migration not enabled for this Deployment");
    }
    List<Step> steps = new ArrayList<>();
    for (String problem : s.problems()) {
      steps.add(new Emit(EventReason.InvalidConfiguration, problem, "invalid/" + problem));
    }
    String ref = ref(d);

    // Rule 2: the container to migrate with.
    if (s.containerName() == null) {
      return blocked(steps, "deployment " + ref + ": " + s.problems().get(0));
    }
    List<Container> containers = containers(d);
    Optional<Container> container =
        containers.stream().filter(c -> s.containerName().equals(c.getName())).findFirst();
    if (container.isEmpty()) {
      String problem =
          "container \""
              + s.containerName()
              + "\" not found in deployment "
              + ref
              + " (containers: "
              + containers.stream().map(Container::getName).collect(Collectors.joining(", "))
              + "); set annotation "
              + Keys.CONTAINER_NAME;
      steps.add(new Emit(EventReason.ContainerNotFound, problem, "container/" + problem));
      return blocked(steps, problem);
    }
    Container c = container.get();

    // A migration ServiceAccount that was asked for but cannot be used: never fall back to the
    // runtime one silently.
    String saValue = annotation(d, Keys.MIGRATION_SERVICE_ACCOUNT);
    if (saValue != null && !saValue.isBlank() && s.serviceAccount().isEmpty()) {
      return blocked(
          steps,
          "deployment "
              + ref
              + ": annotation "
              + Keys.MIGRATION_SERVICE_ACCOUNT
              + " is not a valid ServiceAccount name");
    }

    // Migration credentials that were asked for but cannot be used: never fall back to the
    // runtime ones silently.
    String secretValue = annotation(d, Keys.MIGRATION_SECRET);
    if (secretValue != null && !secretValue.isBlank() && s.migrationSecret().isEmpty()) {
      return blocked(
          steps,
          "deployment "
              + ref
              + ": annotation "
              + Keys.MIGRATION_SECRET
              + " is not a valid Secret name");
    }

    // Database proxies that were asked for but cannot be told from the value: a Job without them
    // could not reach the database, so never run one silently without them (SPEC section 10).
    Optional<String> sidecarsProblem =
        s.problems().stream()
            .filter(p -> p.startsWith("annotation " + Keys.MIGRATION_SIDECARS + "="))
            .findFirst();
    if (sidecarsProblem.isPresent()) {
      return blocked(steps, "deployment " + ref + ": " + sidecarsProblem.get());
    }

    // Rule 3: desired version from the image.
    Optional<String> desired = ImageVersion.of(c.getImage());
    if (desired.isEmpty()) {
      String problem =
          "image \""
              + c.getImage()
              + "\" of container "
              + c.getName()
              + " in deployment "
              + ref
              + " cannot be parsed";
      steps.add(new Emit(EventReason.InvalidConfiguration, problem, "image/" + problem));
      return blocked(steps, problem);
    }
    String version = desired.get();

    // Rule 4: engines that need no Job
    String engine = MigrationJob.literalEngine(c).orElse("");
    if (MigrationJob.needsNoJob(c)) {
      // a switch away from a failing database ends its failure
      FailedCondition.cleared(d, o.now())
          .ifPresent(
              cleared -> steps.add(new SetConditions(cleared, Keys.CONDITION_TYPE + "=False")));
      if (hasRetryAfter(d)) {
        steps.add(new ClearRetryAfter());
      }
      // no migration, so no version is ever recorded; a record here is a first install's mark
      // (or a record from before a switch to this engine), or someone else's ConfigMap
      boolean marked =
          o.statusConfigMap()
              .map(cm -> StatusRecord.read(cm, d))
              .filter(StatusRecord.Reading.Recorded.class::isInstance)
              .map(r -> ((StatusRecord.Reading.Recorded) r).restorePending())
              .orElse(false);
      Long generation = d.getMetadata().getGeneration();
      boolean unchanged = generation == null || generation <= 1;
      if (engine.equals("sqlite")) {
        Optional<Container> init = sqliteMigration(d);
        if (init.isEmpty()) {
          // a first install blocked before its scale: marked, so that the fix still scales it
          boolean firstInstall =
              needsRestore(d, s) && (marked || (unchanged && o.statusConfigMap().isEmpty()));
          String problem =
              "datastore engine sqlite in deployment "
                  + ref
                  + ": OpenFGA does not migrate a sqlite file by itself and a Job cannot reach the"
                  + " pod's file; add an initContainer with the OpenFGA image, args [\"migrate\"],"
                  + " the same OPENFGA_DATASTORE_* environment and the same volume mount"
                  + (firstInstall
                      ? "; the Deployment is then scaled to "
                          + s.desiredReplicas().get()
                          + " replicas ("
                          + Keys.DESIRED_REPLICAS
                          + ") unless its replicas are changed before"
                      : "");
          if (firstInstall && !marked) {
            steps.add(new Step.MarkFirstInstall());
          }
          steps.add(new Emit(EventReason.SqliteMigrationMissing, problem, "sqlite/missing"));
          return blocked(steps, problem);
        }
        steps.add(
            new Emit(
                EventReason.MigrationSkipped,
                "Datastore engine sqlite: the database file lives in the pod, so no migration Job"
                    + " is run; the initContainer "
                    + init.get().getName()
                    + " runs openfga migrate on it",
                "skipped/sqlite"));
      }
      if (unchanged) {
        // never changed since it was created: a first install
        restoreReplicas(d, s, steps);
        if (marked) {
          steps.add(new Step.ClearRestoreReplicas());
        }
      } else if (marked) {
        // a first install blocked (SqliteMigrationMissing) before its scale, fixed since
        if (!needsRestore(d, s)) {
          // scaled by someone, or nothing to restore: the first install is over
          steps.add(new Step.ClearRestoreReplicas());
        } else if (!observedByItsController(d)) {
          // the Deployment controller has not seen the change yet: its status write wakes this
          return new Plan(
              State.SKIPPED,
              "datastore engine "
                  + engine
                  + ": no migration; the first-install scale waits for the Deployment controller",
              steps,
              done());
        } else if (onlyNewPodTemplates(d)) {
          restoreReplicas(d, s, steps);
          steps.add(new Step.ClearRestoreReplicas());
        } else {
          // changed otherwise since (a scale and back, other spec fields): the replicas are theirs
          steps.add(new Step.ClearRestoreReplicas());
        }
      }
      return new Plan(
          State.SKIPPED, "datastore engine " + engine + ": no migration", steps, done());
    }

    // Database proxies the Job needs (SPEC section 9): without them migrate cannot connect.
    List<String> missing =
        MigrationJob.missingSidecars(d.getSpec().getTemplate().getSpec(), s.sidecars());
    if (!missing.isEmpty()) {
      String problem =
          "annotation "
              + Keys.MIGRATION_SIDECARS
              + " names container(s) "
              + String.join(", ", missing)
              + " not found in deployment "
              + ref
              + " (containers: "
              + containers.stream().map(Container::getName).collect(Collectors.joining(", "))
              + ")";
      steps.add(new Emit(EventReason.ContainerNotFound, problem, "sidecar/" + problem));
      return blocked(steps, problem);
    }

    // Rule 5: the recorded version, and collisions on the status ConfigMap's name.
    Optional<String> recorded = Optional.empty();
    Optional<String> handled = Optional.empty();
    boolean restorePending = false;
    if (o.statusConfigMap().isPresent()) {
      StatusRecord.Reading reading = StatusRecord.read(o.statusConfigMap().get(), d);
      if (reading instanceof StatusRecord.Reading.Collision collision) {
        steps.add(
            new Emit(
                EventReason.MigrationStatusConflict,
                collision.problem(),
                "status-conflict/"
                    + o.statusConfigMap().get().getMetadata().getUid()
                    + "/"
                    + collision.problem()));
        return blocked(steps, collision.problem());
      }
      StatusRecord.Reading.Recorded r = (StatusRecord.Reading.Recorded) reading;
      if (r.ownerNeedsRepair()) {
        steps.add(new RepairStatusOwner());
      }
      recorded = r.version();
      restorePending = r.restorePending();
      handled = r.handledRequest();
    }

    // SPEC section 9: a re-run request newer than the one last handled; one in the future would
    // hide every request before it once handled, so it waits until its time
    Optional<String> request = newRequest(s.requestedAt(), handled);
    Optional<Instant> futureRequest = Optional.empty();
    if (request.isPresent()
        && Timestamps.parse(request.get()).orElseThrow().isAfter(o.now().plus(Timing.CLOCK_SKEW))) {
      futureRequest = Timestamps.parse(request.get());
      String problem =
          DeploymentSettings.describe(
              Keys.MIGRATE_REQUESTED_AT,
              request.get(),
              "is in the future; the migration runs again only once that time has come");
      steps.add(new Emit(EventReason.InvalidConfiguration, problem, "invalid/" + problem));
      request = Optional.empty();
    }
    // SPEC section 9: a rollback to an older semantic version runs nothing; the request waits
    Optional<String> newer =
        recorded.filter(r -> ImageVersion.compare(version, r).map(cmp -> cmp < 0).orElse(false));
    if (newer.isPresent()) {
      return downgraded(o, s, version, newer.get(), restorePending, steps);
    }
    if (recorded.isPresent() && recorded.get().equals(version) && request.isEmpty()) {
      Plan plan = upToDate(o, s, version, restorePending, steps);
      if (futureRequest.isPresent() && plan.next() instanceof Next.Done) {
        // look again when the request's time has come
        Instant due = futureRequest.get().minus(Timing.CLOCK_SKEW);
        return new Plan(
            plan.state(), plan.summary(), plan.steps(), after(Timing.until(o.now(), due)));
      }
      return plan;
    }
    return migrationNeeded(o, s, c, version, recorded, handled, request, restorePending, steps);
  }

  /** The request, when it is newer than the handled one (or none was handled). */
  static Optional<String> newRequest(Optional<String> requested, Optional<String> handled) {
    if (requested.isEmpty()) {
      return Optional.empty();
    }
    Optional<Instant> at = Timestamps.parse(requested.get());
    Optional<Instant> done = handled.flatMap(Timestamps::parse);
    if (at.isEmpty() || (done.isPresent() && !at.get().isAfter(done.get()))) {
      return Optional.empty();
    }
    return requested;
  }

  /**
   * SPEC section 9: the Deployment runs an older version than the recorded one. An older {@code
   * openfga migrate} changes nothing, so no Job runs and the record keeps the newer version; apart
   * from the Warning, it is up to date (leftover Jobs, a failure, the first-install restore).
   */
  private Plan downgraded(
      Observation o,
      DeploymentSettings s,
      String version,
      String recorded,
      boolean restorePending,
      List<Step> steps) {
    steps.add(
        new Emit(
            EventReason.MigrationDowngrade,
            "Version "
                + version
                + " is older than the recorded version "
                + recorded
                + ": no migration runs (an older openfga migrate changes nothing) and the schema"
                + " stays at "
                + recorded
                + "; OpenFGA "
                + version
                + " runs on the newer schema",
            "downgrade/" + recorded + "/" + version));
    Plan plan = upToDate(o, s, version, restorePending, steps);
    if (plan.state() != State.UP_TO_DATE) {
      return plan;
    }
    return new Plan(
        State.DOWNGRADED,
        "rolled back to " + version + "; the schema stays at " + recorded + " (no migration)",
        plan.steps(),
        plan.next());
  }

  /** Rule 6: the database is at the desired version. */
  private Plan upToDate(
      Observation o,
      DeploymentSettings s,
      String version,
      boolean restorePending,
      List<Step> steps) {
    Deployment d = o.deployment();
    Optional<Job> found = o.job().filter(j -> MigrationJob.isTrusted(j, d));
    if (found.isPresent()) {
      Job job = found.get();
      if (MigrationJob.isTerminating(job)) {
        return new Plan(State.UP_TO_DATE, "waiting for Job deletion", steps, after(Timing.SHORT));
      }
      if (MigrationJob.isFailed(job)) {
        return failed(o, s, job, steps);
      }
      if (!MigrationJob.isFor(job, version) || !MigrationJob.isComplete(job)) {
        if (running(job, o)) {
          return new Plan(
              State.UP_TO_DATE,
              "up to date; letting the running Job for "
                  + MigrationJob.describedVersion(job)
                  + " finish",
              steps,
              after(Timing.WHILE_RUNNING));
        }
        steps.add(new DeleteJob("leftover Job for " + MigrationJob.describedVersion(job)));
        return new Plan(State.UP_TO_DATE, "deleting leftover Job", steps, after(Timing.SHORT));
      }
      armSuccessTtl(job, steps);
    }
    FailedCondition.cleared(d, o.now())
        .ifPresent(c -> steps.add(new SetConditions(c, Keys.CONDITION_TYPE + "=False")));
    if (restorePending) {
      // a crash came between the first record and the scale: finish the first install
      restoreReplicas(d, s, steps);
      steps.add(new Step.ClearRestoreReplicas());
    }
    return new Plan(State.UP_TO_DATE, "up to date at " + version, steps, done());
  }

  /** Rule 7: the recorded version differs from the desired one. */
  private Plan migrationNeeded(
      Observation o,
      DeploymentSettings s,
      Container container,
      String version,
      Optional<String> recorded,
      Optional<String> handled,
      Optional<String> request,
      boolean restorePending,
      List<Step> steps) {
    Deployment d = o.deployment();
    Instant now = o.now();
    String jobName = Names.job(d.getMetadata().getName());
    if (o.job().isEmpty()) {
      if (s.retryAfter().isPresent() && now.isBefore(s.retryAfter().get())) {
        return new Plan(
            State.COOLDOWN,
            "waiting for the retry deadline " + Timestamps.format(s.retryAfter().get()),
            steps,
            after(Timing.until(now, s.retryAfter().get())));
      }
      Job job = MigrationJob.build(d, container, version, s, request, policy.jobSpec());
      // SPEC section 9: one migration per database at a time
      Optional<Job> other =
          Database.busyWith(
              Database.keysOf(job), d.getMetadata().getNamespace(), jobName, o.databaseJobs());
      if (other.isPresent()) {
        return waiting(d, steps, version, other.get());
      }
      // a pod can outlive its Job (deleted by someone else without waiting for it)
      Optional<Pod> pod =
          Database.busyPod(Database.keysOf(job), o.databasePods(), o.databaseJobs());
      if (pod.isPresent()) {
        return waitingForPod(d, steps, version, pod.get());
      }
      // SPEC section 10: the API server refused this very create just now
      if (o.jobRejection().isPresent()) {
        return jobRejected(d, jobName, version, o.jobRejection().get(), now, steps);
      }
      steps.add(new CreateJob(job, version));
      // a refusal before is over once the Job is there (after the create, never before it)
      FailedCondition.jobCreated(d, jobName, version, now)
          .ifPresent(c -> steps.add(new SetConditions(c, Keys.CONDITION_TYPE + "=False")));
      if (hasRetryAfter(d)) {
        steps.add(new Step.ClearRetryAfter());
      }
      steps.add(
          new Emit(
              EventReason.MigrationStarted,
              "Created migration Job "
                  + jobName
                  + " for version "
                  + version
                  + (request.isPresent() && recorded.equals(Optional.of(version))
                      ? " (re-run requested at " + request.get() + ")"
                      : recorded
                          .map(r -> " (recorded version " + r + ")")
                          .orElse(" (first install)")),
              "started/" + version + "/" + Timestamps.format(now)));
      return new Plan(
          State.MIGRATING,
          "migration needed: recorded " + recorded.orElse("none") + ", desired " + version,
          steps,
          after(Timing.AFTER_CREATE));
    }

    Job job = o.job().get();
    if (MigrationJob.isTerminating(job)) {
      if (MigrationJob.isTrusted(job, d)
          && MigrationJob.isFailed(job)
          && !MigrationJob.hasCondition(job, "Failed")) {
        // deleted (someone retries at once) before its Warning went out at Failed: now, or never;
        // the next Job comes once it is gone and the retry-after has passed
        steps.add(
            failedEvent(
                job,
                s.retryAfter().filter(t -> t.isAfter(o.now())).orElse(o.now()),
                evidence(job, o)));
      }
      return new Plan(State.MIGRATING, "waiting for Job deletion", steps, after(Timing.SHORT));
    }
    if (!MigrationJob.isTrusted(job, d)) {
      if (MigrationJob.isLegacyHelmHook(job, d)) {
        if (running(job, o)) {
          // ADR 0003: a running openfga migrate is never interrupted, not even Helm's own
          return new Plan(
              State.MIGRATING,
              "letting the running legacy Helm hook Job finish before adopting it",
              steps,
              after(Timing.WHILE_RUNNING));
        }
        steps.add(new DeleteJob("legacy Helm hook Job of the same release"));
        steps.add(
            new Emit(
                EventReason.LegacyHookJobAdopted,
                "Deleted the legacy Helm hook migration Job "
                    + job.getMetadata().getName()
                    + "; the operator runs migrations from now on",
                "legacy/" + job.getMetadata().getUid()));
        return new Plan(
            State.MIGRATING, "adopting legacy Helm hook Job", steps, after(Timing.SHORT));
      }
      String problem =
          "migration Job "
              + d.getMetadata().getNamespace()
              + "/"
              + job.getMetadata().getName()
              + " exists but must be managed by openfga-operator and controlled by Deployment "
              + d.getMetadata().getName()
              + "; delete or rename it to let the migration run";
      // per Job in the way: another one later (the same name) is news again
      steps.add(
          new Emit(
              EventReason.MigrationJobConflict,
              problem,
              "job-conflict/" + job.getMetadata().getUid() + "/" + problem));
      return blocked(steps, problem);
    }
    // A TTL on a Job without retention metadata (armed after success, or by an older operator)
    // could delete it before its result is recorded: remove it first (not on a Job about to be
    // deleted anyway).
    Integer ttl = job.getSpec() == null ? null : job.getSpec().getTtlSecondsAfterFinished();
    boolean unrecordedTtl = ttl != null && MigrationJob.annotation(job, Keys.RETAIN_UNTIL) == null;
    if (MigrationJob.isFailed(job)) {
      if (unrecordedTtl) {
        steps.add(new PatchJob(null, Map.of()));
      }
      return failed(o, s, job, steps);
    }
    if (!MigrationJob.isFor(job, version)) {
      String old = MigrationJob.describedVersion(job);
      if (running(job, o)) {
        return new Plan(
            State.MIGRATING,
            "letting the running migration to " + old + " finish before migrating to " + version,
            steps,
            after(Timing.WHILE_RUNNING));
      }
      steps.add(new DeleteJob("Job is for version " + old + ", desired " + version));
      return new Plan(State.MIGRATING, "replacing Job for " + old, steps, after(Timing.SHORT));
    }
    if (unrecordedTtl) {
      steps.add(new PatchJob(null, Map.of()));
      ttl = null;
    }
    if (MigrationJob.isComplete(job)) {
      Optional<String> served = MigrationJob.request(job);
      boolean recordedAlready =
          recorded.equals(Optional.of(version)) && (served.isEmpty() || served.equals(handled));
      if (request.isPresent() && !request.equals(served) && recordedAlready) {
        // this Job's run is recorded; the re-run asked for after it needs a Job of its own
        steps.add(new DeleteJob("re-run requested at " + request.get()));
        return new Plan(
            State.MIGRATING,
            "re-run requested at " + request.get() + ": replacing the finished Job",
            steps,
            after(Timing.SHORT));
      }
      FailedCondition.cleared(d, now)
          .ifPresent(c -> steps.add(new SetConditions(c, Keys.CONDITION_TYPE + "=False")));
      Map<String, String> data = StatusRecord.data(version, now, job.getMetadata().getName());
      served.or(() -> handled).ifPresent(r -> data.put(Keys.DATA_HANDLED_REQUEST, r));
      // Rule 11: only a first install (nothing recorded before) restores the replicas
      // (or a first install whose scale had not been made when the image changed again)
      boolean restore = (recorded.isEmpty() || restorePending) && needsRestore(d, s);
      if (restore) {
        data.put(Keys.DATA_RESTORE_REPLICAS, "true");
      }
      steps.add(new WriteStatus(data));
      if (!Objects.equals(ttl, policy.ttlSecondsAfterFinished())) {
        steps.add(new PatchJob(policy.ttlSecondsAfterFinished(), Map.of()));
      }
      if (restore) {
        restoreReplicas(d, s, steps);
        steps.add(new Step.ClearRestoreReplicas());
      }
      steps.add(
          new Emit(
              EventReason.MigrationSucceeded,
              "Database migrated to version " + version + " by Job " + job.getMetadata().getName(),
              "succeeded/" + job.getMetadata().getUid()));
      return new Plan(State.UP_TO_DATE, "migration to " + version + " succeeded", steps, done());
    }
    // the Job is there: a refusal of an earlier create is over (the create plan clears it too,
    // unless a write after the create failed)
    FailedCondition.jobCreated(d, jobName, version, now)
        .ifPresent(c -> steps.add(new SetConditions(c, Keys.CONDITION_TYPE + "=False")));
    if (hasRetryAfter(d)) {
      steps.add(new ClearRetryAfter());
    }
    if (o.podCreateFailure().isPresent() && MigrationJob.hasNoPod(job)) {
      // the Job stays (a freed quota lets it run); its active deadline fails it, then rule 10
      String problem =
          "the pod of migration Job "
              + jobName
              + " cannot be created: "
              + o.podCreateFailure().get();
      steps.add(
          new Emit(
              EventReason.MigrationPodNotCreated,
              problem
                  + "; the Job fails after its active deadline and is retried after the cooldown",
              "pod-not-created/" + job.getMetadata().getUid() + "/" + o.podCreateFailure().get()));
      return new Plan(State.BLOCKED, problem, steps, after(Timing.WHILE_RUNNING));
    }
    return new Plan(
        State.MIGRATING,
        "migration to " + version + " in progress",
        steps,
        after(Timing.WHILE_RUNNING));
  }

  /**
   * SPEC section 10: the API server refused to create the Job (a quota, an admission webhook or
   * policy, an invalid object). {@code MigrationFailed=True} with its answer, a Warning once per
   * refusal, and the create is tried again with backoff ({@link Timing#blockedRetry}, at most
   * {@link Timing#BLOCKED_MAX} apart). A 409 (the name is taken, rule 7), throttling, a server
   * error or no answer never gets here: those are retried as they are.
   */
  private static Plan jobRejected(
      Deployment d,
      String jobName,
      String version,
      String rejection,
      Instant now,
      List<Step> steps) {
    String message = Keys.rejectedMessage(jobName, version, rejection);
    FailedCondition.rejected(d, jobName, version, rejection, now)
        .ifPresent(c -> steps.add(new SetConditions(c, Keys.CONDITION_TYPE + "=True")));
    // Once per refusal: keyed by the answer and by when the condition turned True (kept while it
    // stays True), so the same answer at the next try is no news, and the same answer again after
    // a Job was created in between (the condition False meanwhile) is.
    String since =
        FailedCondition.current(d)
            .filter(c -> "True".equals(c.getStatus()))
            .map(io.fabric8.kubernetes.api.model.apps.DeploymentCondition::getLastTransitionTime)
            .orElse(Timestamps.format(now));
    steps.add(
        new Emit(
            EventReason.JobRejected,
            message
                + "; tried again with backoff, at most "
                + Timing.BLOCKED_MAX.toMinutes()
                + " minutes apart",
            "rejected/" + since + "/" + rejection));
    return blocked(steps, message);
  }

  /** SPEC section 9: a migration pod on the same database has not stopped, its Job maybe gone. */
  private static Plan waitingForPod(Deployment d, List<Step> steps, String version, Pod pod) {
    String job = Database.jobName(pod);
    String who =
        "migration pod "
            + pod.getMetadata().getNamespace()
            + "/"
            + pod.getMetadata().getName()
            + (job.isEmpty() ? "" : " (Job " + job + ")");
    return waitingFor(d, steps, version, pod.getMetadata(), who, true);
  }

  /** SPEC section 9: another Deployment's Job migrates the same database; wait for it. */
  private static Plan waiting(Deployment d, List<Step> steps, String version, Job other) {
    String owner =
        Ownership.controller(other)
            .map(r -> "Deployment " + other.getMetadata().getNamespace() + "/" + r.getName())
            .orElse("a Deployment");
    String who =
        owner
            + " (Job "
            + other.getMetadata().getName()
            + ", version "
            + MigrationJob.describedVersion(other)
            + ")";
    return waitingFor(d, steps, version, other.getMetadata(), who, false);
  }

  /**
   * WAITING for {@code who} (a Job, or a pod that has not stopped) on the same database, with one
   * {@code MigrationWaiting} Event per object waited for.
   */
  private static Plan waitingFor(
      Deployment d,
      List<Step> steps,
      String version,
      io.fabric8.kubernetes.api.model.ObjectMeta whose,
      String who,
      boolean pod) {
    // the Event is read by this namespace's users: another namespace's names are not theirs
    String told =
        d.getMetadata().getNamespace().equals(whose.getNamespace())
            ? who
            : pod ? "a migration pod in another namespace" : "a migration in another namespace";
    steps.add(
        new Emit(
            EventReason.MigrationWaiting,
            "Waiting for "
                + told
                + (pod
                    ? ", which migrates the same database and has not stopped; the migration to "
                        + version
                        + " starts when it has"
                    : ", which migrates the same database; the migration to "
                        + version
                        + " starts when it has finished"),
            // a Job whose create got no answer is remembered without a uid
            "waiting/"
                + (whose.getUid() != null
                    ? whose.getUid()
                    : whose.getNamespace() + "/" + whose.getName())));
    return new Plan(
        State.WAITING,
        "waiting for " + who + " on the same database" + (pod ? " to stop" : ""),
        steps,
        after(Timing.WHILE_WAITING));
  }

  /** Rule 10: a failed Job is evidence; keep it until the retry deadline, then replace it once. */
  private Plan failed(Observation o, DeploymentSettings s, Job job, List<Step> steps) {
    Deployment d = o.deployment();
    Instant now = o.now();
    String failedVersion = MigrationJob.describedVersion(job);
    // What the failed pod left behind: recorded on the Job once, read from the pod before that.
    Optional<String> recordedEvidence =
        Optional.ofNullable(MigrationJob.annotation(job, Keys.FAILURE_EVIDENCE));
    Optional<String> evidence = evidence(job, o);
    FailedCondition.failed(d, failedVersion, evidence, now)
        .ifPresent(c -> steps.add(new SetConditions(c, Keys.CONDITION_TYPE + "=True")));
    // The Event comes right after the condition: the evidence first, then the bookkeeping.
    int eventAt = steps.size();

    Optional<Instant> recordedRetry =
        Optional.ofNullable(MigrationJob.annotation(job, Keys.RETRY_AFTER))
            .flatMap(Timestamps::parse);
    Optional<Instant> recordedRetain =
        Optional.ofNullable(MigrationJob.annotation(job, Keys.RETAIN_UNTIL))
            .flatMap(Timestamps::parse);
    // every time written counts from the Job's own failure, not from when it was looked at
    Instant failedAt = Timing.failedAt(job).orElse(now);
    Instant retryAfter =
        recordedRetry.orElseGet(
            () -> Timing.retryAfter(s.retryAfter(), failedAt, policy.retryCooldown()));
    // max(existing future value, ...): a later deadline set on the Deployment after the Job
    // recorded its own (a person holding the retries) wins
    if (s.retryAfter().isPresent() && s.retryAfter().get().isAfter(retryAfter)) {
      retryAfter = s.retryAfter().get();
    }
    boolean finished = MigrationJob.hasCondition(job, "Failed");
    Optional<Instant> finishedAt =
        finished ? Timing.finishedAt(job).or(() -> Optional.of(now)) : Optional.empty();
    Instant retainUntil =
        Timing.retainUntil(finishedAt, policy.ttlSecondsAfterFinished(), retryAfter);
    if (recordedRetain.isPresent() && recordedRetain.get().isAfter(retainUntil)) {
      retainUntil = recordedRetain.get();
    }

    if (!s.retryAfter().equals(Optional.of(retryAfter))) {
      steps.add(new SetRetryAfter(retryAfter));
    }
    Map<String, String> retention = new LinkedHashMap<>();
    retention.put(Keys.RETRY_AFTER, Timestamps.format(retryAfter));
    retention.put(Keys.RETAIN_UNTIL, Timestamps.format(retainUntil));
    // Kept on the Job once the Job has Failed: at FailureTarget the pod may still be ending (no
    // exit code yet), so the evidence is read again, and recorded, when Failed arrives.
    if (recordedEvidence.isEmpty() && evidence.isPresent() && finished) {
      retention.put(Keys.FAILURE_EVIDENCE, evidence.get());
    }
    boolean recordedSame =
        Objects.equals(
                MigrationJob.annotation(job, Keys.RETRY_AFTER), retention.get(Keys.RETRY_AFTER))
            && Objects.equals(
                MigrationJob.annotation(job, Keys.RETAIN_UNTIL), retention.get(Keys.RETAIN_UNTIL));
    Integer ttl = job.getSpec() == null ? null : job.getSpec().getTtlSecondsAfterFinished();
    if (!recordedSame || ttl == null || retention.containsKey(Keys.FAILURE_EVIDENCE)) {
      int jobTtl =
          Timing.failedJobTtl(
              finishedAt, retainUntil, retryAfter, now, policy.ttlSecondsAfterFinished());
      steps.add(new PatchJob(jobTtl, retention));
    }
    // when the next Job is really created: the failed one is kept until retainUntil
    Instant nextJobAt =
        Timing.retainUntil(
            finishedAt.or(() -> Optional.of(failedAt)),
            policy.ttlSecondsAfterFinished(),
            retryAfter);
    if (retainUntil.isAfter(nextJobAt)) {
      nextJobAt = retainUntil;
    }
    // once the Job has Failed (its pod stopped: the exit code, and the retention counted from
    // then), not at FailureTarget, unless Failed is long in coming (a Job deleted before it gets
    // its Event from the terminating path); sent once per Job
    if (finished || !now.isBefore(failedAt.plus(Timing.FAILED_EVENT_WAIT))) {
      steps.add(eventAt, failedEvent(job, nextJobAt, evidence));
    }
    String summary =
        "migration to " + failedVersion + " failed; retrying after " + Timestamps.format(nextJobAt);
    if (!finished) {
      return new Plan(State.FAILED, summary, steps, after(Timing.WHILE_RUNNING));
    }
    if (now.isBefore(retainUntil)) {
      return new Plan(State.FAILED, summary, steps, after(Timing.until(now, retainUntil)));
    }
    steps.add(new DeleteJob("retained failed Job for " + failedVersion + " expired"));
    return new Plan(State.FAILED, summary, steps, after(Timing.SHORT));
  }

  /**
   * ADR 0003: the Job's {@code openfga migrate} is running, never to be interrupted: its pod is
   * ready (the Job's count), or running in the migration-pod cache (a mesh proxy that is not ready
   * keeps the pod from Ready while migrate runs; only pods labelled with a database key are cached,
   * so a Job without one, or a Helm hook's, is judged by its ready count alone).
   */
  private static boolean running(Job job, Observation o) {
    // a Complete Job's migrate has exited, whatever a pod on a lost node still shows
    return !MigrationJob.isComplete(job)
        && (MigrationJob.isRunning(job) || Database.hasRunningPod(job, o.databasePods()));
  }

  /** What the failed pod left behind: recorded on the Job once, read from the pod before that. */
  private static Optional<String> evidence(Job job, Observation o) {
    return Optional.ofNullable(MigrationJob.annotation(job, Keys.FAILURE_EVIDENCE))
        .or(() -> o.failureEvidence());
  }

  /** The Warning of a failed Job, once per Job (its uid). */
  private static Emit failedEvent(Job job, Instant nextJobAt, Optional<String> evidence) {
    String why =
        MigrationJob.condition(job, "Failed")
            .or(() -> MigrationJob.condition(job, "FailureTarget"))
            .map(c -> Stream.of(c.getReason(), c.getMessage()).filter(Objects::nonNull).toList())
            .filter(parts -> !parts.isEmpty())
            .map(parts -> " (" + String.join(": ", parts) + ")")
            .orElse("");
    return new Emit(
        EventReason.MigrationFailed,
        "Migration Job "
            + job.getMetadata().getName()
            + " failed for version "
            + MigrationJob.describedVersion(job)
            + why
            + "; retrying after "
            + Timestamps.format(nextJobAt)
            + evidence.map(e -> ". " + e).orElse(""),
        "failed/" + job.getMetadata().getUid());
  }

  private void armSuccessTtl(Job job, List<Step> steps) {
    Integer ttl = job.getSpec() == null ? null : job.getSpec().getTtlSecondsAfterFinished();
    if (!Objects.equals(ttl, policy.ttlSecondsAfterFinished())) {
      steps.add(new PatchJob(policy.ttlSecondsAfterFinished(), Map.of()));
    }
  }

  /**
   * Rule 11: a first install scales from 0 to the desired replicas; a non-zero count is never
   * changed, and a later scale to 0 (maintenance, an autoscaler) is a person's decision.
   */
  private static void restoreReplicas(Deployment d, DeploymentSettings s, List<Step> steps) {
    if (needsRestore(d, s)) {
      steps.add(new Scale(s.desiredReplicas().get()));
    }
  }

  private static boolean needsRestore(Deployment d, DeploymentSettings s) {
    Integer replicas = d.getSpec() == null ? null : d.getSpec().getReplicas();
    return s.desiredReplicas().isPresent()
        && s.desiredReplicas().get() > 0
        && replicas != null
        && replicas == 0;
  }

  /**
   * Whether the Deployment controller has seen the Deployment's latest spec ({@code
   * status.observedGeneration}): only then does its revision annotation count every pod template.
   */
  private static boolean observedByItsController(Deployment d) {
    Long generation = d.getMetadata().getGeneration();
    Long observed = d.getStatus() == null ? null : d.getStatus().getObservedGeneration();
    return generation != null && observed != null && observed >= generation;
  }

  /**
   * Whether every change of the Deployment's spec since its creation made a new pod template: the
   * Deployment controller's revision ({@code deployment.kubernetes.io/revision}, one more for each
   * new template) equals the generation (one more for each change of the spec). A scale, to and
   * fro, or any other change of the spec moves only the generation; two template changes the
   * controller saw as one, or a paused rollout, leave the revision behind too (the safe side: no
   * scale).
   */
  private static boolean onlyNewPodTemplates(Deployment d) {
    var annotations = d.getMetadata().getAnnotations();
    String revision = annotations == null ? null : annotations.get(Keys.DEPLOYMENT_REVISION);
    Long generation = d.getMetadata().getGeneration();
    if (revision == null || generation == null) {
      return false;
    }
    try {
      return Long.parseLong(revision.trim()) == generation;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /**
   * The initContainer that runs {@code openfga migrate} on a sqlite file before the server starts:
   * an OpenFGA image (repository {@code .../openfga}) with {@code migrate} as its first argument.
   */
  static Optional<Container> sqliteMigration(Deployment d) {
    var pod =
        d.getSpec() == null || d.getSpec().getTemplate() == null
            ? null
            : d.getSpec().getTemplate().getSpec();
    if (pod == null || pod.getInitContainers() == null) {
      return Optional.empty();
    }
    return pod.getInitContainers().stream()
        .filter(i -> i.getArgs() != null && !i.getArgs().isEmpty())
        .filter(i -> "migrate".equals(i.getArgs().get(0)))
        .filter(i -> isOpenFgaImage(i.getImage()))
        .findFirst();
  }

  private static boolean isOpenFgaImage(String image) {
    if (image == null) {
      return false;
    }
    String repository = image.split("@", 2)[0];
    int slash = repository.lastIndexOf('/');
    String last = repository.substring(slash + 1);
    int colon = last.indexOf(':');
    return (colon < 0 ? last : last.substring(0, colon)).equals("openfga");
  }

  /** The version the Deployment runs (rules 2 and 3), when it can be told. */
  public static Optional<String> desiredVersion(Deployment d) {
    String name = DeploymentSettings.of(d).containerName();
    if (name == null) {
      return Optional.empty();
    }
    return containers(d).stream()
        .filter(c -> name.equals(c.getName()))
        .findFirst()
        .flatMap(c -> ImageVersion.of(c.getImage()));
  }

  private static List<Container> containers(Deployment d) {
    if (d.getSpec() == null
        || d.getSpec().getTemplate() == null
        || d.getSpec().getTemplate().getSpec() == null
        || d.getSpec().getTemplate().getSpec().getContainers() == null) {
      return List.of();
    }
    return d.getSpec().getTemplate().getSpec().getContainers();
  }

  private static Plan blocked(List<Step> steps, String problem) {
    return new Plan(State.BLOCKED, problem, steps, new Next.Blocked(problem));
  }

  private static Next done() {
    return new Next.Done();
  }

  private static Next after(java.time.Duration delay) {
    return new Next.After(delay);
  }

  private static String annotation(Deployment d, String key) {
    var annotations = d.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }

  /** The annotation is there, parseable or not: cleared once a Job runs. */
  private static boolean hasRetryAfter(Deployment d) {
    var annotations = d.getMetadata().getAnnotations();
    return annotations != null && annotations.containsKey(Keys.RETRY_AFTER);
  }

  static String ref(Deployment d) {
    return d.getMetadata().getNamespace() + "/" + d.getMetadata().getName();
  }
}
