package dev.openfga.operator.model;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.apps.DeploymentConditionBuilder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The {@code MigrationFailed} condition on the Deployment. The operator owns this one entry of
 * {@code status.conditions}; every other entry (the Deployment controller's) is kept as it is.
 */
public final class FailedCondition {
  private FailedCondition() {}

  public static Optional<DeploymentCondition> current(Deployment deployment) {
    if (deployment.getStatus() == null || deployment.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return deployment.getStatus().getConditions().stream()
        .filter(c -> Keys.CONDITION_TYPE.equals(c.getType()))
        .findFirst();
  }

  public static boolean isTrue(Deployment deployment) {
    return current(deployment).filter(c -> "True".equals(c.getStatus())).isPresent();
  }

  /** The conditions with ours set to True for the version, or empty when already so. */
  public static Optional<List<DeploymentCondition>> failed(
      Deployment deployment, String version, Instant now) {
    return failed(deployment, version, Optional.empty(), now);
  }

  /**
   * The same, with what the failed pod left behind (exit code, last log lines) after upstream's
   * message.
   */
  public static Optional<List<DeploymentCondition>> failed(
      Deployment deployment, String version, Optional<String> evidence, Instant now) {
    String message = Keys.failedMessage(version) + evidence.map(e -> " " + e).orElse("");
    return replace(deployment, "True", Keys.REASON_JOB_FAILED, message, now, false);
  }

  /** The conditions with ours cleared, or empty when absent or already cleared. */
  public static Optional<List<DeploymentCondition>> cleared(Deployment deployment, Instant now) {
    return replace(deployment, "False", Keys.REASON_SUCCEEDED, Keys.MESSAGE_SUCCEEDED, now, true);
  }

  private static Optional<List<DeploymentCondition>> replace(
      Deployment deployment,
      String status,
      String reason,
      String message,
      Instant now,
      boolean onlyIfPresent) {
    Optional<DeploymentCondition> existing = current(deployment);
    if (existing.isEmpty() && onlyIfPresent) {
      return Optional.empty();
    }
    if (existing.isPresent()
        && status.equals(existing.get().getStatus())
        && reason.equals(existing.get().getReason())
        && message.equals(existing.get().getMessage())) {
      return Optional.empty();
    }
    String time = Timestamps.format(now);
    DeploymentCondition ours =
        new DeploymentConditionBuilder()
            .withType(Keys.CONDITION_TYPE)
            .withStatus(status)
            .withReason(reason)
            .withMessage(message)
            .withLastUpdateTime(time)
            .withLastTransitionTime(
                existing.isPresent() && status.equals(existing.get().getStatus())
                    ? existing.get().getLastTransitionTime()
                    : time)
            .build();
    List<DeploymentCondition> result = new ArrayList<>();
    boolean placed = false;
    var all = deployment.getStatus() == null ? null : deployment.getStatus().getConditions();
    for (DeploymentCondition c : all == null ? List.<DeploymentCondition>of() : all) {
      if (Keys.CONDITION_TYPE.equals(c.getType())) {
        if (!placed) {
          result.add(ours);
          placed = true;
        }
      } else {
        result.add(new DeploymentConditionBuilder(c).build());
      }
    }
    if (!placed) {
      result.add(ours);
    }
    return Optional.of(List.copyOf(result));
  }
}
