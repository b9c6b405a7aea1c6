package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.after;
import static dev.openfga.operator.migration.rules.PlannerFixtures.event;
import static dev.openfga.operator.migration.rules.PlannerFixtures.kinds;
import static dev.openfga.operator.migration.rules.PlannerFixtures.only;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.observe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.DeleteJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.PlanReplay;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Rule 7: the legacy Helm hook Job of the same release, adopted; any other foreign Job refused
 * ({@link ForeignJobRule}).
 */
class ForeignJobRuleTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  private Deployment chartDeployment() {
    Deployment chart = Fixtures.upstreamChart("hook-mode.yaml", Deployment.class);
    return new DeploymentBuilder(chart)
        .editMetadata()
        .withNamespace("openfga")
        .withUid("chart-uid")
        .addToLabels("helm.sh/chart", "openfga-0.4.0")
        .addToAnnotations(Keys.MIGRATION_ENABLED, "true")
        .endMetadata()
        .build();
  }

  private JobBuilder chartHookJob() {
    Job job = Fixtures.upstreamChart("hook-mode.yaml", Job.class);
    return new JobBuilder(job)
        .editMetadata()
        .withNamespace("openfga")
        .withUid("hook-uid")
        .withResourceVersion("42")
        .endMetadata()
        .withNewStatus()
        .withSucceeded(1)
        .addNewCondition()
        .withType("Complete")
        .withStatus("True")
        .endCondition()
        .endStatus();
  }

  @Test
  void deletesTheHookJobOfAnOlderChartVersionThenCreatesItsOwn() {
    Deployment d = chartDeployment();
    Observation o = observe(d, null, chartHookJob().build(), NOW);

    Plan adopt = planner.plan(o);
    Plan create = planner.plan(PlanReplay.apply(o, adopt, NOW.plusSeconds(1)));

    assertThat(adopt.state()).isEqualTo(State.MIGRATING);
    assertThat(kinds(adopt)).containsExactly(DeleteJob.class, Emit.class);
    assertThat(event(adopt).reason()).isEqualTo(EventReason.LegacyHookJobAdopted);
    assertThat(adopt.next()).isEqualTo(after(1));
    assertThat(kinds(create)).containsExactly(CreateJob.class, Emit.class);
    Job job = only(create, CreateJob.class).job();
    assertThat(MigrationJob.isTrusted(job, d)).isTrue();
    assertThat(only(create, CreateJob.class).version()).isEqualTo("v1.18.3");
  }

  @Test
  void letsARunningHookJobFinishBeforeAdoptingIt() {
    Deployment d = chartDeployment();
    Job running = chartHookJob().withNewStatus().withActive(1).withReady(1).endStatus().build();

    Plan plan = planner.plan(observe(d, null, running, NOW));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    assertThat(plan.steps()).isEmpty();
    assertThat(plan.summary()).contains("legacy Helm hook Job finish");
    assertThat(plan.next()).isEqualTo(after(10));
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource({
    "app.kubernetes.io/instance, other-release",
    "app.kubernetes.io/name, other-name",
    "app.kubernetes.io/part-of, other",
    "app.kubernetes.io/component, migration",
  })
  void refusesAHookJobOfAnotherRelease(String label, String value) {
    Job job = chartHookJob().editMetadata().addToLabels(label, value).endMetadata().build();

    Plan plan = planner.plan(observe(chartDeployment(), null, job, NOW));

    assertThat(plan.state()).isEqualTo(State.BLOCKED);
    assertThat(kinds(plan)).containsExactly(Emit.class);
    assertThat(event(plan).reason()).isEqualTo(EventReason.MigrationJobConflict);
  }

  @ParameterizedTest(name = "helm.sh/hook \"{0}\"")
  @ValueSource(strings = {"", "test", "backup,cleanup", "pre-upgrade,test"})
  void refusesAHelmJobThatIsNotAMigrationHook(String hook) {
    Job job =
        chartHookJob().editMetadata().addToAnnotations(Keys.HELM_HOOK, hook).endMetadata().build();

    Plan plan = planner.plan(observe(chartDeployment(), null, job, NOW));

    assertThat(plan.state()).isEqualTo(State.BLOCKED);
    assertThat(kinds(plan)).containsExactly(Emit.class);
    assertThat(event(plan).reason()).isEqualTo(EventReason.MigrationJobConflict);
  }
}
