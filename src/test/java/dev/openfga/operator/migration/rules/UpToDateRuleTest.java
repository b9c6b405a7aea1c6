package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.after;
import static dev.openfga.operator.migration.rules.PlannerFixtures.done;
import static dev.openfga.operator.migration.rules.PlannerFixtures.firstInstallRecord;
import static dev.openfga.operator.migration.rules.PlannerFixtures.kinds;
import static dev.openfga.operator.migration.rules.PlannerFixtures.migrationFailed;
import static dev.openfga.operator.migration.rules.PlannerFixtures.only;
import static dev.openfga.operator.migration.rules.PlannerFixtures.record;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.observe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.ClearRestoreReplicas;
import dev.openfga.operator.migration.rules.Step.DeleteJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.PatchJob;
import dev.openfga.operator.migration.rules.Step.Scale;
import dev.openfga.operator.migration.rules.Step.SetConditions;
import dev.openfga.operator.migration.rules.Step.WriteStatus;
import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.PlanReplay;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Rule 6: the database at the desired version, leftover Jobs, the replicas ({@link UpToDateRule}).
 */
class UpToDateRuleTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  @Test
  void finishesAFirstInstallThatCrashedBetweenTheRecordAndTheScale() {
    Deployment d = Fixtures.deployment().replicas(0).desiredReplicas(3).build();

    Plan plan = planner.plan(observe(d, firstInstallRecord(d, "v1.14.0"), null, NOW));

    assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(plan.steps()).containsExactly(new Scale(3), new ClearRestoreReplicas());
    assertThat(plan.next()).isEqualTo(done());
  }

  @Test
  void leavesADeliberateScaleToZeroAlone() {
    // maintenance, or KEDA's scale to zero, long after the first install
    Deployment d = Fixtures.deployment().replicas(0).desiredReplicas(3).build();

    Plan plan = planner.plan(observe(d, record(d, "v1.14.0"), null, NOW));

    assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(plan.steps()).isEmpty();
  }

  @Test
  void anUpgradeNeverScalesADeploymentAtZero() {
    Deployment d = Fixtures.deployment().replicas(0).desiredReplicas(3).build();
    Job complete = Fixtures.job(d, "v1.14.0").complete(NOW.minusSeconds(5)).build();

    Plan plan = planner.plan(observe(d, record(d, "v1.13.0"), complete, NOW));

    assertThat(kinds(plan)).containsExactly(WriteStatus.class, PatchJob.class, Emit.class);
    assertThat(only(plan, WriteStatus.class).data()).doesNotContainKey(Keys.DATA_RESTORE_REPLICAS);
  }

  @ParameterizedTest(name = "replicas={0}, desired-replicas={1}")
  @CsvSource(
      nullValues = "null",
      value = {"2, 3", "5, 3", "null, 3", "0, 0", "0, null", "1, null"})
  void leavesTheReplicaCountAloneUnlessItIsZero(Integer replicas, Integer desired) {
    var fixture = Fixtures.deployment().replicas(replicas);
    if (desired != null) {
      fixture.desiredReplicas(desired);
    }
    Deployment d = fixture.build();

    Plan plan = planner.plan(observe(d, record(d, "v1.14.0"), null, NOW));

    assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(plan.steps()).isEmpty();
    assertThat(plan.next()).isEqualTo(done());
  }

  @Test
  void clearsATrueFailedConditionKeepingTheOthers() {
    Deployment d =
        Fixtures.deployment()
            .condition("Available", "True", "MinimumReplicasAvailable", "ok")
            .failedCondition("v1.14.0")
            .replicas(3)
            .build();

    Plan plan = planner.plan(observe(d, record(d, "v1.14.0"), null, NOW));

    SetConditions set = only(plan, SetConditions.class);
    assertThat(plan.steps()).containsExactly(set);
    assertThat(set.conditions())
        .extracting(DeploymentCondition::getType)
        .containsExactly("Available", "MigrationFailed");
    assertThat(set.conditions().get(0)).isEqualTo(d.getStatus().getConditions().get(0));
    assertThat(migrationFailed(set).getStatus()).isEqualTo("False");
    assertThat(migrationFailed(set).getReason()).isEqualTo("MigrationSucceeded");
    assertThat(plan.next()).isEqualTo(done());
  }

  @Test
  void makesNoWriteWhenTheConditionIsAlreadyCleared() {
    Deployment d = Fixtures.deployment().clearedCondition().replicas(3).build();
    Observation o = observe(d, record(d, "v1.14.0"), null, NOW);

    Plan first = planner.plan(o);
    Plan second = planner.plan(PlanReplay.apply(o, first, NOW.plusSeconds(30)));

    assertThat(first.steps()).isEmpty();
    assertThat(second.steps()).isEmpty();
    assertThat(second.next()).isEqualTo(done());
  }

  @Test
  void clearsTheConditionBeforeRestoringReplicas() {
    Deployment d = Fixtures.deployment().failedCondition("v1.14.0").desiredReplicas(3).build();

    Plan plan = planner.plan(observe(d, firstInstallRecord(d, "v1.14.0"), null, NOW));

    assertThat(kinds(plan))
        .containsExactly(SetConditions.class, Scale.class, ClearRestoreReplicas.class);
  }

  @Test
  void armsTheTtlOfTheCompletedJobOnce() {
    Deployment d = Fixtures.deployment().replicas(3).build();
    Job complete = Fixtures.job(d, "v1.14.0").complete(NOW.minusSeconds(30)).build();
    Observation o = observe(d, record(d, "v1.14.0"), complete, NOW);

    Plan plan = planner.plan(o);
    Plan again = planner.plan(PlanReplay.apply(o, plan, NOW.plusSeconds(1)));

    assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(plan.steps()).containsExactly(new PatchJob(300, Map.of()));
    assertThat(plan.next()).isEqualTo(done());
    assertThat(again.steps()).isEmpty();
  }

  @Test
  void deletesACompletedJobForAnotherVersionBeforeScaling() {
    Deployment d = Fixtures.deployment().replicas(0).desiredReplicas(3).build();
    Job other = Fixtures.job(d, "v1.15.0").complete(NOW.minusSeconds(60)).build();
    Observation o = observe(d, firstInstallRecord(d, "v1.14.0"), other, NOW);

    Plan plan = planner.plan(o);
    Plan next = planner.plan(PlanReplay.apply(o, plan, NOW.plusSeconds(1)));

    assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(kinds(plan)).containsExactly(DeleteJob.class);
    assertThat(plan.next()).isEqualTo(after(1));
    assertThat(next.steps()).containsExactly(new Scale(3), new ClearRestoreReplicas());
    assertThat(next.next()).isEqualTo(done());
  }

  @Test
  void letsARunningJobForAnotherVersionFinishInsteadOfDeletingIt() {
    Deployment d = Fixtures.deployment().replicas(0).desiredReplicas(3).build();
    Job running = Fixtures.job(d, "v1.15.0").running().build();

    Plan plan = planner.plan(observe(d, record(d, "v1.14.0"), running, NOW));

    assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(plan.steps()).isEmpty();
    assertThat(plan.next()).isEqualTo(after(10));
  }

  @Test
  void deletesALeftoverJobWhosePodNeverStarted() {
    Deployment d = Fixtures.deployment().replicas(0).desiredReplicas(3).build();
    Job stuck = Fixtures.job(d, "v1.15.0").podNeverStarted().build();

    Plan plan = planner.plan(observe(d, record(d, "v1.14.0"), stuck, NOW));

    assertThat(kinds(plan)).containsExactly(DeleteJob.class);
    assertThat(plan.next()).isEqualTo(after(1));
  }

  @Test
  void waitsForATerminatingJobBeforeScaling() {
    Deployment d = Fixtures.deployment().replicas(0).desiredReplicas(3).build();
    Job terminating = Fixtures.job(d, "v1.15.0").complete(NOW).terminating().build();

    Plan plan = planner.plan(observe(d, record(d, "v1.14.0"), terminating, NOW));

    assertThat(plan.steps()).isEmpty();
    assertThat(plan.next()).isEqualTo(after(1));
  }

  @Test
  void ignoresALeftoverJobItDoesNotOwnWhenTheDatabaseIsUpToDate() {
    Deployment d = Fixtures.deployment().replicas(0).desiredReplicas(3).build();
    Job foreign =
        Fixtures.job(d, "v1.15.0").withoutLabel(Keys.MANAGED_BY).ownerReferences().build();

    Plan plan = planner.plan(observe(d, firstInstallRecord(d, "v1.14.0"), foreign, NOW));

    assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(plan.steps()).containsExactly(new Scale(3), new ClearRestoreReplicas());
    assertThat(plan.next()).isEqualTo(done());
  }

  @Test
  void stillRetainsAndThenDeletesAFailedAttemptForAnotherVersion() {
    // A rollback: v1.14.0 is recorded, a failed v1.15.0 attempt is still retained.
    Deployment d =
        Fixtures.deployment()
            .replicas(3)
            .failedCondition("v1.15.0")
            .retryAfter(NOW.plusSeconds(90))
            .build();
    Job failed =
        Fixtures.job(d, "v1.15.0")
            .failed(NOW.minusSeconds(210))
            .retention(NOW.plusSeconds(90), NOW.plusSeconds(90))
            .ttl(390)
            .build();
    Observation o = observe(d, record(d, "v1.14.0"), failed, NOW);

    Plan retained = planner.plan(o);
    Observation atDeadline = PlanReplay.apply(o, retained, NOW.plusSeconds(90));
    Plan deleting = planner.plan(atDeadline);
    Plan after = planner.plan(PlanReplay.apply(atDeadline, deleting, NOW.plusSeconds(91)));

    assertThat(retained.state()).isEqualTo(State.FAILED);
    assertThat(kinds(retained)).containsExactly(Emit.class);
    assertThat(retained.next()).isEqualTo(after(90));
    assertThat(kinds(deleting)).containsExactly(Emit.class, DeleteJob.class);
    assertThat(deleting.next()).isEqualTo(after(1));
    assertThat(after.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(kinds(after)).containsExactly(SetConditions.class);
    assertThat(after.next()).isEqualTo(done());
  }
}
