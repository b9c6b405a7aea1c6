package dev.openfga.operator.migration.rules;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Everything one decision looks at: the Deployment, the object named like its status ConfigMap, the
 * object named like its migration Job, the time (UTC, whole seconds), — only for a failed Job whose
 * evidence is not yet recorded on it — what its pod left behind, — only for a running Job without
 * pods — why the Job controller cannot create its pod, — only before a Job is created — the
 * operator's Jobs and migration pods on the same database (label {@link Keys#DATABASE_LABEL}; a pod
 * can outlive its Job), — while the Job exists — its migration pods (is its migrate running,
 * whatever its ready count says?), and — only right after the API server refused to create the Job,
 * or in the status view from a {@code JobRejected} condition — its answer (credentials masked, see
 * {@link MigrationJob#rejection}). Read-only.
 */
public record Observation(
    Deployment deployment,
    Optional<ConfigMap> statusConfigMap,
    Optional<Job> job,
    Instant now,
    Optional<String> failureEvidence,
    Optional<String> podCreateFailure,
    List<Job> databaseJobs,
    List<Pod> databasePods,
    Optional<String> jobRejection) {

  public Observation(
      Deployment deployment, Optional<ConfigMap> statusConfigMap, Optional<Job> job, Instant now) {
    this(
        deployment,
        statusConfigMap,
        job,
        now,
        Optional.empty(),
        Optional.empty(),
        List.of(),
        List.of(),
        Optional.empty());
  }

  /** The operator's Jobs that migrate the database the new Job would migrate. */
  public Observation withDatabaseJobs(List<Job> jobs) {
    return new Observation(
        deployment,
        statusConfigMap,
        job,
        now,
        failureEvidence,
        podCreateFailure,
        List.copyOf(jobs),
        databasePods,
        jobRejection);
  }

  /**
   * Before a Job is created: the migration pods on the database the new Job would migrate, their
   * Jobs there or not; while the Job exists: its own migration pods.
   */
  public Observation withDatabasePods(List<Pod> pods) {
    return new Observation(
        deployment,
        statusConfigMap,
        job,
        now,
        failureEvidence,
        podCreateFailure,
        databaseJobs,
        List.copyOf(pods),
        jobRejection);
  }

  public Observation withFailureEvidence(String evidence) {
    return new Observation(
        deployment,
        statusConfigMap,
        job,
        now,
        Optional.of(evidence),
        podCreateFailure,
        databaseJobs,
        databasePods,
        jobRejection);
  }

  /** The message of the Job controller's newest {@code FailedCreate} Event for the Job. */
  public Observation withPodCreateFailure(Optional<String> message) {
    return new Observation(
        deployment,
        statusConfigMap,
        job,
        now,
        failureEvidence,
        message,
        databaseJobs,
        databasePods,
        jobRejection);
  }

  public Observation withDeployment(Deployment full) {
    return new Observation(
        full,
        statusConfigMap,
        job,
        now,
        failureEvidence,
        podCreateFailure,
        databaseJobs,
        databasePods,
        jobRejection);
  }

  public Observation withStatusConfigMap(ConfigMap configMap) {
    return withStatusConfigMap(Optional.of(configMap));
  }

  /** The record as read directly from the API ({@code empty}: there is none). */
  public Observation withStatusConfigMap(Optional<ConfigMap> configMap) {
    return new Observation(
        deployment,
        configMap,
        job,
        now,
        failureEvidence,
        podCreateFailure,
        databaseJobs,
        databasePods,
        jobRejection);
  }

  public Observation withJob(Job found) {
    return new Observation(
        deployment,
        statusConfigMap,
        Optional.of(found),
        now,
        failureEvidence,
        podCreateFailure,
        databaseJobs,
        databasePods,
        jobRejection);
  }

  /**
   * The API server's answer to the Job create it just refused (a quota, an admission webhook or
   * policy, an invalid object), credentials masked; empty: none.
   */
  public Observation withJobRejection(Optional<String> rejection) {
    return new Observation(
        deployment,
        statusConfigMap,
        job,
        now,
        failureEvidence,
        podCreateFailure,
        databaseJobs,
        databasePods,
        rejection);
  }
}
