package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.Emit;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Rule 7, no Job, nothing in the way: create it (rule 8), carrying a re-run request if there is
 * one; then a True {@code JobRejected} condition becomes False ({@code JobCreated}) and the
 * Deployment's retry-after is cleared — after the create, never before it.
 */
final class CreateRule {
  private CreateRule() {}

  static Optional<Plan> decide(Facts f) {
    Deployment d = f.deployment();
    String version = f.version();
    List<Step> steps = new ArrayList<>();
    steps.add(new Step.CreateJob(job(f), version));
    // a refusal before is over once the Job is there
    FailedCondition.jobCreated(d, f.jobName(), version, f.now())
        .ifPresent(c -> steps.add(Step.SetConditions.to(false, c)));
    if (f.hasRetryAfter()) {
      steps.add(new Step.ClearRetryAfter());
    }
    Optional<String> recorded = f.recorded();
    Optional<String> rerun = f.request().filter(r -> recorded.equals(Optional.of(version)));
    steps.add(
        new Emit(
            EventReason.MigrationStarted,
            Messages.started(f.jobName(), version, rerun, recorded),
            "started/" + version + "/" + Timestamps.format(f.now())));
    return Optional.of(
        f.plan(
            State.MIGRATING,
            Messages.migrationNeeded(recorded, version),
            Plan.after(Timing.AFTER_CREATE),
            steps));
  }

  /** The Job the Deployment creates (rule 8). */
  static Job job(Facts f) {
    return MigrationJob.build(
        f.deployment(),
        f.migrating(),
        f.version(),
        f.settings(),
        f.request(),
        f.policy().jobSpec());
  }
}
