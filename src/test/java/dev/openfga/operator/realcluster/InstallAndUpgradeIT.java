package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A first install and an upgrade that really changes the schema, on the real cluster with the real
 * {@code openfga migrate} against PostgreSQL, the operator running under the chart's RBAC.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class InstallAndUpgradeIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  private static final String NAME = "openfga";
  private static Postgres.Database db;

  @BeforeAll
  static void installOperatorAndOpenFga() {
    db = cluster.postgres().createDatabase("install");
    OperatorInstall install =
        cluster.installOperator(cluster.namespace(), "leaderElection: {enabled: false}\n");
    cluster.startOperator(install, "operator-0");
    KubernetesClient client = cluster.client();
    client
        .resource(UpstreamOpenFga.datastoreSecret(cluster.namespace(), NAME, db.ownerUri()))
        .create();
    client
        .resource(
            UpstreamOpenFga.operatorMode(
                client, cluster.namespace(), NAME, Binaries.OLD_OPENFGA, 0, 2))
        .create();
  }

  @Test
  @Order(1)
  void firstInstallMigratesTheEmptyDatabaseRecordsTheVersionAndScalesUp() {
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA));
    assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(5);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(deployment().getSpec().getReplicas()).isEqualTo(2));
    // the real Deployment controller makes it Available with the kubelet's Ready pods
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(
            () -> assertThat(condition("Available")).extracting("status").isEqualTo("True"));
    assertThat(cluster.kubelet().migrateRuns(cluster.namespace(), NAME + "-migrate")).hasSize(1);
    Job job =
        cluster
            .client()
            .batch()
            .v1()
            .jobs()
            .inNamespace(cluster.namespace())
            .withName(NAME + "-migrate")
            .get();
    assertThat(job.getSpec().getTtlSecondsAfterFinished()).isEqualTo(300);
  }

  @Test
  @Order(2)
  void anUpgradeMigratesTheSchemaFromRevision5To6AndTheRecordFollows() {
    cluster
        .client()
        .apps()
        .deployments()
        .inNamespace(cluster.namespace())
        .withName(NAME)
        .edit(
            d -> {
              d.getSpec()
                  .getTemplate()
                  .getSpec()
                  .getContainers()
                  .get(0)
                  .setImage("openfga/openfga:" + Binaries.NEW_OPENFGA);
              return d;
            });
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(recordedVersion()).isEqualTo(Binaries.NEW_OPENFGA));
    assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(6);
    List<TestKubelet.Run> runs =
        cluster.kubelet().migrateRuns(cluster.namespace(), NAME + "-migrate");
    assertThat(runs).hasSize(2);
    assertThat(cluster.kubelet().maxConcurrentMigrations(cluster.namespace(), NAME + "-migrate"))
        .isEqualTo(1);
    assertThat(deployment().getSpec().getReplicas()).isEqualTo(2);
    assertThat(condition("MigrationFailed")).isNull();
  }

  private static Deployment deployment() {
    return cluster
        .client()
        .apps()
        .deployments()
        .inNamespace(cluster.namespace())
        .withName(NAME)
        .get();
  }

  private static DeploymentCondition condition(String type) {
    var status = deployment().getStatus();
    if (status == null || status.getConditions() == null) {
      return null;
    }
    return status.getConditions().stream()
        .filter(c -> c.getType().equals(type))
        .findFirst()
        .orElse(null);
  }

  private static String recordedVersion() {
    ConfigMap record =
        cluster
            .client()
            .configMaps()
            .inNamespace(cluster.namespace())
            .withName(NAME + "-migration-status")
            .get();
    return record == null ? null : record.getData().get("version");
  }
}
