package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Timestamps;
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

  /** Ours is True with reason {@code JobRejected}: the last Job create was refused. */
  public static boolean isRejected(Deployment deployment) {
    return current(deployment).filter(FailedCondition::isRejected).isPresent();
  }

  private static boolean isRejected(DeploymentCondition c) {
    return "True".equals(c.getStatus()) && Keys.REASON_JOB_REJECTED.equals(c.getReason());
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
    String message = Messages.conditionFailed(version) + evidence.map(e -> " " + e).orElse("");
    return replace(deployment, "True", Keys.REASON_JOB_FAILED, message, now, false);
  }

  /**
   * The conditions with ours set to True for a Job create the API server refused (SPEC section 10),
   * with its answer, or empty when already so.
   */
  public static Optional<List<DeploymentCondition>> rejected(
      Deployment deployment, String job, String version, String rejection, Instant now) {
    return replace(
        deployment,
        "True",
        Keys.REASON_JOB_REJECTED,
        Messages.conditionRejected(job, version, rejection),
        now,
        false);
  }

  /**
   * The API server's answer of a True {@code JobRejected} condition (as {@link #rejected} was given
   * it), or empty when the condition says something else.
   */
  public static Optional<String> rejection(Deployment deployment) {
    return current(deployment)
        .filter(FailedCondition::isRejected)
        .map(DeploymentCondition::getMessage)
        .filter(m -> m.contains(Messages.REJECTED_BY))
        .map(m -> m.substring(m.indexOf(Messages.REJECTED_BY) + Messages.REJECTED_BY.length()));
  }

  /**
   * The conditions with a True {@code JobRejected} set to False, reason {@code JobCreated}: a Job
   * is there now. Empty when ours says something else (a failure stays until a success).
   */
  public static Optional<List<DeploymentCondition>> jobCreated(
      Deployment deployment, String job, String version, Instant now) {
    if (!isRejected(deployment)) {
      return Optional.empty();
    }
    return replace(
        deployment,
        "False",
        Keys.REASON_JOB_CREATED,
        Messages.conditionCreated(job, version),
        now,
        true);
  }

  /** The conditions with ours cleared, or empty when absent or already cleared. */
  public static Optional<List<DeploymentCondition>> cleared(Deployment deployment, Instant now) {
    return replace(
        deployment, "False", Keys.REASON_SUCCEEDED, Messages.CONDITION_SUCCEEDED, now, true);
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
