package dev.openfga.operator.scenario;

import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * SPEC section 6: every kind of bad input gets a clear answer naming the object and the problem,
 * nothing the operator does not own is touched, and one operator keeps serving every other
 * Deployment. All cases share one cluster and one operator, which is the point: none of them may
 * crash it or block the others.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  /** What the operator must do with a Deployment. */
  enum Answer {
    /** A Warning Event naming the problem, and no Job. */
    WARN_NO_JOB,
    /** A Warning Event naming the problem, and the migration still runs. */
    WARN_AND_MIGRATE,
    /** Nothing at all: not opted in. */
    IGNORE,
    /** The migration runs (no problem to report). */
    MIGRATE
  }

  record Case(
      String name,
      Fixtures.DeploymentFixture deployment,
      Answer answer,
      String reason,
      String says) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Case> cases() {
    return Stream.of(
        new Case(
            "replicas-word",
            openfga().annotation(Keys.DESIRED_REPLICAS, "three"),
            Answer.WARN_AND_MIGRATE,
            "InvalidConfiguration",
            "openfga.dev/desired-replicas=\"three\""),
        new Case(
            "replicas-negative",
            openfga().annotation(Keys.DESIRED_REPLICAS, "-1"),
            Answer.WARN_AND_MIGRATE,
            "InvalidConfiguration",
            "must be an integer >= 0"),
        new Case(
            "retry-after-garbage",
            openfga().annotation(Keys.RETRY_AFTER, "tomorrow"),
            Answer.WARN_AND_MIGRATE,
            "InvalidConfiguration",
            "is not an RFC 3339 time"),
        new Case(
            "container-empty",
            openfga().annotation(Keys.CONTAINER_NAME, ""),
            Answer.WARN_NO_JOB,
            "InvalidConfiguration",
            "openfga.dev/container-name"),
        new Case(
            "container-oversized",
            openfga().annotation(Keys.CONTAINER_NAME, "c".repeat(300)),
            Answer.WARN_NO_JOB,
            "InvalidConfiguration",
            "is not a valid container name"),
        new Case(
            "container-missing",
            openfga().annotation(Keys.CONTAINER_NAME, "authz"),
            Answer.WARN_NO_JOB,
            "ContainerNotFound",
            "container \"authz\" not found in deployment openfga/container-missing"),
        new Case(
            "image-unparseable",
            openfga().image("openfga/openfga:bad tag!"),
            Answer.WARN_NO_JOB,
            "InvalidConfiguration",
            "cannot be parsed"),
        new Case(
            "service-account-invalid",
            openfga().annotation(Keys.MIGRATION_SERVICE_ACCOUNT, "Not_A_Name"),
            Answer.WARN_NO_JOB,
            "InvalidConfiguration",
            "openfga.dev/migration-service-account"),
        // SPEC section 10: a proxy list that cannot be read blocks; a Job without the proxies
        // could not reach the database
        new Case(
            "sidecars-empty-entry",
            openfga().annotation(Keys.MIGRATION_SIDECARS, "cloud-sql-proxy,,pgbouncer"),
            Answer.WARN_NO_JOB,
            "InvalidConfiguration",
            "openfga.dev/migration-sidecars=\"cloud-sql-proxy,,pgbouncer\" must be a"
                + " comma-separated list of container names"),
        new Case(
            "sidecars-not-a-name",
            openfga().annotation(Keys.MIGRATION_SIDECARS, "Cloud-SQL-Proxy"),
            Answer.WARN_NO_JOB,
            "InvalidConfiguration",
            "openfga.dev/migration-sidecars=\"Cloud-SQL-Proxy\""),
        new Case(
            "opt-in-not-exactly-true",
            openfga().annotation(Keys.MIGRATION_ENABLED, "True"),
            Answer.IGNORE,
            null,
            null),
        new Case(
            "discovery-label-missing",
            openfga().label(Keys.COMPONENT, null),
            Answer.IGNORE,
            null,
            null),
        new Case("engine-unknown", openfga().engine("cockroach"), Answer.MIGRATE, null, null));
  }

  @RegisterExtension final MockCluster cluster = new MockCluster();

  @BeforeAll
  void startEverything() {
    cluster.jobs().script(j -> Script.SUCCEED);
    cases().forEach(c -> cluster.create(c.deployment().name(c.name()).build()));
    // engine from a Secret: the operator cannot read it, so it migrates
    Deployment fromSecret = openfga().name("engine-from-secret").build();
    fromSecret
        .getSpec()
        .getTemplate()
        .getSpec()
        .getContainers()
        .get(0)
        .getEnv()
        .set(
            0,
            new EnvVarBuilder()
                .withName(Keys.ENGINE_ENV)
                .withNewValueFrom()
                .withNewSecretKeyRef("engine", "db", false)
                .endValueFrom()
                .build());
    cluster.create(fromSecret);
    // API errors on the way: two 500s on the Job create, a 429 and a 409 on Deployment patches
    cluster.failNext("POST", "/jobs", 500, 2);
    cluster.failNext("PATCH", "/deployments/", 429, 1);
    cluster.failNext("PATCH", "/deployments/", 409, 1);
    cluster.create(openfga().name("healthy").build());
    cluster.startOperator(MockCluster.config(Duration.ofSeconds(2), 1), "operator-a");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void eachBadInputGetsItsClearAnswer(Case c) {
    switch (c.answer()) {
      case WARN_NO_JOB, WARN_AND_MIGRATE -> {
        await().atMost(WAIT).until(() -> reasons(c.name()), r -> r.contains(c.reason()));
        Event event =
            cluster.events(c.name()).stream()
                .filter(e -> e.getReason().equals(c.reason()))
                .findFirst()
                .orElseThrow();
        assertThat(event.getType()).isEqualTo("Warning");
        assertThat(event.getMessage()).contains(c.says());
        if (c.answer() == Answer.WARN_AND_MIGRATE) {
          await()
              .atMost(WAIT)
              .until(() -> cluster.recordedVersion(c.name()).orElse(""), v -> v.equals("v1.8.0"));
        } else {
          await()
              .during(Duration.ofSeconds(1))
              .atMost(Duration.ofSeconds(3))
              .until(() -> cluster.job(c.name() + "-migrate") == null);
          // reported once per problem, not once per retry
          assertThat(reasons(c.name()).stream().filter(c.reason()::equals)).hasSize(1);
        }
      }
      case IGNORE -> {
        await()
            .during(Duration.ofSeconds(1))
            .atMost(Duration.ofSeconds(3))
            .until(() -> cluster.job(c.name() + "-migrate") == null);
        assertThat(reasons(c.name())).isEmpty();
        assertThat(cluster.deployment(c.name()).getSpec().getReplicas()).isZero();
        assertThat(cluster.deployment(c.name()).getMetadata().getAnnotations())
            .doesNotContainKey(Keys.RETRY_AFTER);
      }
      case MIGRATE ->
          await()
              .atMost(WAIT)
              .until(() -> cluster.recordedVersion(c.name()).orElse(""), v -> v.equals("v1.8.0"));
    }
  }

  @Test
  void unreadableRetryAfterIsClearedOnceTheJobRuns() {
    await().atMost(WAIT).until(() -> cluster.recordedVersion("retry-after-garbage").isPresent());
    assertThat(cluster.deployment("retry-after-garbage").getMetadata().getAnnotations())
        .doesNotContainKey(Keys.RETRY_AFTER);
  }

  @Test
  void badReplicasAreNeverUsedToScale() {
    await().atMost(WAIT).until(() -> cluster.recordedVersion("replicas-word").isPresent());
    assertThat(cluster.deployment("replicas-word").getSpec().getReplicas()).isZero();
    assertThat(cluster.deployment("replicas-negative").getSpec().getReplicas()).isZero();
  }

  @Test
  void engineFromASecretIsMigrated() {
    await()
        .atMost(WAIT)
        .until(
            () -> cluster.recordedVersion("engine-from-secret").orElse(""),
            v -> v.equals("v1.8.0"));
  }

  @Test
  void apiErrorsAreRetriedAndTheHealthyDeploymentStillMigrates() {
    await()
        .atMost(WAIT)
        .until(() -> cluster.recordedVersion("healthy").orElse(""), v -> v.equals("v1.8.0"));
    await().atMost(WAIT).until(() -> cluster.deployment("healthy").getSpec().getReplicas() == 3);
    assertThat(
            cluster.jobs().createdByOperator().stream()
                .filter(j -> j.getMetadata().getName().equals("healthy-migrate")))
        .hasSize(1);
  }

  private List<String> reasons(String deployment) {
    return cluster.eventReasons(deployment);
  }
}
