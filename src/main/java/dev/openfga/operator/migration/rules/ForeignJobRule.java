package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.Emit;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.Optional;

/**
 * Rule 7, a Job not the operator's holds the name (no managed-by label, or not controlled by this
 * Deployment): the legacy Helm hook Job of the same release is deleted and adopted, once its
 * migrate is no longer running (ADR 0003); any other is a collision — a Warning, the Job untouched.
 */
final class ForeignJobRule {
  private ForeignJobRule() {}

  static Optional<Plan> decide(Facts f) {
    Job job = f.job().orElseThrow();
    Deployment d = f.deployment();
    if (MigrationJob.isTrusted(job, d)) {
      return Optional.empty();
    }
    if (MigrationJob.isLegacyHelmHook(job, d)) {
      return Optional.of(legacyHook(f, job));
    }
    String problem =
        Messages.jobConflict(
            d.getMetadata().getNamespace(), job.getMetadata().getName(), d.getMetadata().getName());
    // per Job in the way: another one later (the same name) is news again
    return Optional.of(
        f.blocked(
            problem,
            new Emit(
                EventReason.MigrationJobConflict,
                problem,
                "job-conflict/" + job.getMetadata().getUid() + "/" + problem)));
  }

  private static Plan legacyHook(Facts f, Job job) {
    if (f.running(job)) {
      // ADR 0003: a running openfga migrate is never interrupted, not even Helm's own
      return f.plan(
          State.MIGRATING, Messages.LETTING_HOOK_FINISH, Plan.after(Timing.WHILE_RUNNING));
    }
    return f.plan(
        State.MIGRATING,
        Messages.ADOPTING_HOOK,
        Plan.after(Timing.SHORT),
        new Step.DeleteJob(Messages.LEGACY_HOOK),
        new Emit(
            EventReason.LegacyHookJobAdopted,
            Messages.hookAdopted(job.getMetadata().getName()),
            "legacy/" + job.getMetadata().getUid()));
  }
}
