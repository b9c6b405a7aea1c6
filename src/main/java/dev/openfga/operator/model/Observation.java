package dev.openfga.operator.model;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.Optional;

/**
 * Everything one decision looks at: the Deployment, the object named like its status ConfigMap, the
 * object named like its migration Job, the time (UTC, whole seconds), — only for a failed Job whose
 * evidence is not yet recorded on it — what its pod left behind, and — only for a running Job
 * without pods — why the Job controller cannot create its pod. Read-only.
 */
public record Observation(
    Deployment deployment,
    Optional<ConfigMap> statusConfigMap,
    Optional<Job> job,
    Instant now,
    Optional<String> failureEvidence,
    Optional<String> podCreateFailure) {

  public Observation(
      Deployment deployment, Optional<ConfigMap> statusConfigMap, Optional<Job> job, Instant now) {
    this(deployment, statusConfigMap, job, now, Optional.empty(), Optional.empty());
  }

  public Observation withFailureEvidence(String evidence) {
    return new Observation(
        deployment, statusConfigMap, job, now, Optional.of(evidence), podCreateFailure);
  }

  /** The message of the Job controller's newest {@code FailedCreate} Event for the Job. */
  public Observation withPodCreateFailure(Optional<String> message) {
    return new Observation(deployment, statusConfigMap, job, now, failureEvidence, message);
  }

  public Observation withDeployment(Deployment full) {
    return new Observation(full, statusConfigMap, job, now, failureEvidence, podCreateFailure);
  }

  public Observation withStatusConfigMap(ConfigMap configMap) {
    return withStatusConfigMap(Optional.of(configMap));
  }

  /** The record as read directly from the API ({@code empty}: there is none). */
  public Observation withStatusConfigMap(Optional<ConfigMap> configMap) {
    return new Observation(deployment, configMap, job, now, failureEvidence, podCreateFailure);
  }

  public Observation withJob(Job found) {
    return new Observation(
        deployment, statusConfigMap, Optional.of(found), now, failureEvidence, podCreateFailure);
  }
}
