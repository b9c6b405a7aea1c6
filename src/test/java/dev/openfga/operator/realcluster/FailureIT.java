package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.status.StatusCommand;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Failed migrations with the real {@code openfga migrate} and the real Job controller: upstream's
 * "db outage" and "no db" scenarios, and a wrong password. {@code OPENFGA_TIMEOUT=3s} keeps the
 * binary's own connection retries short; the cooldown is 10 s, and a failed Job is kept 5 s after
 * it finished (the next Job comes after the later of the two).
 */
class FailureIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  private static final Duration COOLDOWN = Duration.ofSeconds(10);

  private static final String VALUES =
      """
      leaderElection: {enabled: false}
      retryCooldown: 10s
      migrationJob: {backoffLimit: 0, ttlSecondsAfterFinished: 5}
      """;

  @BeforeAll
  static void installOperator() {
    cluster.startOperator(cluster.installOperator(cluster.namespace(), VALUES), "operator-0");
  }

  @Test
  void aDatabaseOutageFailsTheMigrationWithTheRealErrorAndOneRetryAfterTheCooldownSucceeds() {
    Postgres postgres = cluster.postgres();
    Postgres.Database db = postgres.createDatabase("outage");
    OpenFgaView openfga = install("outage", db.ownerUri(), 0, 1);
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () -> {
              assertThat(openfga.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA);
              assertThat(openfga.condition("Available"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
            });

    postgres.stop();
    Instant retryAfter;
    try {
      openfga.setVersion(Binaries.NEW_OPENFGA);
      DeploymentCondition failed = awaitFailed(openfga).condition();
      assertThat(failed.getMessage())
          .startsWith("Database migration failed for version v1.10.0. Check migration job logs.")
          .contains("exit code 1")
          .containsPattern("(?m)^Error: .*connect.*$")
          // cobra's usage text that follows the error is left out
          .doesNotContain("Usage:", "--datastore-engine");
      // the Deployment controller's conditions are still there, next to the operator's
      Deployment deployment = openfga.deployment();
      assertThat(OpenFgaView.condition(deployment, "Available"))
          .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
      assertThat(OpenFgaView.condition(deployment, "Progressing")).isPresent();
      Event warning = openfga.events("MigrationFailed").get(0);
      assertThat(warning.getType()).isEqualTo("Warning");
      assertThat(warning.getMessage()).contains("exit code 1").contains("Error: ");
      retryAfter =
          Instant.parse(OpenFgaView.annotation(deployment, "openfga.dev/migration-retry-after"));
    } finally {
      postgres.restart();
    }

    // the retry's Job, read as soon as its run is recorded: its 5 s TTL may delete it soon after
    Job retry =
        await()
            .atMost(Duration.ofMinutes(2))
            .until(() -> openfga.jobOnceRecorded(Binaries.NEW_OPENFGA), Objects::nonNull);
    assertThat(postgres.schemaRevision(db)).isEqualTo(6);
    Instant retried = Instant.parse(retry.getMetadata().getCreationTimestamp());
    assertThat(retried).isAfterOrEqualTo(retryAfter);
    // the first install, the failed attempt and exactly one retry
    assertThat(cluster.kubelet().migrateRuns(cluster.namespace(), openfga.jobName())).hasSize(3);
    assertThat(openfga.events("MigrationFailed")).hasSize(1);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(openfga.condition("MigrationFailed"))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False")));
  }

  @Test
  void aWrongPasswordIsReportedWithTheDatabasesOwnWordsAndTheAppStaysAtZero() {
    Postgres.Database db = cluster.postgres().createDatabase("badpassword");
    OpenFgaView openfga =
        install("badpassword", db.ownerUri().replace(db.password(), "not-the-password"), 0, 2);
    DeploymentCondition failed = awaitFailed(openfga).condition();
    assertThat(failed.getMessage())
        .contains("exit code 1")
        .contains("password authentication failed for user \"" + db.owner() + "\"");
    assertThat(openfga.replicas()).isZero();
    assertThat(cluster.postgres().schemaRevision(db)).isZero();
  }

  @Test
  void aMalformedUriIsReportedWithoutThePasswordThatOpenfgaPrints() {
    Postgres.Database db = cluster.postgres().createDatabase("malformed");
    // "%zz" is no URL escape: openfga migrate prints the whole URI in its error
    String uri = db.ownerUri().replace(db.password(), "open%zz" + db.password());
    OpenFgaView openfga = install("malformed", uri);
    Failed failed = awaitFailed(openfga);
    // what `openfga-operator status` shows at 2 a.m., read from the real API server: the Job
    // controller's failed Job (kept 5 s here), the operator's Warning among the namespace's Events
    await()
        .atMost(Duration.ofSeconds(4))
        .untilAsserted(
            () -> {
              JsonNode row = openfga.status();
              assertThat(row.path("desiredVersion").asText()).isEqualTo(Binaries.OLD_OPENFGA);
              assertThat(row.path("migratedVersion").isNull()).isTrue();
              assertThat(row.path("state").asText()).isIn("FAILED", "COOLDOWN");
              assertThat(row.path("job").path("name").asText()).isEqualTo(openfga.jobName());
              assertThat(row.path("job").path("status").asText()).isEqualTo("failed");
              assertThat(row.path("job").path("managed").asBoolean()).isTrue();
              assertThat(row.path("lastEvent").path("reason").asText())
                  .isEqualTo("MigrationFailed");
              assertThat(row.path("lastEvent").path("type").asText()).isEqualTo("Warning");
              assertThat(row.path("lastEvent").path("message").asText())
                  .contains("invalid database uri");
              assertThat(row.toString()).doesNotContain(db.password());
            });
    StringWriter table = new StringWriter();
    int exit =
        new StatusCommand(cluster.client(), Clock.systemUTC())
            .run(
                List.of("-n", cluster.namespace()),
                new PrintWriter(table, true),
                new PrintWriter(new StringWriter(), true));
    assertThat(exit).isZero();
    assertThat(table.toString())
        .contains("malformed")
        .contains("MigrationFailed")
        .doesNotContain(db.password());
    assertThat(failed.condition().getMessage())
        .contains("invalid database uri")
        .contains("postgres://" + db.owner() + ":***@")
        .doesNotContain(db.password());
    assertThat(openfga.events("MigrationFailed").get(0).getMessage())
        .contains("invalid database uri")
        .doesNotContain(db.password());
    assertThat(failed.job().getMetadata().getAnnotations().get("openfga.dev/failure-evidence"))
        .contains("invalid database uri")
        .doesNotContain(db.password());
  }

  @Test
  void aPasswordWithAHashIsNotPrintedAsAPort() {
    Postgres.Database db = cluster.postgres().createDatabase("hashpass");
    // Go cuts the URI at '#' first: openfga migrate prints the password's start as a port
    // ("invalid port \":Xk9vQ2\" after host"), with no '@' left to find the user info by
    String uri = db.ownerUri().replace(db.password(), "Xk9vQ2#" + db.password());
    OpenFgaView openfga = install("hashpass", uri);
    Failed failed = awaitFailed(openfga);

    assertThat(failed.condition().getMessage())
        .contains("invalid port \"***\"")
        .doesNotContain("Xk9vQ2");
    assertThat(openfga.events("MigrationFailed").get(0).getMessage())
        .contains("invalid port")
        .doesNotContain("Xk9vQ2");
    assertThat(failed.job().getMetadata().getAnnotations().get("openfga.dev/failure-evidence"))
        .contains("invalid port")
        .doesNotContain("Xk9vQ2");
  }

  @Test
  void anUnreadablePodLogNeitherDelaysTheFailureNorShortensTheCooldown() {
    String ns = cluster.newNamespace(cluster.namespace() + "-nolog", Map.of());
    cluster.kubelet().failLogs(ns);
    cluster.startOperator(cluster.installOperator(ns, VALUES), "operator-nolog");
    Postgres.Database db = cluster.postgres().createDatabase("nolog");
    OpenFgaView openfga = install(ns, "nolog", db.ownerUri().replace(db.password(), "wrong"), 0, 2);
    DeploymentCondition failed = awaitFailed(openfga).condition();
    assertThat(failed.getMessage())
        .contains("exit code 1")
        .contains("could not be read (HTTP 500)");
    Job job = openfga.job();
    Instant failedAt =
        job.getStatus().getConditions().stream()
            .filter(c -> c.getType().equals("Failed"))
            .map(c -> Instant.parse(c.getLastTransitionTime()))
            .findFirst()
            .orElseThrow();
    // counted from the Job's own failure, however long the log read took
    assertThat(Instant.parse(openfga.annotation("openfga.dev/migration-retry-after")))
        .isEqualTo(failedAt.plus(COOLDOWN));
    assertThat(
            Instant.parse(
                job.getMetadata().getAnnotations().get("openfga.dev/migration-retain-until")))
        .isEqualTo(failedAt.plus(COOLDOWN));
    // and the failed Job is kept as evidence until then
    String failedUid = job.getMetadata().getUid();
    Job next =
        await()
            .atMost(COOLDOWN.multipliedBy(4))
            .until(openfga::job, j -> j != null && !j.getMetadata().getUid().equals(failedUid));
    assertThat(Instant.parse(next.getMetadata().getCreationTimestamp()))
        .isAfterOrEqualTo(failedAt.plus(COOLDOWN));
  }

  @Test
  void aDatabaseThatDoesNotExistIsReportedAndRetriedAfterTheCooldown() {
    Postgres.Database db = cluster.postgres().createDatabase("nodb");
    OpenFgaView openfga =
        install("nodb", db.ownerUri().replace("/" + db.name() + "?", "/no_such_db?"), 0, 2);
    Failed failed = awaitFailed(openfga);
    assertThat(failed.condition().getMessage()).contains("database \"no_such_db\" does not exist");
    String firstJob = failed.job().getMetadata().getUid();
    Instant retryAfter = Instant.parse(openfga.annotation("openfga.dev/migration-retry-after"));
    // the operator keeps retrying, one Job at a time, never before the recorded time
    Job retry =
        await()
            .atMost(COOLDOWN.multipliedBy(4))
            .until(
                openfga::job, job -> job != null && !job.getMetadata().getUid().equals(firstJob));
    assertThat(Instant.parse(retry.getMetadata().getCreationTimestamp()))
        .isAfterOrEqualTo(retryAfter);
    assertThat(cluster.kubelet().maxConcurrentMigrations(cluster.namespace(), openfga.jobName()))
        .isEqualTo(1);
    assertThat(openfga.replicas()).isZero();
  }

  private static OpenFgaView install(String name, String uri, int replicas, int desired) {
    return install(cluster.namespace(), name, uri, replicas, desired);
  }

  private static OpenFgaView install(String name, String uri) {
    return install(cluster.namespace(), name, uri, 0, 2);
  }

  private static OpenFgaView install(
      String namespace, String name, String uri, int replicas, int desired) {
    return cluster.deploy(
        UpstreamOpenFga.fixture(namespace, name, Binaries.OLD_OPENFGA, replicas, desired)
            .envVar("OPENFGA_TIMEOUT", "3s"),
        uri);
  }

  /**
   * The condition MigrationFailed, read once the failure is complete, and the failed Job as the
   * wait read it last (with its evidence: the Job is replaced after the cooldown).
   */
  private record Failed(DeploymentCondition condition, Job job) {}

  private static Failed awaitFailed(OpenFgaView openfga) {
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(
            () ->
                assertThat(openfga.condition("MigrationFailed"))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True")));
    // the Warning Event follows the condition, then the retry time and, once the Job has Failed
    // (not only FailureTarget), its retention with the evidence
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> !openfga.events("MigrationFailed").isEmpty());
    Job failedJob =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                openfga::job,
                job ->
                    job != null
                        && job.getMetadata().getAnnotations() != null
                        && job.getMetadata()
                            .getAnnotations()
                            .containsKey("openfga.dev/failure-evidence")
                        && openfga.annotation("openfga.dev/migration-retry-after") != null);
    return new Failed(openfga.condition("MigrationFailed").orElseThrow(), failedJob);
  }
}
