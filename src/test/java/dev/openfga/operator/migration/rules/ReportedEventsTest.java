package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.event;
import static dev.openfga.operator.migration.rules.PlannerFixtures.kinds;
import static dev.openfga.operator.migration.rules.PlannerFixtures.only;
import static dev.openfga.operator.migration.rules.PlannerFixtures.record;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.env;
import static dev.openfga.operator.testing.Fixtures.observe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.migration.rules.Plan.Next;
import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.MarkReported;
import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.PlanReplay;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Events about a lasting state, listed on the Deployment once sent ({@link Reported}). */
class ReportedEventsTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  private final Deployment sqlite =
      Fixtures.deployment()
          .env(env("OPENFGA_DATASTORE_ENGINE", "sqlite"))
          .initContainer(Fixtures.sqliteMigrate())
          .replicas(3)
          .build();

  private Deployment downgraded() {
    return Fixtures.deployment().version("v1.13.0").replicas(3).build();
  }

  private Deployment badReplicas(String value) {
    return Fixtures.deployment().annotation(Keys.DESIRED_REPLICAS, value).replicas(3).build();
  }

  /** The plan, then the plan of a restarted operator that sees what the first one wrote. */
  private Plan afterRestart(Observation o) {
    Plan first = planner.plan(o);
    return planner.plan(PlanReplay.apply(o, first, NOW.plusSeconds(3600)));
  }

  @Test
  void aSqliteSkipIsListedOnceSentAndNotSentAgainAfterARestart() {
    Plan first = planner.plan(observe(sqlite));

    assertThat(event(first).reason()).isEqualTo(EventReason.MigrationSkipped);
    assertThat(only(first, MarkReported.class).ids())
        .containsExactly(Reported.id(sqlite, event(first)));
    Plan restarted = afterRestart(observe(sqlite));
    assertThat(restarted.state()).isEqualTo(State.SKIPPED);
    assertThat(restarted.steps()).isEmpty();
  }

  @Test
  void aDowngradeIsListedOnceSentAndNotSentAgainAfterARestart() {
    Deployment d = downgraded();
    Observation o = observe(d, record(d, "v1.14.0"), null, NOW);

    Plan first = planner.plan(o);

    assertThat(first.state()).isEqualTo(State.DOWNGRADED);
    assertThat(kinds(first)).containsExactly(Emit.class, MarkReported.class);
    assertThat(event(first).reason()).isEqualTo(EventReason.MigrationDowngrade);
    assertThat(afterRestart(o).steps()).isEmpty();
  }

  @Test
  void anInvalidAnnotationIsListedOnceSentAndNotSentAgainAfterARestart() {
    Deployment d = badReplicas("three");
    Observation o = observe(d, record(d, "v1.14.0"), null, NOW);

    Plan first = planner.plan(o);

    assertThat(first.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(kinds(first)).containsExactly(Emit.class, MarkReported.class);
    assertThat(event(first).reason()).isEqualTo(EventReason.InvalidConfiguration);
    Plan restarted = afterRestart(o);
    assertThat(restarted.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(restarted.steps()).isEmpty();
  }

  @Test
  void aBlockedDeploymentsWarningIsNotSentAgainAfterARestartEither() {
    Deployment d =
        Fixtures.deployment()
            .env(env("OPENFGA_DATASTORE_ENGINE", "sqlite"))
            .annotation(Keys.CONTAINER_NAME, "server")
            .build();

    Plan restarted = afterRestart(observe(d));

    assertThat(restarted.state()).isEqualTo(State.BLOCKED);
    assertThat(restarted.steps()).isEmpty();
    assertThat(restarted.next()).isInstanceOf(Next.Blocked.class);
  }

  @Test
  void theListedIdIsTheEndOfTheEventsName() {
    Emit skipped = event(planner.plan(observe(sqlite)));

    // as EventRecorder names it: the Deployment's uid, the reason and the key
    assertThat(
            Names.event(
                Fixtures.NAME, Fixtures.UID + "/" + skipped.reason().name() + "/" + skipped.key()))
        .isEqualTo(Fixtures.NAME + "." + Reported.id(sqlite, skipped));
  }

  @Test
  void aNewProblemIsSentAloneAndListedWithTheOnesSentBefore() {
    Deployment d = badReplicas("three");
    Observation o = observe(d, record(d, "v1.14.0"), null, NOW);
    Observation reported = PlanReplay.apply(o, planner.plan(o), NOW);
    String before = Reported.recorded(reported.deployment()).iterator().next();
    Deployment worse =
        new DeploymentBuilder(reported.deployment())
            .editMetadata()
            .addToAnnotations(Keys.MIGRATE_REQUESTED_AT, "yesterday")
            .endMetadata()
            .build();

    Plan plan = planner.plan(observe(worse, record(d, "v1.14.0"), null, NOW));

    assertThat(kinds(plan)).containsExactly(Emit.class, MarkReported.class);
    assertThat(event(plan).message()).contains(Keys.MIGRATE_REQUESTED_AT, "yesterday");
    assertThat(only(plan, MarkReported.class).ids())
        .containsExactlyInAnyOrder(before, Reported.id(worse, event(plan)));
  }

  @Test
  void aFixedProblemLeavesTheListSoTheSameProblemLaterIsSentAgain() {
    Deployment d = badReplicas("three");
    Observation o = observe(d, record(d, "v1.14.0"), null, NOW);
    Deployment reported = PlanReplay.apply(o, planner.plan(o), NOW).deployment();
    Deployment fixed =
        new DeploymentBuilder(reported)
            .editMetadata()
            .addToAnnotations(Keys.DESIRED_REPLICAS, "3")
            .endMetadata()
            .build();

    Observation atFix = observe(fixed, record(d, "v1.14.0"), null, NOW);
    Plan fix = planner.plan(atFix);

    assertThat(fix.steps()).containsExactly(new MarkReported(List.of()));
    Deployment broken =
        new DeploymentBuilder(PlanReplay.apply(atFix, fix, NOW).deployment())
            .editMetadata()
            .addToAnnotations(Keys.DESIRED_REPLICAS, "three")
            .endMetadata()
            .build();
    assertThat(Reported.recorded(broken)).isEmpty();
    Plan again = planner.plan(observe(broken, record(d, "v1.14.0"), null, NOW));
    assertThat(event(again).reason()).isEqualTo(EventReason.InvalidConfiguration);
  }

  @Test
  void aConvergedDeploymentWithNothingToReportWritesNothing() {
    Deployment d = Fixtures.deployment().replicas(3).build();

    Plan plan = planner.plan(observe(d, record(d, "v1.14.0"), null, NOW));

    assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(plan.steps()).isEmpty();
  }

  @Test
  void eventsOfOneTransitionAreNeverListed() {
    Plan plan = planner.plan(observe(Fixtures.deployment().build()));

    assertThat(kinds(plan)).containsExactly(CreateJob.class, Emit.class);
    assertThat(event(plan).reason()).isEqualTo(EventReason.MigrationStarted);
  }

  @Test
  void anUpgradeAfterARollbackCreatesTheJobFirstAndEmptiesTheListAfterIt() {
    Deployment d = downgraded();
    Observation o = observe(d, record(d, "v1.14.0"), null, NOW);
    Deployment reported = PlanReplay.apply(o, planner.plan(o), NOW).deployment();
    Deployment upgraded =
        new DeploymentBuilder(reported)
            .editSpec()
            .editTemplate()
            .editSpec()
            .editFirstContainer()
            .withImage("openfga/openfga:v1.15.0")
            .endContainer()
            .endSpec()
            .endTemplate()
            .endSpec()
            .build();

    Plan plan = planner.plan(observe(upgraded, record(d, "v1.14.0"), null, NOW));

    // SPEC section 8: nothing before the Job create
    assertThat(kinds(plan)).containsExactly(CreateJob.class, Emit.class, MarkReported.class);
    assertThat(only(plan, MarkReported.class).ids()).isEmpty();
  }

  @Test
  void aDeploymentTheOperatorIgnoresKeepsItsListUntouched() {
    Deployment d = downgraded();
    Observation o = observe(d, record(d, "v1.14.0"), null, NOW);
    Deployment optedOut =
        new DeploymentBuilder(PlanReplay.apply(o, planner.plan(o), NOW).deployment())
            .editMetadata()
            .addToAnnotations(Keys.MIGRATION_ENABLED, "false")
            .endMetadata()
            .build();

    Plan plan = planner.plan(observe(optedOut));

    assertThat(plan.state()).isEqualTo(State.IGNORED);
    assertThat(plan.steps()).isEmpty();
  }

  @Test
  void theDecisionKeepsEveryEventForTheStatusView() {
    Deployment d = downgraded();
    Observation o = observe(d, record(d, "v1.14.0"), null, NOW);
    Observation restarted = PlanReplay.apply(o, planner.plan(o), NOW);

    assertThat(kinds(planner.decide(restarted))).containsExactly(Emit.class);
  }
}
