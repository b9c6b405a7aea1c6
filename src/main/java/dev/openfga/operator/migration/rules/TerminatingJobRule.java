package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Plan.State;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Rule 7, the Job being deleted: wait, and never create a replacement while the old Job object
 * exists (foreground deletion keeps it until its pod is gone).
 */
final class TerminatingJobRule {
  private TerminatingJobRule() {}

  static Optional<Plan> decide(Facts f) {
    Job job = f.job().orElseThrow();
    if (!MigrationJob.isTerminating(job)) {
      return Optional.empty();
    }
    Deployment d = f.deployment();
    List<Step> steps = new ArrayList<>();
    if (MigrationJob.isTrusted(job, d)
        && MigrationJob.isFailed(job)
        && !MigrationJob.hasCondition(job, "Failed")) {
      // deleted (someone retries at once) before its Warning went out at Failed: now, or never;
      // the next Job comes once it is gone and the retry-after has passed
      steps.add(
          FailedJobRule.event(
              job,
              f.settings().retryAfter().filter(t -> t.isAfter(f.now())).orElse(f.now()),
              FailedJobRule.evidence(job, f.o())));
    }
    return Optional.of(
        f.plan(State.MIGRATING, Messages.WAITING_FOR_DELETION, Plan.after(Timing.SHORT), steps));
  }
}
