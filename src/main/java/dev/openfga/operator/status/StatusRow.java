package dev.openfga.operator.status;

import dev.openfga.operator.migration.rules.Plan;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * One line of the status view: an opted-in Deployment as the operator's planner sees it.
 *
 * @param desiredVersion the version of the image of the migrated container; empty when it cannot be
 *     told (container missing, image unparseable)
 * @param migratedVersion the version recorded in the Deployment's own status ConfigMap
 * @param state what the planner concluded
 * @param stateText {@code state} for people: "up to date", "failed, retrying in 42s", ...
 * @param summary the planner's summary, in full
 * @param retryAt when the operator creates the next Job after a failure (FAILED and COOLDOWN only),
 *     as it recorded it on the objects; empty while only a lower bound, or nothing, is recorded
 * @param retryIn {@code retryAt} minus now, never negative
 */
public record StatusRow(
    String namespace,
    String deployment,
    Optional<String> desiredVersion,
    Optional<String> migratedVersion,
    Plan.State state,
    String stateText,
    String summary,
    Optional<Instant> retryAt,
    Optional<Duration> retryIn,
    Optional<JobInfo> job,
    Optional<EventInfo> lastEvent) {

  /**
   * The object named like the Deployment's migration Job.
   *
   * @param status terminating, failed, failing (FailureTarget only), complete, running or pending
   * @param version the version it migrates to, from its annotation or label
   * @param managed whether the operator owns it (managed-by label and controlled by the Deployment)
   */
  public record JobInfo(String name, String status, Optional<String> version, boolean managed) {}

  /**
   * The newest Event about the Deployment.
   *
   * @param time lastTimestamp, else eventTime, else firstTimestamp, else creationTimestamp
   * @param age now minus {@code time}, never negative
   */
  public record EventInfo(
      String type, String reason, String message, Optional<Instant> time, Optional<Duration> age) {}
}
