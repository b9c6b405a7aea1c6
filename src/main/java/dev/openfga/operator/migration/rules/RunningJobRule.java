package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.Emit;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Rule 7, the Deployment's Job for this version has not finished: wait (its informer wakes the
 * reconcile; the requeue is a safety net). The Job is there, so a refusal of an earlier create is
 * over and the retry-after is cleared (the create plan does both, unless a write after the create
 * failed). A Job still without a pod whose creation the Job controller reports failing ({@code
 * FailedCreate}) is reported, and left alone: a freed quota lets it run; otherwise its active
 * deadline fails it, and rule 10 takes over.
 */
final class RunningJobRule {
  private RunningJobRule() {}

  static Optional<Plan> decide(Facts f) {
    Job job = f.job().orElseThrow();
    Facts g = f.withNotes(JobTtl.unrecordedRemoved(job));
    Deployment d = f.deployment();
    List<Step> steps = new ArrayList<>();
    FailedCondition.jobCreated(d, f.jobName(), f.version(), f.now())
        .ifPresent(c -> steps.add(Step.SetConditions.to(false, c)));
    if (f.hasRetryAfter()) {
      steps.add(new Step.ClearRetryAfter());
    }
    Optional<String> podFailure = f.o().podCreateFailure().filter(p -> MigrationJob.hasNoPod(job));
    if (podFailure.isPresent()) {
      String problem = Messages.podNotCreated(f.jobName(), podFailure.get());
      steps.add(
          new Emit(
              EventReason.MigrationPodNotCreated,
              Messages.podNotCreatedEvent(problem),
              "pod-not-created/" + job.getMetadata().getUid() + "/" + podFailure.get()));
      return Optional.of(g.plan(State.BLOCKED, problem, Plan.after(Timing.WHILE_RUNNING), steps));
    }
    return Optional.of(
        g.plan(
            State.MIGRATING,
            Messages.inProgress(f.version()),
            Plan.after(Timing.WHILE_RUNNING),
            steps));
  }
}
