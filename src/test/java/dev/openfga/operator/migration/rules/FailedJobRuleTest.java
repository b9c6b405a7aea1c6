package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.after;
import static dev.openfga.operator.migration.rules.PlannerFixtures.event;
import static dev.openfga.operator.migration.rules.PlannerFixtures.failedNow;
import static dev.openfga.operator.migration.rules.PlannerFixtures.kinds;
import static dev.openfga.operator.migration.rules.PlannerFixtures.migrationFailed;
import static dev.openfga.operator.migration.rules.PlannerFixtures.only;
import static dev.openfga.operator.migration.rules.PlannerFixtures.plannerWithTtl;
import static dev.openfga.operator.migration.rules.PlannerFixtures.record;
import static dev.openfga.operator.migration.rules.PlannerFixtures.retention;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.observe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.ClearRetryAfter;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.DeleteJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.PatchJob;
import dev.openfga.operator.migration.rules.Step.Scale;
import dev.openfga.operator.migration.rules.Step.SetConditions;
import dev.openfga.operator.migration.rules.Step.SetRetryAfter;
import dev.openfga.operator.migration.rules.Step.WriteStatus;
import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.PlanReplay;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Rule 10: a failed Job is evidence, kept until the retry deadline, then replaced once ({@link
 * FailedJobRule}).
 */
class FailedJobRuleTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  private final Deployment d = Fixtures.deployment().replicas(0).desiredReplicas(3).build();

  @Test
  void countsTheRetryDeadlineFromTheJobsFailureNotFromWhenItIsSeen() {
    // the failure is seen 90 s late (an operator restart, a slow evidence read)
    Job failed = Fixtures.job(d, "v1.14.0").failed(NOW.minusSeconds(90)).build();

    Plan plan = planner.plan(observe(d, null, failed, NOW));

    assertThat(plan.steps()).contains(new SetRetryAfter(NOW.minusSeconds(30)));
    assertThat(only(plan, PatchJob.class).annotations())
        .containsEntry(Keys.RETRY_AFTER, "2025-12-31T23:59:30Z")
        .containsEntry(Keys.RETAIN_UNTIL, "2026-01-01T00:03:30Z");
    assertThat(event(plan).message()).contains("retrying after 2026-01-01T00:03:30Z");
  }

  @Test
  void recordsTheFailureAndRetainsTheJob() {
    Job failed = Fixtures.job(d, "v1.14.0").failed(NOW).build();

    Plan plan = planner.plan(observe(d, null, failed, NOW));

    assertThat(plan.state()).isEqualTo(State.FAILED);
    assertThat(kinds(plan))
        .containsExactly(SetConditions.class, Emit.class, SetRetryAfter.class, PatchJob.class);
    DeploymentCondition c = migrationFailed(only(plan, SetConditions.class));
    assertThat(c.getStatus()).isEqualTo("True");
    assertThat(c.getReason()).isEqualTo("MigrationJobFailed");
    assertThat(c.getMessage())
        .isEqualTo("Database migration failed for version v1.14.0. Check migration job logs.");
    assertThat(plan.steps().get(2)).isEqualTo(new SetRetryAfter(NOW.plusSeconds(60)));
    assertThat(plan.steps().get(3))
        .isEqualTo(new PatchJob(600, retention(NOW.plusSeconds(60), NOW.plusSeconds(300))));
    assertThat(event(plan).reason()).isEqualTo(EventReason.MigrationFailed);
    assertThat(event(plan).reason().warning()).isTrue();
    // the next Job comes when the failed one is no longer kept: after the diagnostics window
    assertThat(event(plan).message())
        .contains("openfga-migrate", "v1.14.0", "retrying after 2026-01-01T00:05:00Z");
    assertThat(plan.next()).isEqualTo(after(300));
  }

  @Test
  void treatsFailureTargetAsFailedButWaitsForTheJobToFinish() {
    Job failing = Fixtures.job(d, "v1.14.0").failureTarget(NOW).build();

    Plan plan = planner.plan(observe(d, null, failing, NOW));

    assertThat(plan.state()).isEqualTo(State.FAILED);
    // the condition at once; the Warning Event once the pod has stopped (below)
    assertThat(kinds(plan))
        .containsExactly(SetConditions.class, SetRetryAfter.class, PatchJob.class);
    assertThat(migrationFailed(only(plan, SetConditions.class)).getStatus()).isEqualTo("True");
    assertThat(plan.steps().get(1)).isEqualTo(new SetRetryAfter(NOW.plusSeconds(60)));
    assertThat(plan.steps().get(2))
        .isEqualTo(new PatchJob(600, retention(NOW.plusSeconds(60), NOW.plusSeconds(60))));
    assertThat(plan.next()).isEqualTo(after(10));
  }

  @Test
  void theWarningEventWaitsForFailedAndSaysWhenTheNextJobReallyComes() {
    // Kubernetes 1.31+: FailureTarget first, Failed when the pod has stopped (here 30 s later)
    Observation t0 = observe(d, null, Fixtures.job(d, "v1.14.0").failureTarget(NOW).build(), NOW);
    Plan atTarget = planner.plan(t0);
    Observation t30 = PlanReplay.apply(t0, atTarget, NOW.plusSeconds(30));
    Job failed = failedNow(t30.job().orElseThrow(), NOW.plusSeconds(30));
    Plan atFailed = planner.plan(t30.withJob(failed));

    assertThat(kinds(atTarget)).doesNotContain(Emit.class);
    // kept 300 s from Failed, not from FailureTarget: the Event says the real time
    assertThat(only(atFailed, PatchJob.class).annotations())
        .containsEntry(Keys.RETAIN_UNTIL, "2026-01-01T00:05:30Z");
    assertThat(event(atFailed).message()).contains("retrying after 2026-01-01T00:05:30Z");

    // a Job deleted before Failed (someone retries at once): the Event now, or never
    Job deleting =
        new JobBuilder(Fixtures.job(d, "v1.14.0").failureTarget(NOW).build())
            .editMetadata()
            .withDeletionTimestamp(Timestamps.format(NOW.plusSeconds(5)))
            .endMetadata()
            .build();
    assertThat(event(planner.plan(observe(d, null, deleting, NOW.plusSeconds(5)))).reason())
        .isEqualTo(EventReason.MigrationFailed);

    // a pod that never stops (a lost node): the Event comes after FAILED_EVENT_WAIT anyway
    Plan stuck = planner.plan(PlanReplay.apply(t0, atTarget, NOW.plus(Timing.FAILED_EVENT_WAIT)));
    assertThat(event(stuck).reason()).isEqualTo(EventReason.MigrationFailed);
  }

  @Test
  void recordsTheEvidenceOnTheJobOnlyOnceItHasFailedWithItsExitCode() {
    // at FailureTarget the pod may still be ending: its exit code is not known yet
    Job failing = Fixtures.job(d, "v1.14.0").failureTarget(NOW).build();
    Observation early =
        observe(d, null, failing, NOW).withFailureEvidence("Pod openfga-migrate-x1.");

    Plan atTarget = planner.plan(early);
    Observation later = PlanReplay.apply(early, atTarget, NOW.plusSeconds(10));
    Job failed = failedNow(later.job().orElseThrow(), NOW.plusSeconds(10));
    Plan atFailed =
        planner.plan(
            later
                .withJob(failed)
                .withFailureEvidence(
                    "Pod openfga-migrate-x1: exit code 1 (Error). Log:\nError: boom"));

    assertThat(only(atTarget, PatchJob.class).annotations())
        .doesNotContainKey(Keys.FAILURE_EVIDENCE);
    assertThat(only(atFailed, PatchJob.class).annotations())
        .containsEntry(
            Keys.FAILURE_EVIDENCE,
            "Pod openfga-migrate-x1: exit code 1 (Error). Log:\nError: boom");
    // and the condition now carries the exit code too
    assertThat(migrationFailed(only(atFailed, SetConditions.class)).getMessage())
        .contains("exit code 1");
  }

  @Test
  void extendsRetentionFromTheTimeTheJobFailed() {
    Planner ttl120 = plannerWithTtl(120);
    Observation t0 = observe(d, null, Fixtures.job(d, "v1.14.0").failureTarget(NOW).build(), NOW);

    Plan failing = ttl120.plan(t0);
    Observation failedAt30 = PlanReplay.apply(t0, failing, NOW.plusSeconds(30));
    Job nowFailed = failedNow(failedAt30.job().orElseThrow(), NOW.plusSeconds(30));
    Observation t30 = failedAt30.withJob(nowFailed);
    Plan failed = ttl120.plan(t30);
    Plan stillRetained = ttl120.plan(PlanReplay.apply(t30, failed, NOW.plusSeconds(61)));

    assertThat(only(failing, PatchJob.class).annotations())
        .containsEntry(Keys.RETAIN_UNTIL, "2026-01-01T00:01:00Z");
    assertThat(failing.next()).isEqualTo(after(10));
    assertThat(failed.steps())
        .containsExactly(
            event(failed), new PatchJob(420, retention(NOW.plusSeconds(60), NOW.plusSeconds(150))));
    assertThat(failed.next()).isEqualTo(after(120));
    assertThat(kinds(stillRetained)).containsExactly(Emit.class);
    assertThat(stillRetained.next()).isEqualTo(after(89));
  }

  @Test
  void persistsTheDiagnosticsBeforeArmingAZeroTtl() {
    Job failed = Fixtures.job(d, "v1.14.0").failed(NOW).build();

    Plan plan = plannerWithTtl(0).plan(observe(d, null, failed, NOW));

    assertThat(plan.steps().subList(0, 4))
        .satisfiesExactly(
            s -> assertThat(s).isInstanceOf(SetConditions.class),
            s -> assertThat(s).isInstanceOf(Emit.class),
            s -> assertThat(s).isEqualTo(new SetRetryAfter(NOW.plusSeconds(60))),
            s ->
                assertThat(s)
                    .isEqualTo(
                        new PatchJob(360, retention(NOW.plusSeconds(60), NOW.plusSeconds(60)))));
    assertThat(plan.next()).isEqualTo(after(60));
  }

  @Test
  void onlyPatchesTheJobWhenTheConditionAndDeadlineAreAlreadyPersisted() {
    // The previous pass wrote the condition and the deadline, then the Job patch conflicted.
    Deployment persisted =
        Fixtures.deployment()
            .replicas(0)
            .desiredReplicas(3)
            .failedCondition("v1.14.0")
            .retryAfter(NOW.plusSeconds(60))
            .build();
    Job failed = Fixtures.job(persisted, "v1.14.0").failed(NOW).build();

    Plan plan = plannerWithTtl(0).plan(observe(persisted, null, failed, NOW));

    assertThat(kinds(plan)).containsExactly(Emit.class, PatchJob.class);
    assertThat(plan.steps().get(1))
        .isEqualTo(new PatchJob(360, retention(NOW.plusSeconds(60), NOW.plusSeconds(60))));
    assertThat(plan.next()).isEqualTo(after(60));
  }

  @Test
  void keepsTheFailedJobForTheWindowThenReplacesItExactlyOnce() {
    Planner ttl120 = plannerWithTtl(120);
    Observation o = observe(d, null, Fixtures.job(d, "v1.14.0").failed(NOW).build(), NOW);

    Plan first = ttl120.plan(o);
    Observation at119 = PlanReplay.apply(o, first, NOW.plusSeconds(119));
    Plan waiting = ttl120.plan(at119);
    Observation at120 = PlanReplay.apply(at119, waiting, NOW.plusSeconds(120));
    Plan deleting = ttl120.plan(at120);
    Observation at121 = PlanReplay.apply(at120, deleting, NOW.plusSeconds(121));
    Plan replacing = ttl120.plan(at121);
    Observation at122 = PlanReplay.apply(at121, replacing, NOW.plusSeconds(122));
    Plan running = ttl120.plan(at122);

    assertThat(first.steps())
        .containsExactly(
            only(first, SetConditions.class),
            event(first),
            new SetRetryAfter(NOW.plusSeconds(60)),
            new PatchJob(420, retention(NOW.plusSeconds(60), NOW.plusSeconds(120))));
    assertThat(first.next()).isEqualTo(after(120));
    assertThat(kinds(waiting)).containsExactly(Emit.class);
    assertThat(event(waiting).key()).isEqualTo(event(first).key());
    assertThat(waiting.next()).isEqualTo(after(1));
    assertThat(kinds(deleting)).containsExactly(Emit.class, DeleteJob.class);
    assertThat(deleting.next()).isEqualTo(after(1));
    assertThat(kinds(replacing))
        .containsExactly(CreateJob.class, ClearRetryAfter.class, Emit.class);
    assertThat(only(replacing, CreateJob.class).job().getSpec().getTtlSecondsAfterFinished())
        .isNull();
    assertThat(running.state()).isEqualTo(State.MIGRATING);
    assertThat(running.steps()).isEmpty();
    assertThat(running.next()).isEqualTo(after(10));
  }

  @Test
  void keepsTheRecordedRetentionWhenTheImageChanges() {
    Deployment upgraded =
        Fixtures.deployment()
            .image("openfga/openfga:v1.15.0")
            .replicas(0)
            .desiredReplicas(3)
            .retryAfter(NOW.plusSeconds(90))
            .build();
    Job failed =
        Fixtures.job(upgraded, "v1.14.0")
            .failed(NOW.minusSeconds(210))
            .retention(NOW.plusSeconds(90), NOW.plusSeconds(90))
            .ttl(390)
            .build();

    Plan plan = planner.plan(observe(upgraded, record(upgraded, "v1.13.0"), failed, NOW));

    assertThat(plan.state()).isEqualTo(State.FAILED);
    assertThat(kinds(plan)).containsExactly(SetConditions.class, Emit.class);
    assertThat(migrationFailed(only(plan, SetConditions.class)).getMessage())
        .contains("version v1.14.0");
    assertThat(event(plan).message()).contains("v1.14.0");
    assertThat(plan.next()).isEqualTo(after(90));
  }

  @Test
  void keepsALongerExistingRetryDeadline() {
    Deployment later = Fixtures.deployment().replicas(0).retryAfter(NOW.plusSeconds(3600)).build();
    Job failed = Fixtures.job(later, "v1.14.0").failed(NOW).build();

    Plan plan = planner.plan(observe(later, null, failed, NOW));

    assertThat(kinds(plan)).doesNotContain(SetRetryAfter.class);
    assertThat(only(plan, PatchJob.class).annotations())
        .containsEntry(Keys.RETRY_AFTER, "2026-01-01T01:00:00Z")
        .containsEntry(Keys.RETAIN_UNTIL, "2026-01-01T01:00:00Z");
    assertThat(plan.next()).isEqualTo(after(3600));
  }

  @Test
  void aLaterDeadlineSetOnTheDeploymentAfterTheJobRecordedItsOwnWins() {
    // rule 10: retry-after = max(existing future value, now + cooldown); a person holds the
    // retries for a day (database maintenance) after the failed Job recorded its deadline
    Deployment held = Fixtures.deployment().replicas(0).retryAfter(NOW.plusSeconds(86400)).build();
    Job failed =
        Fixtures.job(held, "v1.14.0")
            .failed(NOW.minusSeconds(30))
            .retention(NOW.plusSeconds(30), NOW.plusSeconds(270))
            .ttl(570)
            .build();

    Plan plan = planner.plan(observe(held, null, failed, NOW));

    assertThat(kinds(plan)).doesNotContain(SetRetryAfter.class);
    assertThat(only(plan, PatchJob.class).annotations())
        .containsEntry(Keys.RETRY_AFTER, "2026-01-02T00:00:00Z")
        .containsEntry(Keys.RETAIN_UNTIL, "2026-01-02T00:00:00Z");
    assertThat(plan.next()).isEqualTo(after(86400));
  }

  @Test
  void setsTheFailedConditionBeforeDeletingAnExpiredFailedJob() {
    // The retention expired, but the condition is not (or no longer) True.
    Deployment noCondition = Fixtures.deployment().replicas(0).build();
    Job expired =
        Fixtures.job(noCondition, "v1.14.0")
            .failed(NOW.minusSeconds(400))
            .retention(NOW.minusSeconds(10), NOW.minusSeconds(5))
            .ttl(305)
            .build();

    Plan plan = planner.plan(observe(noCondition, null, expired, NOW));

    assertThat(kinds(plan))
        .containsExactly(SetConditions.class, Emit.class, SetRetryAfter.class, DeleteJob.class);
    assertThat(plan.next()).isEqualTo(after(1));
  }

  @Test
  void disarmsALegacyTtlOfAFailedJobBeforeAnythingElse() {
    Job legacy = Fixtures.job(d, "v1.14.0").failed(NOW).ttl(0).build();

    Plan plan = planner.plan(observe(d, null, legacy, NOW));

    assertThat(kinds(plan))
        .containsExactly(
            PatchJob.class, SetConditions.class, Emit.class, SetRetryAfter.class, PatchJob.class);
    assertThat(plan.steps().get(0)).isEqualTo(new PatchJob(null, Map.of()));
    assertThat(plan.steps().get(4))
        .isEqualTo(new PatchJob(600, retention(NOW.plusSeconds(60), NOW.plusSeconds(300))));
  }

  @Test
  void emitsOneFailedEventPerFailedJob() {
    Job failed = Fixtures.job(d, "v1.14.0").failed(NOW).build();
    Job another = Fixtures.job(d, "v1.14.0").uid("second-attempt").failed(NOW).build();

    Emit first = event(planner.plan(observe(d, null, failed, NOW)));
    Emit again = event(planner.plan(observe(d, null, failed, NOW.plusSeconds(30))));
    Emit next = event(planner.plan(observe(d, null, another, NOW)));

    assertThat(again.key()).isEqualTo(first.key());
    assertThat(next.key()).isNotEqualTo(first.key());
  }

  @Test
  void neverRestoresReplicasAfterAFailure() {
    Job failed = Fixtures.job(d, "v1.14.0").failed(NOW.minusSeconds(1000)).build();

    Plan plan = planner.plan(observe(d, null, failed, NOW));

    assertThat(kinds(plan)).doesNotContain(Scale.class, CreateJob.class, WriteStatus.class);
  }

  @Test
  void makesNoWriteWhileRetainingARecordedFailure() {
    Job failed = Fixtures.job(d, "v1.14.0").failed(NOW).build();
    Observation o = observe(d, null, failed, NOW);

    Plan first = planner.plan(o);
    Plan resync = planner.plan(PlanReplay.apply(o, first, NOW.plusSeconds(100)));

    assertThat(kinds(resync)).containsExactly(Emit.class);
    assertThat(resync.next()).isEqualTo(after(200));
  }
}
