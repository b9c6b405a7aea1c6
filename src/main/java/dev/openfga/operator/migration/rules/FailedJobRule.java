package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.Emit;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Rule 10: a failed Job ({@code Failed} or {@code FailureTarget}), whatever version it was for, is
 * the evidence: first {@code MigrationFailed=True}, then one Warning per failed Job, the retry
 * deadline on the Deployment and the retention on the Job; kept until the later of the retry
 * deadline and the diagnostics window, then deleted, and exactly one replacement is created on a
 * later pass. Every time written derives from the Job's own finish.
 */
final class FailedJobRule {
  private FailedJobRule() {}

  /** With the Job there, the failure path, an unrecorded TTL removed first ({@link JobTtl}). */
  static Optional<Plan> decide(Facts f) {
    Job job = f.job().orElseThrow();
    if (!MigrationJob.isFailed(job)) {
      return Optional.empty();
    }
    return Optional.of(plan(f.withNotes(JobTtl.unrecordedRemoved(job)), job));
  }

  static Plan plan(Facts f, Job job) {
    String failedVersion = MigrationJob.describedVersion(job);
    Optional<String> evidence = evidence(job, f.o());
    List<Step> steps = new ArrayList<>();
    FailedCondition.failed(f.deployment(), failedVersion, evidence, f.now())
        .ifPresent(c -> steps.add(Step.SetConditions.to(true, c)));
    // The Event comes right after the condition: the evidence first, then the bookkeeping.
    int eventAt = steps.size();
    Deadlines times = Deadlines.of(job, f.settings().retryAfter(), f.policy(), f.now());
    steps.addAll(bookkeeping(f, job, times, evidence));
    // once the Job has Failed (its pod stopped: the exit code, and the retention counted from
    // then), not at FailureTarget, unless Failed is long in coming (a Job deleted before it gets
    // its Event from the terminating path); sent once per Job
    if (times.finished() || !f.now().isBefore(times.failedAt().plus(Timing.FAILED_EVENT_WAIT))) {
      steps.add(eventAt, event(job, times.nextJobAt(), evidence));
    }
    String summary = Messages.failedSummary(failedVersion, times.nextJobAt());
    if (!times.finished()) {
      return f.plan(State.FAILED, summary, Plan.after(Timing.WHILE_RUNNING), steps);
    }
    if (f.now().isBefore(times.retainUntil())) {
      return f.plan(
          State.FAILED, summary, Plan.after(Timing.until(f.now(), times.retainUntil())), steps);
    }
    steps.add(new Step.DeleteJob(Messages.retentionOver(failedVersion)));
    return f.plan(State.FAILED, summary, Plan.after(Timing.SHORT), steps);
  }

  /**
   * The retry deadline on the Deployment, the retention on the Job (and, once it has Failed, the
   * evidence), with a TTL as a safety net: each only when it is not recorded so already.
   */
  private static List<Step> bookkeeping(
      Facts f, Job job, Deadlines times, Optional<String> evidence) {
    List<Step> steps = new ArrayList<>();
    if (!f.settings().retryAfter().equals(Optional.of(times.retryAfter()))) {
      steps.add(new Step.SetRetryAfter(times.retryAfter()));
    }
    Map<String, String> retention = new LinkedHashMap<>();
    retention.put(Keys.RETRY_AFTER, Timestamps.format(times.retryAfter()));
    retention.put(Keys.RETAIN_UNTIL, Timestamps.format(times.retainUntil()));
    // Kept on the Job once the Job has Failed: at FailureTarget the pod may still be ending (no
    // exit code yet), so the evidence is read again, and recorded, when Failed arrives.
    boolean recordedEvidence = MigrationJob.annotation(job, Keys.FAILURE_EVIDENCE) != null;
    if (!recordedEvidence && evidence.isPresent() && times.finished()) {
      retention.put(Keys.FAILURE_EVIDENCE, evidence.get());
    }
    boolean recordedSame =
        Objects.equals(
                MigrationJob.annotation(job, Keys.RETRY_AFTER), retention.get(Keys.RETRY_AFTER))
            && Objects.equals(
                MigrationJob.annotation(job, Keys.RETAIN_UNTIL), retention.get(Keys.RETAIN_UNTIL));
    if (!recordedSame || JobTtl.of(job) == null || retention.containsKey(Keys.FAILURE_EVIDENCE)) {
      int ttl =
          Timing.failedJobTtl(
              times.finishedAt(),
              times.retainUntil(),
              times.retryAfter(),
              f.now(),
              f.policy().ttlSecondsAfterFinished());
      steps.add(new Step.PatchJob(ttl, retention));
    }
    return steps;
  }

  /** What the failed pod left behind: recorded on the Job once, read from the pod before that. */
  static Optional<String> evidence(Job job, Observation o) {
    return Optional.ofNullable(MigrationJob.annotation(job, Keys.FAILURE_EVIDENCE))
        .or(o::failureEvidence);
  }

  /** The Warning of a failed Job, once per Job (its uid). */
  static Emit event(Job job, Instant nextJobAt, Optional<String> evidence) {
    List<String> why =
        MigrationJob.condition(job, "Failed")
            .or(() -> MigrationJob.condition(job, "FailureTarget"))
            .map(c -> Stream.of(c.getReason(), c.getMessage()).filter(Objects::nonNull).toList())
            .orElse(List.of());
    return new Emit(
        EventReason.MigrationFailed,
        Messages.failedEvent(
            job.getMetadata().getName(),
            MigrationJob.describedVersion(job),
            why,
            nextJobAt,
            evidence),
        "failed/" + job.getMetadata().getUid());
  }

  /**
   * The times of a failure, each derived from the Job's own: when it failed, when the next Job may
   * be created (the Job's recorded deadline, else the cooldown after the failure; a later one set
   * on the Deployment wins), when it finished (only once {@code Failed}), until when it is kept,
   * and when the next Job is really created (the later of the two).
   */
  record Deadlines(
      Instant failedAt,
      Instant retryAfter,
      Optional<Instant> finishedAt,
      Instant retainUntil,
      Instant nextJobAt) {

    boolean finished() {
      return finishedAt.isPresent();
    }

    static Deadlines of(Job job, Optional<Instant> deployments, Policy policy, Instant now) {
      Optional<Instant> recordedRetry = recorded(job, Keys.RETRY_AFTER);
      Optional<Instant> recordedRetain = recorded(job, Keys.RETAIN_UNTIL);
      Instant failedAt = Timing.failedAt(job).orElse(now);
      Instant retryAfter =
          recordedRetry.orElseGet(
              () -> Timing.retryAfter(deployments, failedAt, policy.retryCooldown()));
      // max(existing future value, ...): a later deadline set on the Deployment after the Job
      // recorded its own (a person holding the retries) wins
      if (deployments.isPresent() && deployments.get().isAfter(retryAfter)) {
        retryAfter = deployments.get();
      }
      Optional<Instant> finishedAt =
          MigrationJob.hasCondition(job, "Failed")
              ? Timing.finishedAt(job).or(() -> Optional.of(now))
              : Optional.empty();
      int ttl = policy.ttlSecondsAfterFinished();
      Instant retainUntil = Timing.retainUntil(finishedAt, ttl, retryAfter);
      if (recordedRetain.isPresent() && recordedRetain.get().isAfter(retainUntil)) {
        retainUntil = recordedRetain.get();
      }
      // when the next Job is really created: the failed one is kept until retainUntil
      Instant nextJobAt =
          Timing.retainUntil(finishedAt.or(() -> Optional.of(failedAt)), ttl, retryAfter);
      if (retainUntil.isAfter(nextJobAt)) {
        nextJobAt = retainUntil;
      }
      return new Deadlines(failedAt, retryAfter, finishedAt, retainUntil, nextJobAt);
    }

    private static Optional<Instant> recorded(Job job, String key) {
      return Optional.ofNullable(MigrationJob.annotation(job, key)).flatMap(Timestamps::parse);
    }
  }
}
