package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.done;
import static dev.openfga.operator.migration.rules.PlannerFixtures.event;
import static dev.openfga.operator.migration.rules.PlannerFixtures.kinds;
import static dev.openfga.operator.migration.rules.PlannerFixtures.record;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.observe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan.Next;
import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.RepairStatusOwner;
import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.PlanReplay;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Rule 5: the record, and ConfigMaps of its name that are not its ({@link RecordRule}). */
class RecordRuleTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  @Test
  void refusesAnUnmanagedConfigMapOfTheSameName() {
    Deployment d = Fixtures.deployment().desiredReplicas(3).build();
    ConfigMap foreign =
        Fixtures.statusConfigMap(d, "v1.14.0")
            .editMetadata()
            .withLabels(Map.of("owner", "user-owned"))
            .endMetadata()
            .build();

    Plan plan = planner.plan(observe(d, foreign, null, NOW));

    assertThat(plan.state()).isEqualTo(State.BLOCKED);
    assertThat(kinds(plan)).containsExactly(Emit.class);
    assertThat(event(plan).reason()).isEqualTo(EventReason.MigrationStatusConflict);
    // another foreign ConfigMap later: news again
    foreign.getMetadata().setUid("another-foreign-configmap");
    assertThat(event(planner.plan(observe(d, foreign, null, NOW))).key())
        .isNotEqualTo(event(plan).key());
    assertThat(event(plan).reason().warning()).isTrue();
    assertThat(plan.next())
        .isInstanceOfSatisfying(
            Next.Blocked.class,
            b ->
                assertThat(b.problem())
                    .contains("default/openfga-migration-status")
                    .contains("exists but is not managed"));
  }

  @Test
  void neverOverwritesAnUnmanagedConfigMapWhenTheJobSucceeded() {
    Deployment d = Fixtures.deployment().desiredReplicas(3).build();
    ConfigMap foreign =
        Fixtures.statusConfigMap(d, "user-owned")
            .editMetadata()
            .withLabels(Map.of())
            .endMetadata()
            .build();
    Job complete = Fixtures.job(d, "v1.14.0").complete(NOW).build();

    Plan plan = planner.plan(observe(d, foreign, complete, NOW));

    assertThat(plan.state()).isEqualTo(State.BLOCKED);
    assertThat(kinds(plan)).containsExactly(Emit.class);
  }

  @ParameterizedTest(name = "recorded {0}")
  @ValueSource(strings = {"v1.14.0", "v1.13.0"})
  void refusesARecordControlledByAnotherDeploymentBeforeAnyJob(String recorded) {
    Deployment d = Fixtures.deployment().build();
    ConfigMap other =
        Fixtures.statusConfigMap(d, recorded)
            .editMetadata()
            .withOwnerReferences(Fixtures.controllerRef("another-deployment", "other-uid"))
            .endMetadata()
            .build();

    Plan plan = planner.plan(observe(d, other, null, NOW));

    assertThat(plan.state()).isEqualTo(State.BLOCKED);
    assertThat(kinds(plan)).containsExactly(Emit.class);
    assertThat(plan.next())
        .isInstanceOfSatisfying(
            Next.Blocked.class,
            b -> assertThat(b.problem()).contains("controlled by Deployment another-deployment"));
  }

  @Test
  void repairsTheRecordOfARecreatedDeploymentWithoutMigratingAgain() {
    Deployment d = Fixtures.deployment().uid("new-uid").replicas(3).build();
    ConfigMap old =
        Fixtures.statusConfigMap(d, "v1.14.0")
            .editMetadata()
            .withOwnerReferences(Fixtures.controllerRef("openfga", "test-uid-123"))
            .endMetadata()
            .build();
    Observation first = observe(d, old, null, NOW);

    Plan plan = planner.plan(first);
    Plan again = planner.plan(PlanReplay.apply(first, plan, NOW.plusSeconds(1)));

    assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(plan.steps()).containsExactly(new RepairStatusOwner());
    assertThat(plan.next()).isEqualTo(done());
    assertThat(again.steps()).isEmpty();
    assertThat(again.next()).isEqualTo(done());
  }

  @Test
  void repairsTheRecordBeforeMigratingARecreatedDeployment() {
    Deployment d = Fixtures.deployment().uid("new-uid").image("openfga/openfga:v1.15.0").build();
    ConfigMap old =
        Fixtures.statusConfigMap(d, "v1.14.0")
            .editMetadata()
            .withOwnerReferences(Fixtures.controllerRef("openfga", "test-uid-123"))
            .endMetadata()
            .build();

    Plan plan = planner.plan(observe(d, old, null, NOW));

    assertThat(kinds(plan)).containsExactly(RepairStatusOwner.class, CreateJob.class, Emit.class);
  }

  @Test
  void treatsARecordWithoutVersionAsAFirstInstall() {
    Deployment d = Fixtures.deployment().build();

    Plan plan = planner.plan(observe(d, record(d, ""), null, NOW));

    assertThat(kinds(plan)).containsExactly(CreateJob.class, Emit.class);
    assertThat(event(plan).message()).contains("first install");
  }
}
