package dev.openfga.operator.migration.rules;

import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One write the operator decided to make. Steps run in the plan's order; every write is conditional
 * on the resourceVersion observed (or returned by the plan's previous write to the same object),
 * and the first one that fails stops the plan. Steps act on the observed Deployment, Job and status
 * ConfigMap.
 */
public sealed interface Step {

  /** Replace the Deployment's status conditions (ours changed, every other one kept). */
  record SetConditions(List<DeploymentCondition> conditions, String summary) implements Step {
    /** The conditions, ours ({@code MigrationFailed}) set to True or False. */
    static SetConditions to(boolean status, List<DeploymentCondition> conditions) {
      return new SetConditions(conditions, Messages.condition(status));
    }
  }

  /** Create the status ConfigMap, or update the existing one (data, labels, owner). */
  record WriteStatus(Map<String, String> data) implements Step {}

  /** Point the status ConfigMap's owner at the recreated Deployment; data untouched. */
  record RepairStatusOwner() implements Step {}

  record CreateJob(Job job, String version) implements Step {}

  /** Foreground delete of the observed Job with UID and resourceVersion preconditions. */
  record DeleteJob(String why) implements Step {}

  /**
   * Patch a Job the operator owns: its TTL ({@code null} removes it) and annotations (a {@code
   * null} value removes the key). The only change ever made to an existing Job.
   */
  record PatchJob(Integer ttlSecondsAfterFinished, Map<String, String> annotations)
      implements Step {}

  record SetRetryAfter(Instant at) implements Step {}

  record ClearRetryAfter() implements Step {}

  /** Scale the Deployment from 0 (only from 0) to the given replicas. */
  record Scale(int replicas) implements Step {}

  /**
   * Create the record with only the first-install mark ({@code restoreReplicas: "true"}, no
   * version): a sqlite Deployment blocked at its first install, so that the fix still scales it.
   */
  record MarkFirstInstall() implements Step {}

  /** Remove the record's first-install mark ({@code restoreReplicas}): the install is done. */
  record ClearRestoreReplicas() implements Step {}

  /**
   * Record on the Deployment ({@link Keys#REPORTED_EVENTS}) which Events about its lasting state
   * have been sent: these ids, less those of this plan's Events that could not be sent. The last
   * step of a plan, only when the set differs from the one recorded.
   */
  record MarkReported(List<String> ids) implements Step {}

  /**
   * A Kubernetes Event on the Deployment. The key tells transitions apart: the same key is emitted
   * once.
   */
  record Emit(EventReason reason, String message, String key) implements Step {}
}
