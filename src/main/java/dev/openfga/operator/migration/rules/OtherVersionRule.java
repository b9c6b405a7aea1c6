package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Plan.State;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.Optional;

/**
 * Rule 7, the Deployment's Job is for another version (its annotation, else its sanitised label):
 * while its migrate runs it is let finish (ADR 0003: interrupting {@code openfga migrate} can leave
 * Postgres with an invalid index); otherwise it is deleted, and the new Job created on a later
 * pass.
 */
final class OtherVersionRule {
  private OtherVersionRule() {}

  static Optional<Plan> decide(Facts f) {
    Job job = f.job().orElseThrow();
    String version = f.version();
    if (MigrationJob.isFor(job, version)) {
      return Optional.empty();
    }
    String old = MigrationJob.describedVersion(job);
    if (f.running(job)) {
      return Optional.of(
          f.plan(
              State.MIGRATING,
              Messages.lettingOldMigrationFinish(old, version),
              Plan.after(Timing.WHILE_RUNNING)));
    }
    return Optional.of(
        f.plan(
            State.MIGRATING,
            Messages.replacingJob(old),
            Plan.after(Timing.SHORT),
            new Step.DeleteJob(Messages.otherVersion(old, version))));
  }
}
