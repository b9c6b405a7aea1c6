package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.env;
import static dev.openfga.operator.testing.Fixtures.observe;
import static dev.openfga.operator.testing.Fixtures.secretEnv;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Plan.Next;
import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.ClearRestoreReplicas;
import dev.openfga.operator.migration.rules.Step.ClearRetryAfter;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.DeleteJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.MarkFirstInstall;
import dev.openfga.operator.migration.rules.Step.MarkReported;
import dev.openfga.operator.migration.rules.Step.PatchJob;
import dev.openfga.operator.migration.rules.Step.RepairStatusOwner;
import dev.openfga.operator.migration.rules.Step.Scale;
import dev.openfga.operator.migration.rules.Step.SetConditions;
import dev.openfga.operator.migration.rules.Step.SetRetryAfter;
import dev.openfga.operator.migration.rules.Step.WriteStatus;
import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.PlanReplay;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The decision, rule by rule (SPEC section 4), with a counterpart for every upstream [B] controller
 * test the planner decides and for the review-found bugs of upstream-design.md section 5. See
 * docs/upstream-test-map.md.
 */
class PlannerTest {

  private final Planner planner = new Planner(Policy.DEFAULTS);

  private static Planner plannerWithTtl(int ttlSecondsAfterFinished) {
    return new Planner(new Policy(3, 300, ttlSecondsAfterFinished, Duration.ofSeconds(60)));
  }

  private static List<Class<?>> kinds(Plan plan) {
    return plan.steps().stream().<Class<?>>map(Object::getClass).toList();
  }

  private static <T extends Step> T only(Plan plan, Class<T> type) {
    List<T> found = plan.steps().stream().filter(type::isInstance).map(type::cast).toList();
    assertThat(found).as("steps of type %s in %s", type.getSimpleName(), plan).hasSize(1);
    return found.get(0);
  }

  /** The Job as the Job controller marks it Failed at {@code at} (its pod has stopped). */
  private static Job failedNow(Job job, Instant at) {
    return new JobBuilder(job)
        .editStatus()
        .addNewCondition()
        .withType("Failed")
        .withStatus("True")
        .withLastTransitionTime(Timestamps.format(at))
        .endCondition()
        .endStatus()
        .build();
  }

  private static Emit event(Plan plan) {
    return only(plan, Emit.class);
  }

  private static Next after(long seconds) {
    return new Next.After(Duration.ofSeconds(seconds));
  }

  private static Next done() {
    return new Next.Done();
  }

  private static DeploymentCondition migrationFailed(SetConditions step) {
    return step.conditions().stream()
        .filter(c -> c.getType().equals(Keys.CONDITION_TYPE))
        .findFirst()
        .orElseThrow();
  }

  private static Map<String, String> retention(Instant retryAfter, Instant retainUntil) {
    return Map.of(
        Keys.RETRY_AFTER, Timestamps.format(retryAfter),
        Keys.RETAIN_UNTIL, Timestamps.format(retainUntil));
  }

  private static ConfigMap record(Deployment d, String version) {
    return Fixtures.statusConfigMap(d, version).build();
  }

  /** A record written by a first install whose replicas are still to be restored. */
  private static ConfigMap firstInstallRecord(Deployment d, String version) {
    return Fixtures.statusConfigMap(d, version)
        .addToData(Keys.DATA_RESTORE_REPLICAS, "true")
        .build();
  }

  // ---------------------------------------------------------------------------------------------

  @Nested
  class Discovery {

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

  // ---------------------------------------------------------------------------------------------

  @Nested
  class ContainerAndImage {

    @Test
    void usesTheOpenfgaContainerWhenASidecarIsListedFirst() {
      Deployment d =
          Fixtures.deployment()
              .containers(
                  new ContainerBuilder()
                      .withName("istio-proxy")
                      .withImage("istio/proxyv2:1.22")
                      .build(),
                  new ContainerBuilder()
                      .withName("openfga")
                      .withImage("openfga/openfga:v1.14.0")
                      .withEnv(env("OPENFGA_DATASTORE_ENGINE", "postgres"))
                      .build())
              .build();

      Plan plan = planner.plan(observe(d));

      CreateJob create = only(plan, CreateJob.class);
      assertThat(create.job().getSpec().getTemplate().getSpec().getContainers())
          .singleElement()
          .satisfies(c -> assertThat(c.getImage()).isEqualTo("openfga/openfga:v1.14.0"));
    }

    @Test
    void usesTheContainerNamedByTheAnnotation() {
      Deployment d =
          Fixtures.deployment()
              .annotation(Keys.CONTAINER_NAME, "authorization")
              .containers(
                  new ContainerBuilder()
                      .withName("openfga")
                      .withImage("openfga/openfga:v1.13.0")
                      .build(),
                  new ContainerBuilder()
                      .withName("authorization")
                      .withImage("registry.example.com:5000/openfga/openfga:v1.15.0")
                      .withImagePullPolicy("Never")
                      .withEnv(env("OPENFGA_DATASTORE_ENGINE", "postgres"))
                      .build())
              .build();

      Plan plan = planner.plan(observe(d));

      CreateJob create = only(plan, CreateJob.class);
      assertThat(create.version()).isEqualTo("v1.15.0");
      assertThat(create.job().getSpec().getTemplate().getSpec().getContainers())
          .singleElement()
          .satisfies(
              c -> {
                assertThat(c.getImage())
                    .isEqualTo("registry.example.com:5000/openfga/openfga:v1.15.0");
                assertThat(c.getImagePullPolicy()).isEqualTo("Never");
              });
    }

    @Test
    void blocksWithAWarningWhenTheContainerIsMissing() {
      Deployment d = Fixtures.deployment().annotation(Keys.CONTAINER_NAME, "server").build();

      Plan plan = planner.plan(observe(d));

      assertThat(plan.state()).isEqualTo(State.BLOCKED);
      assertThat(kinds(plan)).containsExactly(Emit.class, MarkReported.class);
      assertThat(event(plan).reason()).isEqualTo(EventReason.ContainerNotFound);
      assertThat(event(plan).reason().warning()).isTrue();
      assertThat(plan.next())
          .isInstanceOfSatisfying(
              Next.Blocked.class,
              b ->
                  assertThat(b.problem())
                      .contains("container \"server\" not found in deployment default/openfga")
                      .contains("containers: openfga")
                      .contains(Keys.CONTAINER_NAME));
    }

    @Test
    void blocksWhenTheContainerNameAnnotationIsEmpty() {
      Deployment d = Fixtures.deployment().annotation(Keys.CONTAINER_NAME, "").build();

      Plan plan = planner.plan(observe(d));

      assertThat(plan.state()).isEqualTo(State.BLOCKED);
      assertThat(event(plan).reason()).isEqualTo(EventReason.InvalidConfiguration);
      assertThat(event(plan).message()).contains(Keys.CONTAINER_NAME);
      assertThat(plan.next()).isInstanceOf(Next.Blocked.class);
    }

    @ParameterizedTest(name = "image \"{0}\"")
    @ValueSource(strings = {"", "openfga/openfga:bad tag", "OpenFGA/openfga:v1", "openfga@sha256"})
    void blocksWithAWarningWhenTheImageCannotBeParsed(String image) {
      Deployment d = Fixtures.deployment().image(image).build();

      Plan plan = planner.plan(observe(d));

      assertThat(plan.state()).isEqualTo(State.BLOCKED);
      assertThat(kinds(plan)).containsExactly(Emit.class, MarkReported.class);
      assertThat(event(plan).reason()).isEqualTo(EventReason.InvalidConfiguration);
      assertThat(event(plan).message()).contains("\"" + image + "\"").contains("default/openfga");
    }

    @Test
    void migratesToTheDigestOfADigestPinnedImage() {
      String digest = "sha256:" + "0123456789abcdef".repeat(4);
      Deployment d = Fixtures.deployment().image("openfga/openfga:v1.14.0@" + digest).build();

      CreateJob create = only(planner.plan(observe(d)), CreateJob.class);

      assertThat(create.version()).isEqualTo(digest);
      assertThat(create.job().getMetadata().getAnnotations())
          .containsEntry(Keys.DESIRED_VERSION, digest);
      assertThat(create.job().getMetadata().getLabels().get(Keys.VERSION_LABEL))
          .hasSize(63)
          .matches("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
    }

    @Test
    void recordsTheFullDigestWhenADigestMigrationSucceeds() {
      String digest = "sha256:" + "0123456789abcdef".repeat(4);
      Deployment d = Fixtures.deployment().image("openfga/openfga@" + digest).build();
      Job complete = Fixtures.job(d, digest).complete(NOW).build();

      Plan plan = planner.plan(observe(d, null, complete, NOW));

      assertThat(only(plan, WriteStatus.class).data()).containsEntry(Keys.DATA_VERSION, digest);
    }

    @Test
    void reportsAMalformedReplicaCountAndStillMigrates() {
      Deployment d = Fixtures.deployment().annotation(Keys.DESIRED_REPLICAS, "three").build();

      Plan plan = planner.plan(observe(d));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      assertThat(kinds(plan))
          .containsExactly(Emit.class, CreateJob.class, Emit.class, MarkReported.class);
      Emit problem = (Emit) plan.steps().get(0);
      assertThat(problem.reason()).isEqualTo(EventReason.InvalidConfiguration);
      assertThat(problem.message()).contains(Keys.DESIRED_REPLICAS, "three");
    }

    @Test
    void blocksOnAnUnusableMigrationServiceAccountInsteadOfFallingBackToThePods() {
      Deployment d =
          Fixtures.deployment().annotation(Keys.MIGRATION_SERVICE_ACCOUNT, "Not_Valid").build();

      Plan plan = planner.plan(observe(d));

      assertThat(plan.state()).isEqualTo(State.BLOCKED);
      assertThat(kinds(plan)).containsExactly(Emit.class, MarkReported.class);
      assertThat(event(plan).reason()).isEqualTo(EventReason.InvalidConfiguration);
      assertThat(event(plan).message()).contains(Keys.MIGRATION_SERVICE_ACCOUNT, "Not_Valid");
      assertThat(plan.next())
          .isInstanceOfSatisfying(
              Next.Blocked.class,
              b ->
                  assertThat(b.problem())
                      .contains("default/openfga", Keys.MIGRATION_SERVICE_ACCOUNT));
    }

    @Test
    void ignoresAnUnparseableRetryDeadlineReportsItAndClearsItAfterCreating() {
      Deployment d = Fixtures.deployment().annotation(Keys.RETRY_AFTER, "tomorrow").build();

      Plan plan = planner.plan(observe(d));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      assertThat(kinds(plan))
          .containsExactly(
              Emit.class, CreateJob.class, ClearRetryAfter.class, Emit.class, MarkReported.class);
      assertThat(((Emit) plan.steps().get(0)).message()).contains(Keys.RETRY_AFTER, "tomorrow");
    }
  }

  // ---------------------------------------------------------------------------------------------

  @Nested
  class Engines {

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
      assertThat(kinds(plan))
          .containsExactly(MarkFirstInstall.class, Emit.class, MarkReported.class);
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
     * The Deployment as the API server ({@code generation}, one more per change of the spec) and
     * the Deployment controller ({@code observedGeneration}, and the revision, one more per new pod
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
      Deployment postgres =
          at(Fixtures.deployment().desiredReplicas(3).replicas(0).build(), 2, 2, 2);

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

  // ---------------------------------------------------------------------------------------------

  @Nested
  class StatusConfigMap {

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

  // ---------------------------------------------------------------------------------------------

  @Nested
  class UpToDate {

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
      assertThat(only(plan, WriteStatus.class).data())
          .doesNotContainKey(Keys.DATA_RESTORE_REPLICAS);
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

  // ---------------------------------------------------------------------------------------------

  @Nested
  class Creation {

    @Test
    void createsTheJobOnFirstInstallWithAFilteredEnvironment() {
      Deployment d =
          Fixtures.deployment()
              .env(
                  env("OPENFGA_DATASTORE_ENGINE", "postgres"),
                  secretEnv("OPENFGA_DATASTORE_URI", "openfga-datastore", "uri"),
                  env("OPENFGA_LOG_LEVEL", "info"),
                  env("OPENFGA_PLAYGROUND_ENABLED", "true"),
                  secretEnv("OPENFGA_AUTHN_PRESHARED_KEYS", "openfga-authn", "keys"))
              .build();

      Plan plan = planner.plan(observe(d));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      assertThat(kinds(plan)).containsExactly(CreateJob.class, Emit.class);
      assertThat(plan.next()).isEqualTo(after(5));
      CreateJob create = only(plan, CreateJob.class);
      Job job = create.job();
      assertThat(create.version()).isEqualTo("v1.14.0");
      assertThat(job.getMetadata().getName()).isEqualTo("openfga-migrate");
      assertThat(job.getSpec().getTtlSecondsAfterFinished()).isNull();
      assertThat(job.getSpec().getBackoffLimit()).isEqualTo(3);
      assertThat(job.getSpec().getActiveDeadlineSeconds()).isEqualTo(300L);
      assertThat(job.getMetadata().getOwnerReferences())
          .singleElement()
          .satisfies(
              ref -> {
                assertThat(ref.getUid()).isEqualTo("test-uid-123");
                assertThat(ref.getController()).isTrue();
                assertThat(ref.getBlockOwnerDeletion()).isNull();
              });
      assertThat(job.getSpec().getTemplate().getSpec().getContainers())
          .singleElement()
          .satisfies(
              c -> {
                assertThat(c.getImage()).isEqualTo("openfga/openfga:v1.14.0");
                assertThat(c.getArgs()).containsExactly("migrate");
                assertThat(c.getEnv())
                    .extracting(EnvVar::getName)
                    .containsExactly(
                        "OPENFGA_DATASTORE_ENGINE", "OPENFGA_DATASTORE_URI", "OPENFGA_LOG_LEVEL");
              });
      assertThat(event(plan).reason()).isEqualTo(EventReason.MigrationStarted);
      assertThat(event(plan).message()).contains("openfga-migrate", "v1.14.0", "first install");
    }

    @Test
    void createsTheJobWhenTheRecordedVersionIsOlder() {
      Deployment d = Fixtures.deployment().build();

      Plan plan = planner.plan(observe(d, record(d, "v1.13.0"), null, NOW));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      assertThat(kinds(plan)).containsExactly(CreateJob.class, Emit.class);
      assertThat(event(plan).message()).contains("recorded version v1.13.0");
    }

    @Test
    void neverScalesDownWhileAMigrationIsNeeded() {
      Deployment d = Fixtures.deployment().replicas(3).desiredReplicas(3).build();

      Plan plan = planner.plan(observe(d));

      assertThat(kinds(plan)).containsExactly(CreateJob.class, Emit.class);
    }

    @Test
    void runsTheJobWithTheMigrationServiceAccount() {
      Deployment d =
          Fixtures.deployment()
              .annotation(Keys.MIGRATION_SERVICE_ACCOUNT, "openfga-migration")
              .build();

      CreateJob create = only(planner.plan(observe(d)), CreateJob.class);

      assertThat(create.job().getSpec().getTemplate().getSpec().getServiceAccountName())
          .isEqualTo("openfga-migration");
    }

    @Test
    void usesTheBackoffAndDeadlineOfThePolicy() {
      Planner custom = new Planner(new Policy(0, 1, 300, Duration.ofSeconds(60)));

      CreateJob create = only(custom.plan(observe(Fixtures.deployment().build())), CreateJob.class);

      assertThat(create.job().getSpec().getBackoffLimit()).isZero();
      assertThat(create.job().getSpec().getActiveDeadlineSeconds()).isEqualTo(1L);
    }

    @Test
    void waitsForAFutureRetryDeadlineWithoutCreatingAJob() {
      Deployment d = Fixtures.deployment().retryAfter(NOW.plusSeconds(30)).build();

      Plan plan = planner.plan(observe(d));

      assertThat(plan.state()).isEqualTo(State.COOLDOWN);
      assertThat(plan.steps()).isEmpty();
      assertThat(plan.next()).isEqualTo(after(30));
    }

    @Test
    void keepsTheCooldownWhenTheImageChanges() {
      Deployment d =
          Fixtures.deployment()
              .image("openfga/openfga:v1.15.0")
              .retryAfter(NOW.plusSeconds(45))
              .failedCondition("v1.14.0")
              .build();

      Plan plan = planner.plan(observe(d, record(d, "v1.13.0"), null, NOW));

      assertThat(plan.state()).isEqualTo(State.COOLDOWN);
      assertThat(plan.steps()).isEmpty();
      assertThat(plan.next()).isEqualTo(after(45));
    }

    @ParameterizedTest(name = "deadline now{0}s")
    @ValueSource(longs = {0, -1, -3600})
    void clearsTheRetryDeadlineOnlyAfterCreatingTheJob(long offset) {
      Deployment d = Fixtures.deployment().retryAfter(NOW.plusSeconds(offset)).build();

      Plan plan = planner.plan(observe(d));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      assertThat(kinds(plan)).containsExactly(CreateJob.class, ClearRetryAfter.class, Emit.class);
    }

    @Test
    void emitsOneStartedEventPerCreatedJob() {
      Deployment d = Fixtures.deployment().build();

      Emit first = event(planner.plan(observe(d, NOW)));
      Emit second = event(planner.plan(observe(d, NOW.plusSeconds(120))));

      assertThat(first.key()).isNotEqualTo(second.key());
    }
  }

  // ---------------------------------------------------------------------------------------------

  /** SPEC section 10: a Job create the API server refused. */
  @Nested
  class JobRejection {
    private static final String QUOTA =
        "jobs.batch \"openfga-migrate\" is forbidden: exceeded quota: jobs, requested:"
            + " count/jobs.batch=1, used: count/jobs.batch=0, limited: count/jobs.batch=0"
            + " (HTTP 403)";

    /** The Deployment as it is after the plan's condition write. */
    private Deployment written(Deployment d, Plan plan) {
      return new DeploymentBuilder(d)
          .editOrNewStatus()
          .withConditions(only(plan, SetConditions.class).conditions())
          .endStatus()
          .build();
    }

    private Plan refused(Deployment d, Instant now, String rejection) {
      return planner.plan(observe(d, now).withJobRejection(java.util.Optional.of(rejection)));
    }

    @Test
    void aRefusedCreateSetsTheConditionSendsAWarningAndBacksOff() {
      Deployment d = Fixtures.deployment().build();

      Plan plan = refused(d, NOW, QUOTA);

      assertThat(kinds(plan)).containsExactly(SetConditions.class, Emit.class);
      assertThat(plan.state()).isEqualTo(State.BLOCKED);
      assertThat(plan.next()).isInstanceOf(Next.Blocked.class);
      assertThat(plan.summary())
          .isEqualTo(
              "Migration Job openfga-migrate for version v1.14.0 was rejected by the API server: "
                  + QUOTA);
      DeploymentCondition c = migrationFailed(only(plan, SetConditions.class));
      assertThat(c.getStatus()).isEqualTo("True");
      assertThat(c.getReason()).isEqualTo(Keys.REASON_JOB_REJECTED);
      assertThat(c.getMessage()).isEqualTo(plan.summary());
      assertThat(c.getLastTransitionTime()).isEqualTo(Timestamps.format(NOW));
      Emit warning = event(plan);
      assertThat(warning.reason()).isEqualTo(EventReason.JobRejected);
      assertThat(warning.reason().warning()).isTrue();
      assertThat(warning.message()).startsWith(plan.summary()).contains("at most 5 minutes apart");
    }

    @Test
    void theSameRefusalAtTheNextTryWritesNothingAndIsTheSameEvent() {
      Deployment d = Fixtures.deployment().build();
      Plan first = refused(d, NOW, QUOTA);

      Plan again = refused(written(d, first), NOW.plusSeconds(4), QUOTA);

      assertThat(kinds(again)).containsExactly(Emit.class);
      assertThat(event(again).key()).isEqualTo(event(first).key());
      assertThat(again.state()).isEqualTo(State.BLOCKED);
    }

    @Test
    void anotherAnswerIsAnotherRefusal() {
      Deployment d = Fixtures.deployment().build();
      Plan first = refused(d, NOW, QUOTA);
      String policy =
          "jobs.batch \"openfga-migrate\" is forbidden: ValidatingAdmissionPolicy 'no-jobs'"
              + " with binding 'no-jobs' denied request: no migration Jobs here (HTTP 403)";

      Plan other = refused(written(d, first), NOW.plusSeconds(4), policy);

      assertThat(migrationFailed(only(other, SetConditions.class)).getMessage()).endsWith(policy);
      // still True since the first refusal
      assertThat(migrationFailed(only(other, SetConditions.class)).getLastTransitionTime())
          .isEqualTo(Timestamps.format(NOW));
      assertThat(event(other).key()).isNotEqualTo(event(first).key());
    }

    @Test
    void theNextCreateClearsTheConditionOnceTheJobIsCreated() {
      Deployment d = Fixtures.deployment().retryAfter(NOW.minusSeconds(5)).build();
      Deployment rejected = written(d, refused(d, NOW, QUOTA));

      Plan plan = planner.plan(observe(rejected, NOW.plusSeconds(8)));

      // the create first: the condition says nothing until the API server took the Job
      assertThat(kinds(plan))
          .containsExactly(CreateJob.class, SetConditions.class, ClearRetryAfter.class, Emit.class);
      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      DeploymentCondition c = migrationFailed(only(plan, SetConditions.class));
      assertThat(c.getStatus()).isEqualTo("False");
      assertThat(c.getReason()).isEqualTo(Keys.REASON_JOB_CREATED);
      assertThat(c.getMessage())
          .isEqualTo("Migration Job openfga-migrate for version v1.14.0 was created.");
    }

    @Test
    void aRefusalAfterAJobWasCreatedInBetweenIsNews() {
      Deployment d = Fixtures.deployment().build();
      Plan first = refused(d, NOW, QUOTA);
      Plan created = planner.plan(observe(written(d, first), NOW.plusSeconds(8)));
      Deployment afterCreate = written(d, created);

      Plan second = refused(afterCreate, NOW.plusSeconds(600), QUOTA);

      assertThat(migrationFailed(only(second, SetConditions.class)).getStatus()).isEqualTo("True");
      assertThat(event(second).key()).isNotEqualTo(event(first).key());
    }

    @Test
    void aRunningJobClearsARefusalAWriteAfterTheCreateLeftBehind() {
      Deployment d = Fixtures.deployment().build();
      Deployment rejected = written(d, refused(d, NOW, QUOTA));
      Job running = Fixtures.job(d, "v1.14.0").running().build();

      Plan plan = planner.plan(observe(rejected, null, running, NOW.plusSeconds(20)));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      assertThat(kinds(plan)).containsExactly(SetConditions.class);
      assertThat(migrationFailed(only(plan, SetConditions.class)).getReason())
          .isEqualTo(Keys.REASON_JOB_CREATED);
    }

    @Test
    void aFailureIsNotClearedByTheCreateOfItsRetry() {
      Deployment d = Fixtures.deployment().failedCondition("v1.14.0").build();

      Plan plan = planner.plan(observe(d));

      assertThat(kinds(plan)).containsExactly(CreateJob.class, Emit.class);
    }

    @Test
    void aRefusalShownByTheConditionWaitsBehindTheCooldown() {
      Deployment cooling = Fixtures.deployment().retryAfter(NOW.plusSeconds(30)).build();

      assertThat(refused(cooling, NOW, QUOTA).state()).isEqualTo(State.COOLDOWN);
    }

    @Test
    void theConditionGivesBackTheAnswerItWasGiven() {
      Deployment d = Fixtures.deployment().build();

      Deployment rejected = written(d, refused(d, NOW, QUOTA));

      assertThat(FailedCondition.rejection(rejected)).contains(QUOTA);
      assertThat(FailedCondition.rejection(d)).isEmpty();
      assertThat(FailedCondition.rejection(Fixtures.deployment().failedCondition("v1").build()))
          .isEmpty();
    }
  }

  // ---------------------------------------------------------------------------------------------

  @Nested
  class ExistingJob {

    private final Deployment d = Fixtures.deployment().image("openfga/openfga:v1.15.0").build();
    private final ConfigMap recorded = record(d, "v1.14.0");

    @Test
    void waitsForATerminatingJobWithoutCreatingAReplacement() {
      Job terminating = Fixtures.job(d, "v1.14.0").failed(NOW).terminating().build();

      Plan plan = planner.plan(observe(d, recorded, terminating, NOW));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      assertThat(plan.steps()).isEmpty();
      assertThat(plan.next()).isEqualTo(after(1));
    }

    static Stream<Arguments> untrustedJobs() {
      OwnerReference ours = Fixtures.controllerRef("openfga", "test-uid-123");
      OwnerReference notController = new OwnerReferenceBuilder(ours).withController(false).build();
      OwnerReference foreignController =
          new OwnerReferenceBuilder()
              .withApiVersion("batch/v1")
              .withKind("CronJob")
              .withName("nightly")
              .withUid("cron-uid")
              .withController(true)
              .build();
      return Stream.of(
          Arguments.of("managed-by label only", true, List.of()),
          Arguments.of("owner reference only", false, List.of(ours)),
          Arguments.of("neither", false, List.of()),
          Arguments.of(
              "non-controller reference beside another controller",
              true,
              List.of(notController, foreignController)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("untrustedJobs")
    void refusesAJobItDoesNotOwnAndLeavesItAlone(
        String description, boolean managed, List<OwnerReference> refs) {
      var fixture =
          Fixtures.job(d, "v1.14.0")
              .complete(NOW)
              .ownerReferences(refs.toArray(new OwnerReference[0]));
      if (!managed) {
        fixture.withoutLabel(Keys.MANAGED_BY);
      }

      Plan plan = planner.plan(observe(d, recorded, fixture.build(), NOW));

      assertThat(plan.state()).isEqualTo(State.BLOCKED);
      assertThat(kinds(plan)).containsExactly(Emit.class);
      assertThat(event(plan).reason()).isEqualTo(EventReason.MigrationJobConflict);
      assertThat(event(plan).reason().warning()).isTrue();
      assertThat(plan.next())
          .isInstanceOfSatisfying(
              Next.Blocked.class,
              b ->
                  assertThat(b.problem())
                      .contains("default/openfga-migrate")
                      .contains(
                          "must be managed by openfga-operator and controlled by Deployment"
                              + " openfga"));
      // another Job in the way later, of the same name: news again, not a repeat of this one
      fixture.uid("another-foreign-job");
      assertThat(event(planner.plan(observe(d, recorded, fixture.build(), NOW))).key())
          .isNotEqualTo(event(plan).key());
    }

    @Test
    void deletesItsOwnJobForAnotherVersion() {
      Job stale = Fixtures.job(d, "v1.14.0").complete(NOW.minusSeconds(600)).build();

      Plan plan = planner.plan(observe(d, recorded, stale, NOW));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      assertThat(kinds(plan)).containsExactly(DeleteJob.class);
      assertThat(only(plan, DeleteJob.class).why()).contains("v1.14.0", "v1.15.0");
      assertThat(plan.next()).isEqualTo(after(1));
    }

    @Test
    void deletesAStaleJobWithATtlWithoutPatchingItFirst() {
      Job stale = Fixtures.job(d, "v1.14.0").complete(NOW.minusSeconds(600)).ttl(300).build();

      Plan plan = planner.plan(observe(d, recorded, stale, NOW));

      assertThat(kinds(plan)).containsExactly(DeleteJob.class);
    }

    @Test
    void deletesAStaleJobKnownOnlyByItsVersionLabel() {
      Job stale =
          Fixtures.job(d, "v1.14.0")
              .withoutAnnotation(Keys.DESIRED_VERSION)
              .complete(NOW.minusSeconds(600))
              .build();

      Plan plan = planner.plan(observe(d, recorded, stale, NOW));

      assertThat(kinds(plan)).containsExactly(DeleteJob.class);
    }

    @Test
    void neverTrustsACompletedJobWithoutVersion() {
      Job unknown =
          Fixtures.job(d, "v1.15.0")
              .withoutAnnotation(Keys.DESIRED_VERSION)
              .withoutLabel(Keys.VERSION_LABEL)
              .complete(NOW)
              .build();

      Plan plan = planner.plan(observe(d, recorded, unknown, NOW));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      assertThat(kinds(plan)).containsExactly(DeleteJob.class);
      assertThat(only(plan, DeleteJob.class).why()).contains("unknown");
      assertThat(plan.next()).isEqualTo(after(1));
    }

    @Test
    void letsARunningMigrationToAnotherVersionFinish() {
      Job running = Fixtures.job(d, "v1.14.0").running().build();

      Plan plan = planner.plan(observe(d, record(d, "v1.13.0"), running, NOW));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      assertThat(plan.steps()).isEmpty();
      assertThat(plan.next()).isEqualTo(after(10));
    }

    @Test
    void replacesAJobForAnotherVersionWhosePodNeverStarted() {
      Job stuck = Fixtures.job(d, "v1.14.0").podNeverStarted().build();

      Plan plan = planner.plan(observe(d, record(d, "v1.13.0"), stuck, NOW));
      Plan next =
          planner.plan(
              PlanReplay.apply(
                  observe(d, record(d, "v1.13.0"), stuck, NOW), plan, NOW.plusSeconds(1)));

      assertThat(kinds(plan)).containsExactly(DeleteJob.class);
      assertThat(kinds(next)).containsExactly(CreateJob.class, Emit.class);
      assertThat(only(next, CreateJob.class).version()).isEqualTo("v1.15.0");
    }

    @Test
    void waitsForTheRunningJobOfTheDesiredVersion() {
      Deployment scaledDown = Fixtures.deployment().replicas(0).desiredReplicas(3).build();
      Job running = Fixtures.job(scaledDown, "v1.14.0").running().build();

      Plan plan = planner.plan(observe(scaledDown, null, running, NOW));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      assertThat(plan.steps()).isEmpty();
      assertThat(plan.next()).isEqualTo(after(10));
    }

    @Test
    void waitsForAJobThatHasNoStatusYet() {
      Job created = Fixtures.job(d, "v1.15.0").build();

      Plan plan = planner.plan(observe(d, recorded, created, NOW));

      assertThat(plan.steps()).isEmpty();
      assertThat(plan.next()).isEqualTo(after(10));
    }

    @Test
    void clearsALeftoverRetryDeadlineWhileTheJobRuns() {
      Deployment withDeadline =
          Fixtures.deployment()
              .image("openfga/openfga:v1.15.0")
              .retryAfter(NOW.minusSeconds(5))
              .build();
      Job running = Fixtures.job(withDeadline, "v1.15.0").running().build();

      Plan plan = planner.plan(observe(withDeadline, recorded, running, NOW));

      assertThat(plan.steps()).containsExactly(new ClearRetryAfter());
      assertThat(plan.next()).isEqualTo(after(10));
    }
  }

  // ---------------------------------------------------------------------------------------------

  @Nested
  class LegacyHelmHook {

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
          chartHookJob()
              .editMetadata()
              .addToAnnotations(Keys.HELM_HOOK, hook)
              .endMetadata()
              .build();

      Plan plan = planner.plan(observe(chartDeployment(), null, job, NOW));

      assertThat(plan.state()).isEqualTo(State.BLOCKED);
      assertThat(kinds(plan)).containsExactly(Emit.class);
      assertThat(event(plan).reason()).isEqualTo(EventReason.MigrationJobConflict);
    }
  }

  // ---------------------------------------------------------------------------------------------

  @Nested
  class Success {

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
  }

  // ---------------------------------------------------------------------------------------------

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

  @Nested
  class Failure {

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
              event(failed),
              new PatchJob(420, retention(NOW.plusSeconds(60), NOW.plusSeconds(150))));
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
      Deployment later =
          Fixtures.deployment().replicas(0).retryAfter(NOW.plusSeconds(3600)).build();
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
      Deployment held =
          Fixtures.deployment().replicas(0).retryAfter(NOW.plusSeconds(86400)).build();
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

  // ---------------------------------------------------------------------------------------------

  /**
   * SPEC section 5, one Event per transition, and section 8, no request at start-up for a converged
   * Deployment: the Events about a lasting state are listed on the Deployment once sent, so a
   * restarted operator (nothing in memory) sends none again.
   */
  @Nested
  class ReportedEvents {

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
                  Fixtures.NAME,
                  Fixtures.UID + "/" + skipped.reason().name() + "/" + skipped.key()))
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
}
