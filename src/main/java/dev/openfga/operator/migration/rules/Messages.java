package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Timestamps;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Every text the decision writes, in one place: the plans' summaries, the problems a blocked
 * Deployment is reported with, the messages of its Events ({@link EventReason} names them) and of
 * its {@code MigrationFailed} condition, and why a Job is deleted. The rules only choose which one.
 */
public final class Messages {
  private Messages() {}

  // ---- rule 1: nothing to do ----

  static final String NOT_DISCOVERED = "not an OpenFGA Deployment (discovery labels missing)";
  static final String NOT_OPTED_IN = "migration not enabled for this Deployment";

  // ---- the annotations, the container and its image (rules 2 and 3) ----

  /** A problem with one annotation's value; long values are cut. */
  static String annotation(String key, String value, String problem) {
    String shown = value == null ? "" : value;
    if (shown.length() > 64) {
      shown = shown.substring(0, 61) + "...";
    }
    return "annotation " + key + "=\"" + shown + "\" " + problem;
  }

  /** Whether {@code problem} ({@link #annotation}) is about the annotation {@code key}. */
  static boolean concerns(String problem, String key) {
    return problem.startsWith("annotation " + key + "=");
  }

  /** A problem, said of the Deployment {@code ref} ({@code namespace/name}). */
  static String inDeployment(String ref, String problem) {
    return "deployment " + ref + ": " + problem;
  }

  static String containerNotFound(String name, String ref, List<String> containers) {
    return "container \""
        + name
        + "\" not found in deployment "
        + ref
        + " (containers: "
        + String.join(", ", containers)
        + "); set annotation "
        + Keys.CONTAINER_NAME;
  }

  static String invalidServiceAccount(String ref) {
    return inDeployment(
        ref,
        "annotation " + Keys.MIGRATION_SERVICE_ACCOUNT + " is not a valid ServiceAccount name");
  }

  static String invalidSecret(String ref) {
    return inDeployment(ref, "annotation " + Keys.MIGRATION_SECRET + " is not a valid Secret name");
  }

  static String unparseableImage(String image, String container, String ref) {
    return "image \""
        + image
        + "\" of container "
        + container
        + " in deployment "
        + ref
        + " cannot be parsed";
  }

  static String sidecarsNotFound(List<String> missing, String ref, List<String> containers) {
    return "annotation "
        + Keys.MIGRATION_SIDECARS
        + " names container(s) "
        + String.join(", ", missing)
        + " not found in deployment "
        + ref
        + " (containers: "
        + String.join(", ", containers)
        + ")";
  }

  // ---- rule 4: engines without a Job ----

  /** What a sqlite Deployment lacks; with {@code scaleTo}, a first install scaled once fixed. */
  static String sqliteMigrationMissing(String ref, Optional<Integer> scaleTo) {
    return "datastore engine sqlite in deployment "
        + ref
        + ": OpenFGA does not migrate a sqlite file by itself and a Job cannot reach the"
        + " pod's file; add an initContainer with the OpenFGA image, args [\"migrate\"],"
        + " the same OPENFGA_DATASTORE_* environment and the same volume mount"
        + scaleTo
            .map(
                replicas ->
                    "; the Deployment is then scaled to "
                        + replicas
                        + " replicas ("
                        + Keys.DESIRED_REPLICAS
                        + ") unless its replicas are changed before")
            .orElse("");
  }

  static String sqliteSkipped(String initContainer) {
    return "Datastore engine sqlite: the database file lives in the pod, so no migration Job"
        + " is run; the initContainer "
        + initContainer
        + " runs openfga migrate on it";
  }

  static String noMigration(String engine) {
    return "datastore engine " + engine + ": no migration";
  }

  static String scaleWaitsForController(String engine) {
    return noMigration(engine) + "; the first-install scale waits for the Deployment controller";
  }

  // ---- re-runs and rollbacks (SPEC section 9) ----

  static String futureRequest(String request) {
    return annotation(
        Keys.MIGRATE_REQUESTED_AT,
        request,
        "is in the future; the migration runs again only once that time has come");
  }

  static String downgrade(String version, String recorded) {
    return "Version "
        + version
        + " is older than the recorded version "
        + recorded
        + ": no migration runs (an older openfga migrate changes nothing) and the schema"
        + " stays at "
        + recorded
        + "; OpenFGA "
        + version
        + " runs on the newer schema";
  }

  static String downgraded(String version, String recorded) {
    return "rolled back to " + version + "; the schema stays at " + recorded + " (no migration)";
  }

  // ---- rule 6: up to date ----

  static String upToDate(String version) {
    return "up to date at " + version;
  }

  static String lettingLeftoverFinish(String old) {
    return "up to date; letting the running Job for " + old + " finish";
  }

  static String leftoverJob(String old) {
    return "leftover Job for " + old;
  }

  static final String DELETING_LEFTOVER = "deleting leftover Job";

  static final String WAITING_FOR_DELETION = "waiting for Job deletion";

  // ---- rule 7: no Job yet ----

  static String waitingForRetryDeadline(Instant at) {
    return "waiting for the retry deadline " + Timestamps.format(at);
  }

  static String migrationNeeded(Optional<String> recorded, String version) {
    return "migration needed: recorded " + recorded.orElse("none") + ", desired " + version;
  }

  /** {@code MigrationStarted}: why this Job runs (a re-run, an upgrade, a first install). */
  static String started(
      String job, String version, Optional<String> rerun, Optional<String> recorded) {
    return "Created migration Job "
        + job
        + " for version "
        + version
        + rerun
            .map(r -> " (re-run requested at " + r + ")")
            .orElseGet(
                () ->
                    recorded.map(r -> " (recorded version " + r + ")").orElse(" (first install)"));
  }

  /** {@code JobRejected}: the condition's message and when the create is tried again. */
  static String rejectedEvent(String message, long maxMinutes) {
    return message + "; tried again with backoff, at most " + maxMinutes + " minutes apart";
  }

  // ---- SPEC section 9: one migration per database ----

  static String otherDeploymentsJob(String owner, String job, String version) {
    return owner + " (Job " + job + ", version " + version + ")";
  }

  static String deployment(String namespace, String name) {
    return "Deployment " + namespace + "/" + name;
  }

  static final String SOME_DEPLOYMENT = "a Deployment";

  static String migrationPod(String namespace, String name, String job) {
    return "migration pod " + namespace + "/" + name + (job.isEmpty() ? "" : " (Job " + job + ")");
  }

  /** Another namespace's object, for this namespace's users: its names are not theirs. */
  static String elsewhere(boolean pod) {
    return pod ? "a migration pod in another namespace" : "a migration in another namespace";
  }

  static String waitingEvent(String told, boolean pod, String version) {
    return "Waiting for "
        + told
        + (pod
            ? ", which migrates the same database and has not stopped; the migration to "
                + version
                + " starts when it has"
            : ", which migrates the same database; the migration to "
                + version
                + " starts when it has finished");
  }

  static String waiting(String who, boolean pod) {
    return "waiting for " + who + " on the same database" + (pod ? " to stop" : "");
  }

  // ---- rule 7: the Job there ----

  static final String LETTING_HOOK_FINISH =
      "letting the running legacy Helm hook Job finish before adopting it";
  static final String LEGACY_HOOK = "legacy Helm hook Job of the same release";
  static final String ADOPTING_HOOK = "adopting legacy Helm hook Job";

  static String hookAdopted(String job) {
    return "Deleted the legacy Helm hook migration Job "
        + job
        + "; the operator runs migrations from now on";
  }

  static String jobConflict(String namespace, String job, String deployment) {
    return "migration Job "
        + namespace
        + "/"
        + job
        + " exists but must be managed by openfga-operator and controlled by Deployment "
        + deployment
        + "; delete or rename it to let the migration run";
  }

  static String lettingOldMigrationFinish(String old, String version) {
    return "letting the running migration to " + old + " finish before migrating to " + version;
  }

  static String otherVersion(String old, String version) {
    return "Job is for version " + old + ", desired " + version;
  }

  static String replacingJob(String old) {
    return "replacing Job for " + old;
  }

  static String rerunRequested(String request) {
    return "re-run requested at " + request;
  }

  static String replacingFinishedJob(String request) {
    return rerunRequested(request) + ": replacing the finished Job";
  }

  static String succeeded(String version, String job) {
    return "Database migrated to version " + version + " by Job " + job;
  }

  static String succeededSummary(String version) {
    return "migration to " + version + " succeeded";
  }

  static String podNotCreated(String job, String reason) {
    return "the pod of migration Job " + job + " cannot be created: " + reason;
  }

  static String podNotCreatedEvent(String problem) {
    return problem + "; the Job fails after its active deadline and is retried after the cooldown";
  }

  static String inProgress(String version) {
    return "migration to " + version + " in progress";
  }

  // ---- rule 10: failure ----

  static String failedSummary(String version, Instant nextJobAt) {
    return "migration to " + version + " failed; retrying after " + Timestamps.format(nextJobAt);
  }

  static String retentionOver(String version) {
    return "retained failed Job for " + version + " expired";
  }

  /** {@code MigrationFailed}: the Job, its version, why, when the next one runs, the evidence. */
  static String failedEvent(
      String job, String version, List<String> why, Instant nextJobAt, Optional<String> evidence) {
    return "Migration Job "
        + job
        + " failed for version "
        + version
        + (why.isEmpty() ? "" : " (" + String.join(": ", why) + ")")
        + "; retrying after "
        + Timestamps.format(nextJobAt)
        + evidence.map(e -> ". " + e).orElse("");
  }

  // ---- the MigrationFailed condition (SPEC section 2) ----

  /** What a {@link Step.SetConditions} step does, for logs. */
  static String condition(boolean status) {
    return Keys.CONDITION_TYPE + "=" + (status ? "True" : "False");
  }

  public static final String CONDITION_SUCCEEDED = "Migration completed successfully.";

  public static String conditionFailed(String version) {
    return "Database migration failed for version " + version + ". Check migration job logs.";
  }

  /** Between the Job and the API server's answer in the {@code JobRejected} message. */
  static final String REJECTED_BY = " was rejected by the API server: ";

  /** The {@code JobRejected} message: the Job, the version, the API server's answer. */
  public static String conditionRejected(String job, String version, String rejection) {
    return "Migration Job " + job + " for version " + version + REJECTED_BY + rejection;
  }

  /** The {@code JobCreated} message. */
  public static String conditionCreated(String job, String version) {
    return "Migration Job " + job + " for version " + version + " was created.";
  }

  // ---- the record (rule 5) ----

  static String recordNotManaged(String ref) {
    return "migration status ConfigMap "
        + ref
        + " exists but is not managed by openfga-operator; rename or delete it";
  }

  static String recordControlledElsewhere(
      String ref, String kind, String owner, String deployment) {
    return "migration status ConfigMap "
        + ref
        + " is controlled by "
        + kind
        + " "
        + owner
        + ", not by Deployment "
        + deployment;
  }

  // ---- the API server's answers ----

  /** A refused create's answer that said nothing. */
  static final String NO_ANSWER = "no message";

  /** A refused create's answer (masked, cut) with its HTTP status code. */
  static String rejection(String answer, int code) {
    return answer + " (HTTP " + code + ")";
  }

  static String droppedPodReplacementPolicy(String asked, String namespace, String job) {
    return "the API server dropped podReplacementPolicy: "
        + asked
        + " from Job "
        + namespace
        + "/"
        + job
        + ": it needs Kubernetes 1.29 or later (or the JobPodReplacementPolicy feature gate);"
        + " until then a drained migration pod can be replaced while it still runs, and two"
        + " openfga migrate may run at once";
  }
}
