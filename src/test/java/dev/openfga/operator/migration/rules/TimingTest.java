package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.testing.Fixtures.NOW;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TimingTest {

  private static final Duration COOLDOWN = Duration.ofSeconds(60);
  private final Deployment deployment = Fixtures.deployment().build();

  /**
   * Upstream's worked examples: a Job that failed at {@code now}, with no earlier deadline. The
   * failed Job is retained for {@code max(ttl, cooldown)} and its native TTL is that plus 5
   * minutes.
   */
  @ParameterizedTest(name = "TTL {0}: retain {1}s, Job TTL {2}")
  @CsvSource({"300, 300, 600", "0, 60, 360", "120, 120, 420"})
  void followsUpstreamsWorkedExamples(int ttl, long retainSeconds, int jobTtl) {
    Instant retryAfter = Timing.retryAfter(Optional.empty(), NOW, COOLDOWN);
    Optional<Instant> finishedAt = Optional.of(NOW);

    Instant retainUntil = Timing.retainUntil(finishedAt, ttl, retryAfter);

    assertThat(retryAfter).isEqualTo(NOW.plusSeconds(60));
    assertThat(Timing.until(NOW, retainUntil)).isEqualTo(Duration.ofSeconds(retainSeconds));
    assertThat(Timing.failedJobTtl(finishedAt, retainUntil, retryAfter, NOW, ttl))
        .isEqualTo(jobTtl);
  }

  @Test
  void keepsAFutureRetryDeadlineLaterThanTheCooldown() {
    Instant existing = NOW.plusSeconds(600);

    assertThat(Timing.retryAfter(Optional.of(existing), NOW, COOLDOWN)).isEqualTo(existing);
  }

  @ParameterizedTest(name = "existing deadline now{0}s")
  @CsvSource({"-3600", "0", "30", "60"})
  void startsAFreshCooldownWhenTheExistingDeadlineIsSooner(long offset) {
    Optional<Instant> existing = Optional.of(NOW.plusSeconds(offset));

    assertThat(Timing.retryAfter(existing, NOW, COOLDOWN)).isEqualTo(NOW.plusSeconds(60));
  }

  @Test
  void retainsAnUnfinishedFailureOnlyUntilTheRetryDeadline() {
    Instant retryAfter = NOW.plusSeconds(60);

    assertThat(Timing.retainUntil(Optional.empty(), 300, retryAfter)).isEqualTo(retryAfter);
  }

  @Test
  void givesAnUnfinishedFailureATtlOfAtLeastTheDiagnosticsWindow() {
    Instant retryAfter = NOW.plusSeconds(60);

    assertThat(Timing.failedJobTtl(Optional.empty(), retryAfter, retryAfter, NOW, 300))
        .isEqualTo(300 + 300);
    assertThat(Timing.failedJobTtl(Optional.empty(), retryAfter, retryAfter, NOW, 0))
        .isEqualTo(60 + 300);
  }

  @Test
  void extendsRetentionFromTheTimeTheJobFinished() {
    Instant failedAt = NOW.plusSeconds(30);
    Instant retryAfter = NOW.plusSeconds(60);

    Instant retainUntil = Timing.retainUntil(Optional.of(failedAt), 120, retryAfter);

    assertThat(retainUntil).isEqualTo(NOW.plusSeconds(150));
    assertThat(Timing.failedJobTtl(Optional.of(failedAt), retainUntil, retryAfter, failedAt, 120))
        .isEqualTo(120 + 300);
  }

  @Test
  void neverGivesANegativeTtlAndSaturatesAtTheKubernetesLimit() {
    Instant longAgo = NOW.minusSeconds(10_000);

    assertThat(Timing.failedJobTtl(Optional.of(NOW), longAgo, longAgo, NOW, 0)).isEqualTo(300);
    assertThat(
            Timing.failedJobTtl(Optional.of(NOW), NOW.plusSeconds(Integer.MAX_VALUE), NOW, NOW, 0))
        .isEqualTo(Integer.MAX_VALUE);
  }

  @Test
  void roundsPartialSecondsUp() {
    Instant finished = NOW;
    Instant retainUntil = NOW.plusMillis(60_001);

    assertThat(Timing.failedJobTtl(Optional.of(finished), retainUntil, retainUntil, NOW, 0))
        .isEqualTo(61 + 300);
  }

  @ParameterizedTest(name = "{0}s left -> {1}s")
  @CsvSource({"90, 90", "1, 1", "0, 1", "-30, 1"})
  void waitsAtLeastOneSecond(long left, long wait) {
    assertThat(Timing.until(NOW, NOW.plusSeconds(left))).isEqualTo(Duration.ofSeconds(wait));
  }

  @Test
  void takesTheFinishTimeFromCompletionTimeFirst() {
    Job job = Fixtures.job(deployment, "v1").complete(NOW.plusSeconds(10)).build();
    job.getStatus().getConditions().forEach(c -> c.setLastTransitionTime("2026-01-01T01:00:00Z"));

    assertThat(Timing.finishedAt(job)).contains(NOW.plusSeconds(10));
  }

  @Test
  void takesTheFinishTimeOfAFailedJobFromItsFailedCondition() {
    Job job = Fixtures.job(deployment, "v1").failureTarget(NOW).failed(NOW.plusSeconds(30)).build();

    assertThat(Timing.finishedAt(job)).contains(NOW.plusSeconds(30));
  }

  @Test
  void hasNoFinishTimeBeforeTheJobFinished() {
    assertThat(Timing.finishedAt(Fixtures.job(deployment, "v1").failureTarget(NOW).build()))
        .isEmpty();
    assertThat(Timing.finishedAt(Fixtures.job(deployment, "v1").running().build())).isEmpty();
    assertThat(Timing.finishedAt(Fixtures.job(deployment, "v1").build())).isEmpty();
  }

  @Test
  void theNextJobAfterAFailureComesAtTheLaterOfTheRetentionAndTheRetryAfter() {
    Deployment d = Fixtures.deployment().retryAfter(NOW.plusSeconds(60)).build();
    Job kept =
        Fixtures.job(d, "v1")
            .failed(NOW)
            .retention(NOW.plusSeconds(60), NOW.plusSeconds(300))
            .build();
    Plan failed = new Plan(Plan.State.FAILED, "failed", java.util.List.of(), new Plan.Next.Done());
    Plan cooldown =
        new Plan(Plan.State.COOLDOWN, "cooldown", java.util.List.of(), new Plan.Next.Done());

    // the failed Job is kept until its retain-until, after the cooldown
    assertThat(Timing.nextJobAt(failed, d, Optional.of(kept))).contains(NOW.plusSeconds(300));
    // no Job left: the cooldown
    assertThat(Timing.nextJobAt(cooldown, d, Optional.empty())).contains(NOW.plusSeconds(60));
    // what the plan is about to write counts over what was read
    Plan writing =
        new Plan(
            Plan.State.FAILED,
            "failed",
            java.util.List.of(
                new Step.SetRetryAfter(NOW.plusSeconds(90)),
                new Step.PatchJob(
                    330,
                    java.util.Map.of(Keys.RETAIN_UNTIL, Timestamps.format(NOW.plusSeconds(330))))),
            new Plan.Next.Done());
    Deployment fresh = Fixtures.deployment().build();
    Job unannotated = Fixtures.job(fresh, "v1").failed(NOW).build();
    assertThat(Timing.nextJobAt(writing, fresh, Optional.of(unannotated)))
        .contains(NOW.plusSeconds(330));
    // nothing due in other states
    Plan migrating =
        new Plan(Plan.State.MIGRATING, "migrating", java.util.List.of(), new Plan.Next.Done());
    assertThat(Timing.nextJobAt(migrating, d, Optional.of(kept))).isEmpty();
  }
}
