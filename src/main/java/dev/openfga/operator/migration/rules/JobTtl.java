package dev.openfga.operator.migration.rules;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The Job's {@code spec.ttlSecondsAfterFinished}: none at creation, armed once the result is
 * recorded, a safety net after a failure (rule 10), and removed where no retention is recorded.
 */
final class JobTtl {
  private JobTtl() {}

  static Integer of(Job job) {
    return job.getSpec() == null ? null : job.getSpec().getTtlSecondsAfterFinished();
  }

  /**
   * A TTL on a Job without retention metadata (armed after success, or by an older operator) could
   * delete it before its result is recorded: removed first.
   */
  static boolean unrecorded(Job job) {
    return of(job) != null && MigrationJob.annotation(job, Keys.RETAIN_UNTIL) == null;
  }

  /** The step that removes an {@link #unrecorded} TTL, if there is one. */
  static List<Step> unrecordedRemoved(Job job) {
    return unrecorded(job) ? List.of(new Step.PatchJob(null, Map.of())) : List.of();
  }

  /** The step that arms the TTL of a Job whose result is recorded, unless it is so already. */
  static List<Step> armed(Integer current, Policy policy) {
    return Objects.equals(current, policy.ttlSecondsAfterFinished())
        ? List.of()
        : List.of(new Step.PatchJob(policy.ttlSecondsAfterFinished(), Map.of()));
  }
}
