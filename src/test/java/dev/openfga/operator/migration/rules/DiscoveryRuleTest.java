package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.done;
import static dev.openfga.operator.migration.rules.PlannerFixtures.kinds;
import static dev.openfga.operator.migration.rules.PlannerFixtures.record;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.observe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.PatchJob;
import dev.openfga.operator.migration.rules.Step.WriteStatus;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Rule 1: only Deployments with both discovery labels and the exact opt-in ({@link DiscoveryRule}).
 */
class DiscoveryRuleTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  @ParameterizedTest(name = "part-of={0}, component={1}")
  @CsvSource(
      nullValues = "null",
      value = {
        "null, authorization-controller",
        "openfga, null",
        "other, authorization-controller",
        "openfga, migration",
        "null, null"
      })
  void ignoresADeploymentWithoutBothDiscoveryLabelsEvenWithWorkPending(
      String partOf, String component) {
    var fixture = Fixtures.deployment().withoutLabel(Keys.PART_OF).withoutLabel(Keys.COMPONENT);
    if (partOf != null) {
      fixture.label(Keys.PART_OF, partOf);
    }
    if (component != null) {
      fixture.label(Keys.COMPONENT, component);
    }
    Deployment d = fixture.desiredReplicas(3).failedCondition("v1.14.0").build();
    Job complete = Fixtures.job(d, "v1.14.0").complete(NOW).build();

    Plan plan = planner.plan(observe(d, record(d, "v1.13.0"), complete, NOW));

    assertThat(plan.state()).isEqualTo(State.IGNORED);
    assertThat(plan.steps()).isEmpty();
    assertThat(plan.next()).isEqualTo(done());
  }

  @Test
  void actsOnTheSameRequestWhenBothDiscoveryLabelsArePresent() {
    Deployment d = Fixtures.deployment().build();
    Job complete = Fixtures.job(d, "v1.14.0").complete(NOW).build();

    Plan plan = planner.plan(observe(d, record(d, "v1.13.0"), complete, NOW));

    assertThat(kinds(plan)).containsExactly(WriteStatus.class, PatchJob.class, Emit.class);
  }

  @ParameterizedTest(name = "migration-enabled={0}")
  @ValueSource(strings = {"<absent>", "false", "True", "yes", ""})
  void skipsADeploymentThatDidNotOptIn(String value) {
    var fixture = Fixtures.deployment().desiredReplicas(3).replicas(0);
    if (value.equals("<absent>")) {
      fixture.withoutAnnotation(Keys.MIGRATION_ENABLED);
    } else {
      fixture.annotation(Keys.MIGRATION_ENABLED, value);
    }

    Plan plan = planner.plan(observe(fixture.build()));

    assertThat(plan.state()).isEqualTo(State.IGNORED);
    assertThat(plan.steps()).isEmpty();
    assertThat(plan.next()).isEqualTo(done());
  }

  @Test
  void doesNotReportMalformedAnnotationsOfADeploymentThatDidNotOptIn() {
    Deployment d =
        Fixtures.deployment()
            .withoutAnnotation(Keys.MIGRATION_ENABLED)
            .annotation(Keys.DESIRED_REPLICAS, "three")
            .build();

    assertThat(planner.plan(observe(d)).steps()).isEmpty();
  }
}
