package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Step.Emit;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * SPEC section 10: the API server refused the last create of the Job (a quota, an admission webhook
 * or policy, an invalid object; {@link Observation#jobRejection}). {@code MigrationFailed=True}
 * with its answer, a Warning once per refusal, and the create is tried again with backoff ({@link
 * Timing#blockedRetry}, at most {@link Timing#BLOCKED_MAX} apart). A 409 (the name is taken, rule
 * 7), throttling, a server error or no answer never gets here: those are retried as they are.
 */
final class RejectedRule {
  private RejectedRule() {}

  static Optional<Plan> decide(Facts f) {
    return f.o().jobRejection().map(rejection -> rejected(f, rejection));
  }

  private static Plan rejected(Facts f, String rejection) {
    Deployment d = f.deployment();
    String message = Messages.conditionRejected(f.jobName(), f.version(), rejection);
    List<Step> steps = new ArrayList<>();
    FailedCondition.rejected(d, f.jobName(), f.version(), rejection, f.now())
        .ifPresent(c -> steps.add(Step.SetConditions.to(true, c)));
    // Once per refusal: keyed by the answer and by when the condition turned True (kept while it
    // stays True), so the same answer at the next try is no news, and the same answer again after
    // a Job was created in between (the condition False meanwhile) is.
    String since =
        FailedCondition.current(d)
            .filter(c -> "True".equals(c.getStatus()))
            .map(DeploymentCondition::getLastTransitionTime)
            .orElse(Timestamps.format(f.now()));
    steps.add(
        new Emit(
            EventReason.JobRejected,
            Messages.rejectedEvent(message, Timing.BLOCKED_MAX.toMinutes()),
            "rejected/" + since + "/" + rejection));
    return f.blocked(message, steps);
  }
}
