package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A first install, an upgrade that really changes the schema, and the Deployment's deletion, on the
 * real cluster with the real {@code openfga migrate} against PostgreSQL and the operator running
 * under the chart's RBAC. The methods run in order, on one OpenFGA installation.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class InstallAndUpgradeIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  private static Postgres.Database db;
  private static OpenFgaView openfga;
  private static OperatorInstall.OperatorProcess operator;

  @BeforeAll
  static void installOperatorAndOpenFga() {
    db = cluster.postgres().createDatabase("install");
    // debug: the log says which watch events were the echoes of the operator's own writes
    operator =
        cluster.startOperator(
            cluster.installOperator(
                cluster.namespace(), "leaderElection: {enabled: false}\nlogLevel: debug\n"),
            "operator-0");
    openfga =
        cluster.deploy(
            UpstreamOpenFga.fixture(cluster.namespace(), "openfga", Binaries.OLD_OPENFGA, 0, 2),
            db.ownerUri());
  }

  @Test
  @Order(1)
  void firstInstallMigratesTheEmptyDatabaseRecordsTheVersionAndScalesUp() {
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA));
    assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(5);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(openfga.replicas()).isEqualTo(2));
    // the real Deployment controller makes it Available once the kubelet's pods are Ready
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(
            () ->
                assertThat(openfga.condition("Available"))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True")));
    assertThat(cluster.kubelet().migrateRuns(cluster.namespace(), openfga.jobName())).hasSize(1);
    Job job = openfga.job();
    assertThat(job.getSpec().getTtlSecondsAfterFinished()).isEqualTo(300);
    assertThat(openfga.events("MigrationSucceeded")).hasSize(1);
    // a 1.35 API server keeps the Job's podReplacementPolicy, and the operator says nothing of it
    assertThat(job.getSpec().getPodReplacementPolicy()).isEqualTo("Failed");
    assertThat(operator.log()).doesNotContain("dropped podReplacementPolicy");
  }

  @Test
  @Order(2)
  void anUpgradeReplacesTheFinishedJobAndMigratesTheSchemaFrom5To6() {
    String oldJobUid = openfga.job().getMetadata().getUid();
    int logBefore = operator.log().length();
    openfga.setVersion(Binaries.NEW_OPENFGA);
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.NEW_OPENFGA));
    assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(6);
    // the finished Job went through real foreground deletion before its replacement ran
    assertThat(openfga.job().getMetadata().getUid()).isNotEqualTo(oldJobUid);
    assertThat(cluster.kubelet().migrateRuns(cluster.namespace(), openfga.jobName())).hasSize(2);
    assertThat(cluster.kubelet().maxConcurrentMigrations(cluster.namespace(), openfga.jobName()))
        .isEqualTo(1);
    Deployment deployment = openfga.deployment();
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
    assertThat(OpenFgaView.condition(deployment, "MigrationFailed")).isEmpty();
    // `openfga-operator status` after the upgrade, read from the real API server
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              JsonNode row = openfga.status();
              assertThat(row.path("desiredVersion").asText()).isEqualTo(Binaries.NEW_OPENFGA);
              assertThat(row.path("migratedVersion").asText()).isEqualTo(Binaries.NEW_OPENFGA);
              assertThat(row.path("state").asText()).isEqualTo("UP_TO_DATE");
              assertThat(row.path("job").path("status").asText()).isEqualTo("complete");
              assertThat(row.path("lastEvent").path("reason").asText())
                  .isEqualTo("MigrationSucceeded");
            });
    // the real API server's watch events of the operator's own Job create and record patch were
    // told from everyone else's (Echoes: the resourceVersion each write's answer gave) and woke
    // no reconcile
    String ns = cluster.namespace();
    String record = dev.openfga.operator.kube.Names.statusConfigMap("openfga");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(operator.log().substring(logBefore))
                    .contains("its own create of Job " + ns + "/" + openfga.jobName() + " ")
                    .contains("its own patch of ConfigMap " + ns + "/" + record + " "));
  }

  @Test
  @Order(3)
  void aDeliberateScaleToZeroAfterTheFirstInstallIsLeftAlone() {
    // kubectl scale --replicas=0 for maintenance, or KEDA's scale to zero
    cluster
        .client()
        .apps()
        .deployments()
        .inNamespace(cluster.namespace())
        .withName("openfga")
        .scale(0);
    // the operator looks at the Deployment (the scale and the controller's status are events):
    // a negative assertion, time enough to scale it back up
    ControlPlane.sleep(java.time.Duration.ofSeconds(5));
    assertThat(openfga.replicas()).isZero();
    assertThat(openfga.statusConfigMap().getData()).doesNotContainKey("restoreReplicas");
  }

  @Test
  @Order(4)
  void deletingTheDeploymentLetsTheGarbageCollectorRemoveTheJobAndTheRecord() {
    cluster
        .client()
        .apps()
        .deployments()
        .inNamespace(cluster.namespace())
        .withName("openfga")
        .withPropagationPolicy(DeletionPropagation.BACKGROUND)
        .delete();
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(
            () -> {
              assertThat(openfga.job()).isNull();
              assertThat(openfga.statusConfigMap()).isNull();
            });
  }
}
