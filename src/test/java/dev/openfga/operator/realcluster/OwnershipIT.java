package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the operator does with objects it did not make, on the real API server under the chart's
 * RBAC: the upstream chart's own Helm hook migration Job (hook mode) is adopted, a hand-made Job
 * and a foreign ConfigMap in the operator's way are never touched.
 */
class OwnershipIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  @BeforeAll
  static void installOperator() {
    cluster.startOperator(
        cluster.installOperator(cluster.namespace(), "leaderElection: {enabled: false}\n"),
        "operator-0");
  }

  @Test
  void theLegacyHelmHookJobOfTheHookModeChartIsReplacedByTheOperatorsOwn() {
    KubernetesClient client = cluster.client();
    Postgres.Database db = cluster.postgres().createDatabase("legacy");
    client
        .resource(UpstreamOpenFga.datastoreSecret(cluster.namespace(), "legacy", db.ownerUri()))
        .create();
    // hook mode: Helm ran its post-install hook Job, which really migrated the database
    Job hook =
        client
            .resource(
                UpstreamOpenFga.hookJob(
                    client, cluster.namespace(), "legacy", Binaries.OLD_OPENFGA))
            .create();
    OpenFgaView openfga = new OpenFgaView(client, cluster.namespace(), "legacy");
    await().atMost(Duration.ofMinutes(1)).until(openfga::job, OwnershipIT::succeeded);

    // the switch to operator mode: same release, migrations handed to the operator
    client
        .resource(
            UpstreamOpenFga.operatorMode(
                client, cluster.namespace(), "legacy", Binaries.OLD_OPENFGA, 3, null))
        .create();
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA));
    Job own = openfga.job();
    assertThat(own.getMetadata().getUid()).isNotEqualTo(hook.getMetadata().getUid());
    assertThat(own.getMetadata().getLabels())
        .containsEntry("app.kubernetes.io/managed-by", "openfga-operator");
    assertThat(openfga.events("LegacyHookJobAdopted")).hasSize(1);
    assertThat(cluster.kubelet().migrateRuns(cluster.namespace(), openfga.jobName())).hasSize(2);
    assertThat(cluster.kubelet().maxConcurrentMigrations(cluster.namespace(), openfga.jobName()))
        .isEqualTo(1);
    assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(5);
    assertThat(openfga.replicas()).isEqualTo(3);
  }

  @Test
  void aRunningLegacyHookJobFinishesItsMigrationBeforeItIsAdopted() {
    KubernetesClient client = cluster.client();
    Postgres postgres = cluster.postgres();
    Postgres.Database db = postgres.createDatabase("running_hook");
    // the database at v1.8.16's schema, then Helm's hook Job for v1.10.0 still at work
    client
        .resource(UpstreamOpenFga.datastoreSecret(cluster.namespace(), "hook", db.ownerUri()))
        .create();
    OpenFgaView openfga = new OpenFgaView(client, cluster.namespace(), "hook");
    client
        .resource(
            UpstreamOpenFga.hookJob(client, cluster.namespace(), "hook", Binaries.OLD_OPENFGA))
        .create();
    await().atMost(Duration.ofMinutes(1)).until(openfga::job, OwnershipIT::succeeded);
    client.batch().v1().jobs().inNamespace(cluster.namespace()).withName("hook-migrate").delete();
    await().atMost(Duration.ofMinutes(1)).until(() -> openfga.job() == null);
    Job running;
    try (Postgres.Lock lock = postgres.lockTable(db, "tuple")) {
      running =
          client
              .resource(
                  UpstreamOpenFga.hookJob(
                      client, cluster.namespace(), "hook", Binaries.NEW_OPENFGA))
              .create();
      await()
          .atMost(Duration.ofMinutes(1))
          .until(
              openfga::job,
              j ->
                  j != null
                      && j.getStatus() != null
                      && Integer.valueOf(1).equals(j.getStatus().getReady()));
      client
          .resource(
              UpstreamOpenFga.operatorMode(
                  client, cluster.namespace(), "hook", Binaries.NEW_OPENFGA, 1, null))
          .create();
      // a negative assertion: time enough to do something wrong
      ControlPlane.sleep(Duration.ofSeconds(5));
      // still Helm's Job, still running: never interrupted mid-migration
      Job now = openfga.job();
      assertThat(now).as("Helm's running Job").isNotNull();
      assertThat(now.getMetadata().getUid()).isEqualTo(running.getMetadata().getUid());
      assertThat(now.getMetadata().getDeletionTimestamp()).isNull();
    }
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.NEW_OPENFGA));
    assertThat(openfga.events("LegacyHookJobAdopted")).hasSize(1);
    assertThat(postgres.schemaRevision(db)).isEqualTo(6);
    assertThat(cluster.kubelet().maxConcurrentMigrations(cluster.namespace(), openfga.jobName()))
        .isEqualTo(1);
  }

  @Test
  void aDeploymentWithAVeryLongNameGetsItsEventsItsJobAndItsRecord() {
    // 230 characters with a "-" where the old Event-name rule cut (200): every Event was refused
    String name = "a".repeat(199) + "-" + "b".repeat(30);
    KubernetesClient client = cluster.client();
    Postgres.Database db = cluster.postgres().createDatabase("longname");
    client
        .resource(UpstreamOpenFga.datastoreSecret(cluster.namespace(), name, db.ownerUri()))
        .create();
    var deployment =
        UpstreamOpenFga.operatorMode(client, cluster.namespace(), name, Binaries.OLD_OPENFGA, 0, 1);
    // label values are at most 63 characters: the release (instance) label gets a short one
    deployment.getMetadata().getLabels().put("app.kubernetes.io/instance", "long");
    deployment.getSpec().getSelector().getMatchLabels().put("app.kubernetes.io/instance", "long");
    deployment
        .getSpec()
        .getTemplate()
        .getMetadata()
        .getLabels()
        .put("app.kubernetes.io/instance", "long");
    client.resource(deployment).create();
    OpenFgaView openfga = new OpenFgaView(client, cluster.namespace(), name);
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA));
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(openfga.events("MigrationStarted")).hasSize(1);
              assertThat(openfga.events("MigrationSucceeded")).hasSize(1);
            });
  }

  @Test
  void aHandMadeJobWithTheJobsNameIsReportedAndNeverTouched() {
    KubernetesClient client = cluster.client();
    // the DBA's Job runs for a second and finishes: finished or not, it is never touched
    cluster
        .kubelet()
        .when(
            cluster.namespace(),
            pod -> pod.getMetadata().getName().startsWith("handmade-migrate-"),
            new TestKubelet.Outcome.Exit(0, "dump done", Duration.ofSeconds(1)));
    Job foreign =
        client.resource(Fixtures.foreignJob(cluster.namespace(), "handmade-migrate")).create();
    OpenFgaView openfga = deploy("handmade");
    List<Event> conflicts =
        await()
            .atMost(Duration.ofMinutes(1))
            .until(() -> openfga.events("MigrationJobConflict"), events -> !events.isEmpty());
    assertThat(conflicts.get(0).getType()).isEqualTo("Warning");
    await().atMost(Duration.ofMinutes(1)).until(openfga::job, OwnershipIT::succeeded);
    // a negative assertion: time enough to do something wrong
    ControlPlane.sleep(Duration.ofSeconds(3));
    Job now = openfga.job();
    assertThat(now).as("the hand-made Job").isNotNull();
    assertThat(now.getMetadata().getUid()).isEqualTo(foreign.getMetadata().getUid());
    assertThat(now.getMetadata().getDeletionTimestamp()).isNull();
    assertThat(now.getMetadata().getLabels()).isEqualTo(foreign.getMetadata().getLabels());
    assertThat(now.getMetadata().getAnnotations())
        .isEqualTo(foreign.getMetadata().getAnnotations());
    assertThat(now.getMetadata().getOwnerReferences()).isEmpty();
    assertThat(now.getSpec().getTtlSecondsAfterFinished()).isNull();
    assertThat(openfga.statusConfigMap()).isNull();
    assertThat(openfga.replicas()).isZero();
  }

  @Test
  void aForeignConfigMapWithTheRecordsNameIsReportedNeverOverwrittenAndNoMigrationRuns() {
    KubernetesClient client = cluster.client();
    ConfigMap foreign =
        client
            .resource(
                new ConfigMapBuilder()
                    .withNewMetadata()
                    .withName("foreigncm-migration-status")
                    .withNamespace(cluster.namespace())
                    .endMetadata()
                    .withData(Map.of("version", "someone else's"))
                    .build())
            .create();
    OpenFgaView openfga = deploy("foreigncm");
    await()
        .atMost(Duration.ofMinutes(1))
        .until(() -> !openfga.events("MigrationStatusConflict").isEmpty());
    // a negative assertion: time enough to overwrite the ConfigMap or run a migration
    ControlPlane.sleep(Duration.ofSeconds(3));
    ConfigMap now = openfga.statusConfigMap();
    assertThat(now).as("the foreign ConfigMap").isNotNull();
    assertThat(now.getMetadata().getResourceVersion())
        .isEqualTo(foreign.getMetadata().getResourceVersion());
    assertThat(now.getData()).isEqualTo(foreign.getData());
    assertThat(openfga.job()).isNull();
    assertThat(cluster.kubelet().migrateRuns(cluster.namespace(), openfga.jobName())).isEmpty();
  }

  /** A Job already read (or null: none yet) has succeeded once. */
  private static boolean succeeded(Job job) {
    return job != null
        && job.getStatus() != null
        && Integer.valueOf(1).equals(job.getStatus().getSucceeded());
  }

  private static OpenFgaView deploy(String name) {
    return cluster.deploy(
        UpstreamOpenFga.fixture(cluster.namespace(), name, Binaries.OLD_OPENFGA, 0, 2),
        cluster.postgres().createDatabase(name).ownerUri());
  }
}
