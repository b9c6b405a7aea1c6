package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Plan.Next;
import dev.openfga.operator.migration.rules.Plan.State;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Rule 6: the record is the desired version and no re-run is asked for. A leftover trusted Job is
 * waited for while it terminates, handled as a failure (rule 10), left to finish while its migrate
 * runs, else deleted; a Complete one for this version gets its TTL. Then a True {@code
 * MigrationFailed} is cleared, and a first install whose scale was not made is scaled (rule 11).
 */
final class UpToDateRule {
  private UpToDateRule() {}

  static Optional<Plan> decide(Facts f) {
    if (!f.recorded().equals(Optional.of(f.version())) || f.request().isPresent()) {
      return Optional.empty();
    }
    Plan plan = plan(f);
    if (f.futureRequest().isPresent() && plan.next() instanceof Next.Done) {
      // look again when the request's time has come
      Instant due = f.futureRequest().get().minus(Timing.CLOCK_SKEW);
      return Optional.of(
          new Plan(
              plan.state(), plan.summary(), plan.steps(), Plan.after(Timing.until(f.now(), due))));
    }
    return Optional.of(plan);
  }

  /** Up to date (also after a rollback, {@link DowngradeRule}). */
  static Plan plan(Facts f) {
    Deployment d = f.deployment();
    Optional<Job> found = f.job().filter(j -> MigrationJob.isTrusted(j, d));
    Optional<Plan> leftover = found.flatMap(job -> leftover(f, job));
    if (leftover.isPresent()) {
      return leftover.get();
    }
    List<Step> steps = new ArrayList<>();
    found.ifPresent(job -> steps.addAll(JobTtl.armed(JobTtl.of(job), f.policy())));
    FailedCondition.cleared(d, f.now()).ifPresent(c -> steps.add(Step.SetConditions.to(false, c)));
    if (f.restorePending()) {
      // a crash came between the first record and the scale: finish the first install
      steps.addAll(Replicas.restored(d, f.settings()));
      steps.add(new Step.ClearRestoreReplicas());
    }
    return f.plan(State.UP_TO_DATE, Messages.upToDate(f.version()), Plan.done(), steps);
  }

  /** A trusted Job left from before: none of these is the Complete Job for this version. */
  private static Optional<Plan> leftover(Facts f, Job job) {
    if (MigrationJob.isTerminating(job)) {
      return Optional.of(
          f.plan(State.UP_TO_DATE, Messages.WAITING_FOR_DELETION, Plan.after(Timing.SHORT)));
    }
    if (MigrationJob.isFailed(job)) {
      return Optional.of(FailedJobRule.plan(f, job));
    }
    if (MigrationJob.isFor(job, f.version()) && MigrationJob.isComplete(job)) {
      return Optional.empty();
    }
    String old = MigrationJob.describedVersion(job);
    if (f.running(job)) {
      return Optional.of(
          f.plan(
              State.UP_TO_DATE,
              Messages.lettingLeftoverFinish(old),
              Plan.after(Timing.WHILE_RUNNING)));
    }
    return Optional.of(
        f.plan(
            State.UP_TO_DATE,
            Messages.DELETING_LEFTOVER,
            Plan.after(Timing.SHORT),
            new Step.DeleteJob(Messages.leftoverJob(old))));
  }
}
