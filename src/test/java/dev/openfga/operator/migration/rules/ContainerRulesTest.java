package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.event;
import static dev.openfga.operator.migration.rules.PlannerFixtures.kinds;
import static dev.openfga.operator.migration.rules.PlannerFixtures.only;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.env;
import static dev.openfga.operator.testing.Fixtures.observe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan.Next;
import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.ClearRetryAfter;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.MarkReported;
import dev.openfga.operator.migration.rules.Step.WriteStatus;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Rules 2 and 3: the container, the annotations the Job needs, the image and its version ({@link
 * ContainerRule}, {@link AnnotationRule}, {@link ImageRule}).
 */
class ContainerRulesTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

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
