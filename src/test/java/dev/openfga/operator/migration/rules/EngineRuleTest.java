package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.done;
import static dev.openfga.operator.migration.rules.PlannerFixtures.event;
import static dev.openfga.operator.migration.rules.PlannerFixtures.kinds;
import static dev.openfga.operator.migration.rules.PlannerFixtures.migrationFailed;
import static dev.openfga.operator.migration.rules.PlannerFixtures.only;
import static dev.openfga.operator.migration.rules.PlannerFixtures.record;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.env;
import static dev.openfga.operator.testing.Fixtures.observe;
import static dev.openfga.operator.testing.Fixtures.secretEnv;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.ClearRestoreReplicas;
import dev.openfga.operator.migration.rules.Step.ClearRetryAfter;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.MarkFirstInstall;
import dev.openfga.operator.migration.rules.Step.MarkReported;
import dev.openfga.operator.migration.rules.Step.Scale;
import dev.openfga.operator.migration.rules.Step.SetConditions;
import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.PlanReplay;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Rule 4: the engines that need no Job, and their first-install restore ({@link EngineRule}). */
class EngineRuleTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  @Test
  void skipsTheMigrationOfAMemoryDatastoreAndRestoresReplicas() {
    Deployment d =
        Fixtures.deployment()
            .env(env("OPENFGA_DATASTORE_ENGINE", "memory"))
            .desiredReplicas(1)
            .build();

    Plan plan = planner.plan(observe(d));

    assertThat(plan.state()).isEqualTo(State.SKIPPED);
    assertThat(plan.steps()).containsExactly(new Scale(1));
    assertThat(plan.next()).isEqualTo(done());
  }

  @ParameterizedTest(name = "ENGINE={0}")
  @ValueSource(strings = {"MEMORY", "Memory", "SQLite", "Postgres"})
  void spellsEnginesAsOpenFgaDoesAnyOtherSpellingIsMigrated(String engine) {
    // OpenFGA's engine names are case-sensitive: migrate itself reports the unknown engine
    Deployment d = Fixtures.deployment().env(env("OPENFGA_DATASTORE_ENGINE", engine)).build();

    assertThat(kinds(planner.plan(observe(d)))).contains(CreateJob.class);
  }

  @Test
  void skipsSqliteWithItsMigrateInitContainerWithANormalEvent() {
    Deployment d =
        Fixtures.deployment()
            .env(
                env("OPENFGA_DATASTORE_ENGINE", "sqlite"),
                env("OPENFGA_DATASTORE_URI", "file:/var/lib/openfga/openfga.db"))
            .initContainer(Fixtures.sqliteMigrate())
            .desiredReplicas(1)
            .build();

    Plan plan = planner.plan(observe(d));

    assertThat(plan.state()).isEqualTo(State.SKIPPED);
    assertThat(kinds(plan)).containsExactly(Emit.class, Scale.class, MarkReported.class);
    assertThat(event(plan).reason()).isEqualTo(EventReason.MigrationSkipped);
    assertThat(event(plan).reason().warning()).isFalse();
    assertThat(event(plan).message()).contains("sqlite", "migrate-sqlite");
    assertThat(plan.next()).isEqualTo(done());
  }

  @Test
  void tellsWhatToAddWhenSqliteHasNoMigrateInitContainer() {
    // measured: OpenFGA never migrates a sqlite file itself; the pod stays NOT_SERVING
    Deployment d =
        Fixtures.deployment()
            .env(env("OPENFGA_DATASTORE_ENGINE", "sqlite"))
            .initContainer(
                new ContainerBuilder()
                    .withName("wait")
                    .withImage("busybox")
                    .withArgs("migrate")
                    .build())
            .desiredReplicas(1)
            .build();

    Plan plan = planner.plan(observe(d));

    assertThat(plan.state()).isEqualTo(State.BLOCKED);
    // a first install (created at 0): marked so that the fix still scales it
    assertThat(kinds(plan)).containsExactly(MarkFirstInstall.class, Emit.class, MarkReported.class);
    assertThat(event(plan).reason()).isEqualTo(EventReason.SqliteMigrationMissing);
    assertThat(event(plan).reason().warning()).isTrue();
    assertThat(event(plan).message())
        .contains("initContainer", "OpenFGA image", "args [\"migrate\"]", "volume mount")
        .contains("then scaled to 1 replicas");
  }

  private final Deployment sqliteWithoutInit =
      Fixtures.deployment()
          .env(env("OPENFGA_DATASTORE_ENGINE", "sqlite"))
          .desiredReplicas(3)
          .replicas(0)
          .build();

  /** The same Deployment with its initContainer added (the fix). */
  private Deployment fixed(Deployment d) {
    return new DeploymentBuilder(d)
        .editSpec()
        .editTemplate()
        .editSpec()
        .withInitContainers(Fixtures.sqliteMigrate())
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  /**
   * The Deployment as the API server ({@code generation}, one more per change of the spec) and the
   * Deployment controller ({@code observedGeneration}, and the revision, one more per new pod
   * template) have it.
   */
  private Deployment at(Deployment d, long generation, long revision, long observed) {
    return new DeploymentBuilder(d)
        .editMetadata()
        .withGeneration(generation)
        .addToAnnotations(Keys.DEPLOYMENT_REVISION, Long.toString(revision))
        .endMetadata()
        .editOrNewStatus()
        .withObservedGeneration(observed)
        .endStatus()
        .build();
  }

  /** The record a blocked sqlite first install leaves: the mark, no version. */
  private ConfigMap mark(Deployment d) {
    return new io.fabric8.kubernetes.api.model.ConfigMapBuilder(
            Fixtures.statusConfigMap(d, "x").build())
        .withData(Map.of(Keys.DATA_RESTORE_REPLICAS, "true"))
        .build();
  }

  @Test
  void aBlockedSqliteFirstInstallIsMarkedOnce() {
    Deployment created = at(sqliteWithoutInit, 1, 1, 1);

    Plan first = planner.plan(observe(created));
    Plan again = planner.plan(observe(created, mark(created), null, NOW.plusSeconds(60)));

    assertThat(kinds(first)).contains(MarkFirstInstall.class);
    assertThat(first.state()).isEqualTo(State.BLOCKED);
    assertThat(kinds(again)).doesNotContain(MarkFirstInstall.class);
    assertThat(event(again).message()).contains("then scaled to 3 replicas");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("notFirstInstalls")
  void aBlockedSqliteDeploymentThatIsNoFirstInstallIsNotMarked(
      String why, Deployment d, boolean recorded) {
    Plan plan = planner.plan(observe(d, recorded ? record(d, "v1.13.0") : null, null, NOW));

    assertThat(plan.state()).isEqualTo(State.BLOCKED);
    assertThat(kinds(plan)).doesNotContain(MarkFirstInstall.class);
    assertThat(event(plan).message()).doesNotContain("scaled");
  }

  static Stream<Arguments> notFirstInstalls() {
    Deployment base =
        Fixtures.deployment()
            .env(env("OPENFGA_DATASTORE_ENGINE", "sqlite"))
            .desiredReplicas(3)
            .replicas(0)
            .build();
    return Stream.of(
        Arguments.of(
            "changed since its creation",
            new DeploymentBuilder(base).editMetadata().withGeneration(2L).endMetadata().build(),
            false),
        Arguments.of(
            "not at 0",
            new DeploymentBuilder(base).editSpec().withReplicas(2).endSpec().build(),
            false),
        Arguments.of("a version recorded before (a switch from postgres)", base, true));
  }

  @Test
  void theFixOfAMarkedFirstInstallRestoresItsReplicas() {
    // created at 0 (generation 1, revision 1), fixed: one more of each
    Deployment d = at(fixed(sqliteWithoutInit), 2, 2, 2);

    Plan plan = planner.plan(observe(d, mark(d), null, NOW));

    assertThat(plan.state()).isEqualTo(State.SKIPPED);
    assertThat(kinds(plan))
        .containsExactly(Emit.class, Scale.class, ClearRestoreReplicas.class, MarkReported.class);
    assertThat(only(plan, Scale.class).replicas()).isEqualTo(3);
  }

  @Test
  void theFixWaitsForTheDeploymentControllersRevision() {
    Deployment d = at(fixed(sqliteWithoutInit), 2, 1, 1);

    Plan plan = planner.plan(observe(d, mark(d), null, NOW));

    assertThat(plan.state()).isEqualTo(State.SKIPPED);
    assertThat(kinds(plan)).doesNotContain(Scale.class, ClearRestoreReplicas.class);
    assertThat(plan.summary()).contains("waits for the Deployment controller");
  }

  @Test
  void aScaleSinceTheMarkLeavesTheReplicasAloneAndEndsTheFirstInstall() {
    // scaled to 2 and back to 0 while blocked (generations 2 and 3), then fixed (4, revision 2)
    Deployment d = at(fixed(sqliteWithoutInit), 4, 2, 4);

    Plan plan = planner.plan(observe(d, mark(d), null, NOW));

    assertThat(kinds(plan)).doesNotContain(Scale.class).contains(ClearRestoreReplicas.class);
  }

  @Test
  void aScaleUpBeforeTheFixEndsTheFirstInstall() {
    Deployment d =
        new DeploymentBuilder(at(fixed(sqliteWithoutInit), 3, 2, 3))
            .editSpec()
            .withReplicas(2)
            .endSpec()
            .build();

    Plan plan = planner.plan(observe(d, mark(d), null, NOW));

    assertThat(kinds(plan)).doesNotContain(Scale.class).contains(ClearRestoreReplicas.class);
  }

  @Test
  void aChangedDeploymentWithoutTheMarkIsNotScaledWhateverItsRevision() {
    // created with its initContainer at 3 replicas, later set to 0 with a new image in one go
    Deployment d = at(fixed(sqliteWithoutInit), 2, 2, 2);

    Plan plan = planner.plan(observe(d));

    assertThat(plan.state()).isEqualTo(State.SKIPPED);
    assertThat(kinds(plan)).doesNotContain(Scale.class);
  }

  @Test
  void fromTheBlockToTheFixAndALaterScaleToZero() {
    Observation blocked = observe(at(sqliteWithoutInit, 1, 1, 1));
    Observation marked = PlanReplay.apply(blocked, planner.plan(blocked), NOW.plusSeconds(60));
    Observation atFix =
        new Observation(
            at(fixed(marked.deployment()), 2, 2, 2),
            marked.statusConfigMap(),
            Optional.empty(),
            NOW.plusSeconds(120));

    Plan fix = planner.plan(atFix);
    Observation restored = PlanReplay.apply(atFix, fix, NOW.plusSeconds(180));
    // a person's scale to 0 later (maintenance): generation 4, revision 2
    Deployment maintenance =
        new DeploymentBuilder(at(restored.deployment(), 4, 2, 4))
            .editSpec()
            .withReplicas(0)
            .endSpec()
            .build();

    assertThat(only(fix, Scale.class).replicas()).isEqualTo(3);
    assertThat(restored.statusConfigMap().orElseThrow().getData())
        .doesNotContainKey(Keys.DATA_RESTORE_REPLICAS)
        .doesNotContainKey(Keys.DATA_VERSION);
    Plan later =
        planner.plan(
            new Observation(
                maintenance, restored.statusConfigMap(), Optional.empty(), NOW.plusSeconds(240)));
    assertThat(later.state()).isEqualTo(State.SKIPPED);
    assertThat(later.steps()).isEmpty();
  }

  @Test
  void aMarkWithoutAVersionDoesNotMakeASwitchToPostgresLookMigrated() {
    Deployment postgres = at(Fixtures.deployment().desiredReplicas(3).replicas(0).build(), 2, 2, 2);

    Plan plan = planner.plan(observe(postgres, mark(postgres), null, NOW));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    assertThat(kinds(plan)).contains(CreateJob.class);
  }

  @ParameterizedTest(name = "ENGINE={0}")
  @ValueSource(strings = {"memory", "sqlite"})
  void aSwitchToAnEngineWithoutMigrationsEndsAFailure(String engine) {
    Deployment d =
        Fixtures.deployment()
            .env(env("OPENFGA_DATASTORE_ENGINE", engine))
            .initContainer(Fixtures.sqliteMigrate())
            .failedCondition("v1.14.0")
            .retryAfter(NOW.plusSeconds(60))
            .replicas(2)
            .build();

    Plan plan = planner.plan(observe(d));

    assertThat(plan.state()).isEqualTo(State.SKIPPED);
    assertThat(kinds(plan)).startsWith(SetConditions.class, ClearRetryAfter.class);
    assertThat(migrationFailed(only(plan, SetConditions.class)).getStatus()).isEqualTo("False");
  }

  @Test
  void emitsTheSqliteEventOnlyOncePerDeployment() {
    Deployment d =
        Fixtures.deployment()
            .env(env("OPENFGA_DATASTORE_ENGINE", "sqlite"))
            .initContainer(Fixtures.sqliteMigrate())
            .build();

    Emit first = event(planner.plan(observe(d, NOW)));
    Emit later = event(planner.plan(observe(d, NOW.plusSeconds(600))));

    assertThat(later.key()).isEqualTo(first.key());
  }

  @Test
  void leavesReplicasOfAMemoryDatastoreAloneWhenNotZero() {
    Deployment d =
        Fixtures.deployment()
            .env(env("OPENFGA_DATASTORE_ENGINE", "memory"))
            .desiredReplicas(1)
            .replicas(2)
            .build();

    Plan plan = planner.plan(observe(d));

    assertThat(plan.state()).isEqualTo(State.SKIPPED);
    assertThat(plan.steps()).isEmpty();
  }

  static Stream<Arguments> enginesThatMigrate() {
    return Stream.of(
        Arguments.of("from a Secret", List.of(secretEnv("OPENFGA_DATASTORE_ENGINE", "db", "e"))),
        Arguments.of("unknown", List.of(env("OPENFGA_DATASTORE_ENGINE", "cockroach"))),
        Arguments.of("mysql", List.of(env("OPENFGA_DATASTORE_ENGINE", "mysql"))),
        Arguments.of("absent", List.of(env("OPENFGA_DATASTORE_URI", "postgres://db"))),
        Arguments.of(
            // the last definition wins in the pod: it runs postgres (upstream read the first)
            "memory first, postgres second",
            List.of(
                env("OPENFGA_DATASTORE_ENGINE", "memory"),
                env("OPENFGA_DATASTORE_ENGINE", "postgres"))));
  }

  @ParameterizedTest(name = "engine {0}")
  @MethodSource("enginesThatMigrate")
  void migratesEveryOtherEngine(String description, List<EnvVar> env) {
    Deployment d = Fixtures.deployment().env(env.toArray(new EnvVar[0])).build();

    Plan plan = planner.plan(observe(d));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    assertThat(kinds(plan)).containsExactly(CreateJob.class, Emit.class);
  }
}
