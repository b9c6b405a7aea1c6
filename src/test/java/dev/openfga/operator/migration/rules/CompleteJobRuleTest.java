package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.done;
import static dev.openfga.operator.migration.rules.PlannerFixtures.event;
import static dev.openfga.operator.migration.rules.PlannerFixtures.firstInstallRecord;
import static dev.openfga.operator.migration.rules.PlannerFixtures.kinds;
import static dev.openfga.operator.migration.rules.PlannerFixtures.migrationFailed;
import static dev.openfga.operator.migration.rules.PlannerFixtures.only;
import static dev.openfga.operator.migration.rules.PlannerFixtures.plannerWithTtl;
import static dev.openfga.operator.migration.rules.PlannerFixtures.record;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.observe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.ClearRestoreReplicas;
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

/**
 * Rule 7: the Job Complete for the desired version — the record, the TTL, the replicas ({@link
 * CompleteJobRule}).
 */
class CompleteJobRuleTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  @Test
  void recordsTheVersionThenArmsTheTtlThenScalesUp() {
    Deployment d =
        Fixtures.deployment()
            .condition("Available", "False", "MinimumReplicasUnavailable", "0/0")
            .failedCondition("v1.14.0")
            .replicas(0)
            .desiredReplicas(3)
            .build();
    Job complete = Fixtures.job(d, "v1.14.0").complete(NOW.minusSeconds(5)).build();

    // a first install: nothing recorded before
    Plan plan = planner.plan(observe(d, null, complete, NOW));

    assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(kinds(plan))
        .containsExactly(
            SetConditions.class,
            WriteStatus.class,
            PatchJob.class,
            Scale.class,
            ClearRestoreReplicas.class,
            Emit.class);
    // the record says the replicas are still to come until the scale is done
    assertThat(only(plan, WriteStatus.class).data())
        .containsEntry(Keys.DATA_RESTORE_REPLICAS, "true");
    SetConditions set = only(plan, SetConditions.class);
    assertThat(set.conditions())
        .extracting(DeploymentCondition::getType)
        .containsExactly("Available", "MigrationFailed");
    assertThat(migrationFailed(set).getStatus()).isEqualTo("False");
    assertThat(migrationFailed(set).getReason()).isEqualTo("MigrationSucceeded");
    assertThat(migrationFailed(set).getMessage()).isEqualTo("Migration completed successfully.");
    assertThat(plan.steps().subList(1, 4))
        .containsExactly(
            new WriteStatus(
                Map.of(
                    "version", "v1.14.0",
                    "migratedAt", "2026-01-01T00:00:00Z",
                    "jobName", "openfga-migrate",
                    "restoreReplicas", "true")),
            new PatchJob(300, Map.of()),
            new Scale(3));
    assertThat(event(plan).reason()).isEqualTo(EventReason.MigrationSucceeded);
    assertThat(event(plan).message()).contains("v1.14.0");
    assertThat(plan.next()).isEqualTo(done());
  }

  @Test
  void writesNoConditionOnSuccessWhenNoneWasSet() {
    Deployment d = Fixtures.deployment().replicas(3).desiredReplicas(3).build();
    Job complete = Fixtures.job(d, "v1.14.0").complete(NOW).build();

    Plan plan = planner.plan(observe(d, null, complete, NOW));

    assertThat(kinds(plan)).containsExactly(WriteStatus.class, PatchJob.class, Emit.class);
  }

  @Test
  void armsAZeroTtlOnlyAfterTheResultIsRecorded() {
    Deployment d = Fixtures.deployment().build();
    Job complete = Fixtures.job(d, "v1.14.0").complete(NOW).build();

    Plan plan = plannerWithTtl(0).plan(observe(d, null, complete, NOW));

    assertThat(kinds(plan)).containsExactly(WriteStatus.class, PatchJob.class, Emit.class);
    assertThat(plan.steps().get(1)).isEqualTo(new PatchJob(0, Map.of()));
  }

  @Test
  void armsTheTtlOnALaterPassWithoutMigratingAgain() {
    // The status write succeeded but the TTL patch did not (a conflict).
    Deployment d = Fixtures.deployment().replicas(3).build();
    Job complete = Fixtures.job(d, "v1.14.0").complete(NOW).build();

    Plan plan = plannerWithTtl(0).plan(observe(d, record(d, "v1.14.0"), complete, NOW));

    assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(plan.steps()).containsExactly(new PatchJob(0, Map.of()));
    assertThat(plan.next()).isEqualTo(done());
  }

  @Test
  void disarmsAnUnrecordedLegacyTtlBeforeRecordingTheResult() {
    Deployment d = Fixtures.deployment().replicas(3).build();
    Job complete = Fixtures.job(d, "v1.14.0").complete(NOW).ttl(0).build();

    Plan plan = planner.plan(observe(d, null, complete, NOW));

    assertThat(plan.steps().subList(0, 3))
        .containsExactly(
            new PatchJob(null, Map.of()),
            new WriteStatus(
                Map.of(
                    "version", "v1.14.0",
                    "migratedAt", "2026-01-01T00:00:00Z",
                    "jobName", "openfga-migrate")),
            new PatchJob(300, Map.of()));
    assertThat(kinds(plan).get(3)).isEqualTo(Emit.class);
    assertThat(plan.steps()).hasSize(4);
    assertThat(plan.next()).isEqualTo(done());
  }

  @Test
  void makesNoWriteOnceTheSuccessIsRecorded() {
    Deployment d =
        Fixtures.deployment().failedCondition("v1.14.0").replicas(0).desiredReplicas(3).build();
    Job complete = Fixtures.job(d, "v1.14.0").complete(NOW).build();
    Observation o = observe(d, record(d, "v1.13.0"), complete, NOW);

    Plan success = planner.plan(o);
    Plan resync = planner.plan(PlanReplay.apply(o, success, NOW.plusSeconds(600)));

    assertThat(success.steps()).isNotEmpty();
    assertThat(resync.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(resync.steps()).isEmpty();
    assertThat(resync.next()).isEqualTo(done());
  }

  @Test
  void emitsOneSucceededEventPerJob() {
    Deployment d = Fixtures.deployment().build();
    Job complete = Fixtures.job(d, "v1.14.0").complete(NOW).build();
    Job another = Fixtures.job(d, "v1.14.0").uid("another-job").complete(NOW).build();

    Emit first = event(planner.plan(observe(d, null, complete, NOW)));
    Emit again = event(planner.plan(observe(d, null, complete, NOW.plusSeconds(1))));
    Emit other = event(planner.plan(observe(d, null, another, NOW)));

    assertThat(again.key()).isEqualTo(first.key());
    assertThat(other.key()).isNotEqualTo(first.key());
  }

  @Test
  void aFirstInstallWhoseScaleWasNotMadeBeforeAnUpgradeScalesWhenTheUpgradeSucceeds() {
    // the first record says the replicas are still to come; the image changed before the scale
    Deployment d = Fixtures.deployment().version("v1.15.0").replicas(0).desiredReplicas(3).build();
    Job complete = Fixtures.job(d, "v1.15.0").complete(NOW.minusSeconds(5)).build();

    Plan plan = planner.plan(observe(d, firstInstallRecord(d, "v1.14.0"), complete, NOW));

    assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(only(plan, WriteStatus.class).data())
        .containsEntry(Keys.DATA_VERSION, "v1.15.0")
        .containsEntry(Keys.DATA_RESTORE_REPLICAS, "true");
    assertThat(only(plan, Scale.class)).isEqualTo(new Scale(3));
    assertThat(plan.steps()).anyMatch(step -> step instanceof ClearRestoreReplicas);
  }
}
