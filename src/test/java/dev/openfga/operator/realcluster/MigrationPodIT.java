package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.model.Keys;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The migration Job's pod under the real Job controller and admission: a pod deleted mid-migration
 * (a node drain, an eviction) is not replaced while it still terminates.
 */
class MigrationPodIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  @BeforeAll
  static void installOperator() {
    cluster.startOperator(
        cluster.installOperator(cluster.namespace(), "leaderElection: {enabled: false}\n"),
        "operator-0");
  }

  @Test
  void aMigrationPodThatIsStillTerminatingIsNotReplacedByASecondOne() {
    KubernetesClient client = cluster.client();
    Postgres postgres = cluster.postgres();
    Postgres.Database db = postgres.createDatabase("drain");
    OpenFgaView openfga = deploy("drain", db);
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA));

    // longer than the Job controller's 10 s back-off after a failed (here: deleted) pod
    Duration terminating = Duration.ofSeconds(20);
    cluster.kubelet().slowTermination(cluster.namespace(), terminating);
    try (Postgres.Lock lock = postgres.lockTable(db, "tuple")) {
      openfga.setVersion(Binaries.NEW_OPENFGA);
      await().atMost(Duration.ofMinutes(1)).until(() -> openfga.migrating(Binaries.NEW_OPENFGA));
      Pod first = pods(openfga).get(0);
      // a drain: the pod is deleted while openfga migrate runs; it takes 20 s to stop
      client.resource(first).delete();
      ControlPlane.sleep(terminating.minusSeconds(5));
      assertThat(pods(openfga))
          .as("pods of the Job while the first one terminates")
          .extracting(p -> p.getMetadata().getName())
          .containsExactly(first.getMetadata().getName());
      // SIGTERM ends the waiting migrate; only then does the Job controller start another pod
      await()
          .atMost(Duration.ofMinutes(1))
          .until(
              () ->
                  pods(openfga).stream()
                          .noneMatch(
                              p -> p.getMetadata().getName().equals(first.getMetadata().getName()))
                      && !pods(openfga).isEmpty());
    }
    // once it is gone, the Job controller's replacement finishes the migration
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.NEW_OPENFGA));
    assertThat(postgres.schemaRevision(db)).isEqualTo(6);
    assertThat(cluster.kubelet().migrateRuns(cluster.namespace(), openfga.jobName())).hasSize(3);
    assertThat(cluster.kubelet().maxConcurrentMigrations(cluster.namespace(), openfga.jobName()))
        .isEqualTo(1);
  }

  @Test
  void aRunningMigrationWhosePodIsNotReadyIsNotInterruptedByAVersionChange() {
    // as with migration-mesh "true": the injected proxy, not ready, keeps the pod from Ready while
    // openfga migrate runs, and the Job counts no ready pod
    Postgres postgres = cluster.postgres();
    Postgres.Database db = postgres.createDatabase("notready");
    OpenFgaView openfga = deploy("notready", db);
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA));
    cluster.kubelet().notReady(cluster.namespace());
    try (Postgres.Lock lock = postgres.lockTable(db, "tuple")) {
      openfga.setVersion(Binaries.NEW_OPENFGA);
      await()
          .atMost(Duration.ofMinutes(1))
          .until(
              () ->
                  openfga.job() != null
                      && Integer.valueOf(1).equals(openfga.job().getStatus().getActive())
                      && pods(openfga).stream()
                          .anyMatch(p -> "Running".equals(p.getStatus().getPhase())));
      String uid = openfga.job().getMetadata().getUid();
      assertThat(openfga.job().getStatus().getReady()).isIn(null, 0);
      // a newer image while migrate to NEW_OPENFGA waits for the lock
      openfga.setVersion("v1.10.1");
      ControlPlane.sleep(Duration.ofSeconds(8));
      assertThat(openfga.job().getMetadata().getUid()).isEqualTo(uid);
      assertThat(openfga.job().getMetadata().getDeletionTimestamp()).isNull();
    } finally {
      cluster.kubelet().forget(cluster.namespace());
    }
    // not interrupted: once the lock is gone, the migration it ran reaches its end
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(postgres.schemaRevision(db)).isEqualTo(6));
  }

  private static List<Pod> pods(OpenFgaView openfga) {
    String uid = openfga.job().getMetadata().getUid();
    return cluster
        .client()
        .pods()
        .inNamespace(cluster.namespace())
        .withLabel(Keys.JOB_UID_LABEL, uid)
        .list()
        .getItems();
  }

  private static OpenFgaView deploy(String name, Postgres.Database db) {
    return cluster.deploy(
        UpstreamOpenFga.fixture(cluster.namespace(), name, Binaries.OLD_OPENFGA, 0, 1),
        db.ownerUri());
  }
}
