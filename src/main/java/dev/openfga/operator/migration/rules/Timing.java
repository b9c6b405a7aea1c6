package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Timestamps;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/** Every timing rule of the operator, in one place. All pure. */
public final class Timing {
  private Timing() {}

  /** A terminating Job, a write conflict, a Job just deleted: look again shortly. */
  public static final Duration SHORT = Duration.ofSeconds(1);

  /** After creating a Job (the Job informer normally wakes the operator first). */
  public static final Duration AFTER_CREATE = Duration.ofSeconds(5);

  /** While a Job runs, or has only FailureTarget (its pods are still terminating). */
  public static final Duration WHILE_RUNNING = Duration.ofSeconds(10);

  /**
   * How long after FailureTarget the MigrationFailed Event waits for Failed: the pod has then
   * stopped, so the Event carries its exit code and the Job's real retention (when the next Job is
   * created); a pod that never stops (a lost node) does not hold the Event back longer.
   */
  public static final Duration FAILED_EVENT_WAIT = Duration.ofSeconds(60);

  /**
   * While another Deployment's Job migrates the same database (its Job's events wake only its own
   * Deployment).
   */
  public static final Duration WHILE_WAITING = Duration.ofSeconds(3);

  /** How far a re-run request may be ahead of the operator's clock (clock skew). */
  public static final Duration CLOCK_SKEW = Duration.ofMinutes(5);

  /** How far beyond the operator's own deadline the native TTL of a failed Job is set. */
  public static final Duration TTL_GRACE = Duration.ofMinutes(5);

  /** The retry deadline: a future one already set is kept, else now plus the cooldown. */
  public static Instant retryAfter(Optional<Instant> existing, Instant now, Duration cooldown) {
    Instant fresh = now.plus(cooldown);
    return existing.filter(e -> e.isAfter(fresh)).orElse(fresh);
  }

  /** When the Job finished: completionTime, else the latest True Complete/Failed condition. */
  public static Optional<Instant> finishedAt(Job job) {
    if (job.getStatus() == null) {
      return Optional.empty();
    }
    Optional<Instant> completion =
        Optional.ofNullable(job.getStatus().getCompletionTime()).flatMap(Timestamps::parse);
    if (completion.isPresent()) {
      return completion;
    }
    return MigrationJob.condition(job, "Failed")
        .or(() -> MigrationJob.condition(job, "Complete"))
        .map(JobCondition::getLastTransitionTime)
        .flatMap(Timestamps::parse);
  }

  /**
   * When the Job failed: the time of its {@code Failed} condition, else of its {@code
   * FailureTarget} condition (the pod had ended). What the retry deadline counts from, never a
   * clock read before a slow call.
   */
  public static Optional<Instant> failedAt(Job job) {
    return MigrationJob.condition(job, "Failed")
        .or(() -> MigrationJob.condition(job, "FailureTarget"))
        .map(JobCondition::getLastTransitionTime)
        .flatMap(Timestamps::parse);
  }

  /**
   * How long a failed Job is kept: until the retry deadline and at least the diagnostics window
   * ({@code ttlSecondsAfterFinished}) after it finished. Unfinished (FailureTarget only): until the
   * retry deadline, provisionally.
   */
  public static Instant retainUntil(
      Optional<Instant> finishedAt, int ttlSecondsAfterFinished, Instant retryAfter) {
    if (finishedAt.isEmpty()) {
      return retryAfter;
    }
    Instant window = finishedAt.get().plusSeconds(ttlSecondsAfterFinished);
    return window.isAfter(retryAfter) ? window : retryAfter;
  }

  /**
   * The native TTL of a retained failed Job: a safety net just beyond the operator's own deadline
   * (which deletes it with preconditions), in case the operator is gone by then.
   */
  public static int failedJobTtl(
      Optional<Instant> finishedAt,
      Instant retainUntil,
      Instant retryAfter,
      Instant now,
      int ttlSecondsAfterFinished) {
    long seconds =
        finishedAt
            .map(f -> ceilSeconds(Duration.between(f, retainUntil)))
            .orElseGet(
                () ->
                    Math.max(
                        ttlSecondsAfterFinished, ceilSeconds(Duration.between(now, retryAfter))));
    seconds = Math.max(0, seconds) + TTL_GRACE.toSeconds();
    return (int) Math.min(Integer.MAX_VALUE, seconds);
  }

  /** The longest wait between two looks at a Deployment blocked by a user error. */
  public static final Duration BLOCKED_MAX = Duration.ofMinutes(5);

  /**
   * When to look again at a Deployment blocked by a user error (bad annotation, foreign object in
   * the way), the n-th time in a row: 1 s, 2 s, 4 s ... up to {@link #BLOCKED_MAX}.
   */
  public static Duration blockedRetry(int attempt) {
    int doublings = Math.max(0, Math.min(attempt - 1, 20));
    Duration delay = SHORT.multipliedBy(1L << doublings);
    return delay.compareTo(BLOCKED_MAX) > 0 ? BLOCKED_MAX : delay;
  }

  /** Time left until the instant, never less than {@link #SHORT}. */
  public static Duration until(Instant now, Instant at) {
    Duration left = Duration.between(now, at);
    return left.compareTo(SHORT) < 0 ? SHORT : left;
  }

  private static long ceilSeconds(Duration d) {
    long s = d.getSeconds();
    return d.getNano() > 0 ? s + 1 : s;
  }

  /**
   * When the operator creates the next Job after a failure (FAILED and COOLDOWN; else empty), as
   * the metrics and the status command say it. COOLDOWN: the Deployment's retry-after (the planner
   * waits for exactly that). FAILED: the failed Job is kept until its retain-until, never before
   * its retry-after, and replaced then: the later of the two written on the Job; before they are,
   * the Deployment's retry-after. What the plan writes counts over what was read.
   */
  public static Optional<Instant> nextJobAt(Plan plan, Deployment d, Optional<Job> job) {
    List<Instant> written = new ArrayList<>();
    for (Step step : plan.steps()) {
      if (step instanceof Step.SetRetryAfter r) {
        written.add(r.at());
      } else if (step instanceof Step.PatchJob p) {
        Stream.of(p.annotations().get(Keys.RETRY_AFTER), p.annotations().get(Keys.RETAIN_UNTIL))
            .filter(Objects::nonNull)
            .map(Timestamps::parse)
            .flatMap(Optional::stream)
            .forEach(written::add);
      }
    }
    Optional<Instant> onDeployment = DeploymentSettings.of(d).retryAfter();
    if (plan.state() == Plan.State.COOLDOWN) {
      return written.stream().max(Comparator.naturalOrder()).or(() -> onDeployment);
    }
    if (plan.state() != Plan.State.FAILED) {
      return Optional.empty();
    }
    job.stream()
        .flatMap(
            j ->
                Stream.of(
                    MigrationJob.annotation(j, Keys.RETRY_AFTER),
                    MigrationJob.annotation(j, Keys.RETAIN_UNTIL)))
        .filter(Objects::nonNull)
        .map(Timestamps::parse)
        .flatMap(Optional::stream)
        .forEach(written::add);
    return written.stream().max(Comparator.naturalOrder()).or(() -> onDeployment);
  }
}
