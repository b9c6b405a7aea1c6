package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.Emit;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Rule 7, the Job is {@code Complete} for the desired version — in this order: clear {@code
 * MigrationFailed}, write the record (the result is now durable), arm the Job's TTL, restore the
 * replicas of a first install (rule 11), a Normal Event. Unless a newer re-run was asked for after
 * a Job whose run is recorded already: that finished Job is replaced.
 */
final class CompleteJobRule {
  private CompleteJobRule() {}

  static Optional<Plan> decide(Facts f) {
    Job job = f.job().orElseThrow();
    if (!MigrationJob.isComplete(job)) {
      return Optional.empty();
    }
    Facts g = f.withNotes(JobTtl.unrecordedRemoved(job));
    Optional<String> request = f.request();
    Optional<String> served = MigrationJob.request(job);
    boolean recordedAlready =
        f.recorded().equals(Optional.of(f.version()))
            && (served.isEmpty() || served.equals(f.handled()));
    if (request.isPresent() && !request.equals(served) && recordedAlready) {
      // this Job's run is recorded; the re-run asked for after it needs a Job of its own
      return Optional.of(
          g.plan(
              State.MIGRATING,
              Messages.replacingFinishedJob(request.get()),
              Plan.after(Timing.SHORT),
              new Step.DeleteJob(Messages.rerunRequested(request.get()))));
    }
    return Optional.of(succeeded(g, job, served));
  }

  private static Plan succeeded(Facts f, Job job, Optional<String> served) {
    Deployment d = f.deployment();
    String version = f.version();
    List<Step> steps = new ArrayList<>();
    FailedCondition.cleared(d, f.now()).ifPresent(c -> steps.add(Step.SetConditions.to(false, c)));
    Map<String, String> data = StatusRecord.data(version, f.now(), job.getMetadata().getName());
    served.or(f::handled).ifPresent(r -> data.put(Keys.DATA_HANDLED_REQUEST, r));
    // Rule 11: only a first install (nothing recorded before) restores the replicas
    // (or a first install whose scale had not been made when the image changed again)
    boolean restore =
        (f.recorded().isEmpty() || f.restorePending()) && Replicas.needsRestore(d, f.settings());
    if (restore) {
      data.put(Keys.DATA_RESTORE_REPLICAS, "true");
    }
    steps.add(new Step.WriteStatus(data));
    // an unrecorded TTL was removed first
    steps.addAll(JobTtl.armed(JobTtl.unrecorded(job) ? null : JobTtl.of(job), f.policy()));
    if (restore) {
      steps.addAll(Replicas.restored(d, f.settings()));
      steps.add(new Step.ClearRestoreReplicas());
    }
    steps.add(
        new Emit(
            EventReason.MigrationSucceeded,
            Messages.succeeded(version, job.getMetadata().getName()),
            "succeeded/" + job.getMetadata().getUid()));
    return f.plan(State.UP_TO_DATE, Messages.succeededSummary(version), Plan.done(), steps);
  }
}
