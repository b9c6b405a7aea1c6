package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.migration.rules.Keys;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
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
    Duration terminating = Duration.ofSeconds(30);
    cluster.kubelet().slowTermination(cluster.namespace(), terminating);
    try (Postgres.Lock lock = postgres.lockTable(db, "tuple")) {
      openfga.setVersion(Binaries.NEW_OPENFGA);
      Job job =
          await()
              .atMost(Duration.ofMinutes(1))
              .until(openfga::job, j -> OpenFgaView.migrating(j, Binaries.NEW_OPENFGA));
      Pod first = pods(job).get(0);
      // a drain: the pod is deleted while openfga migrate runs; it takes 30 s to stop
      client.resource(first).delete();
      // a negative assertion: no second pod while the first one still terminates
      ControlPlane.sleep(terminating.minusSeconds(15));
      assertThat(pods(openfga.job()))
          .as("pods of the Job while the first one terminates")
          .extracting(p -> p.getMetadata().getName())
          .containsExactly(first.getMetadata().getName());
      // SIGTERM ends the waiting migrate; only then does the Job controller start another pod
      await()
          .atMost(Duration.ofMinutes(1))
          .until(
              () -> pods(openfga.job()),
              now ->
                  !now.isEmpty()
                      && now.stream()
                          .noneMatch(
                              p ->
                                  p.getMetadata().getName().equals(first.getMetadata().getName())));
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
      // one read of the Job per look: the finished Job of OLD_OPENFGA is deleted meanwhile
      await()
          .atMost(Duration.ofMinutes(1))
          .until(
              openfga::job,
              job ->
                  job != null
                      && job.getStatus() != null
                      && Integer.valueOf(1).equals(job.getStatus().getActive())
                      && pods(job).stream()
                          .anyMatch(
                              p ->
                                  p.getStatus() != null
                                      && "Running".equals(p.getStatus().getPhase())));
      Job running = openfga.job();
      assertThat(running).as("the running migration's Job").isNotNull();
      String uid = running.getMetadata().getUid();
      assertThat(running.getStatus().getReady()).isIn(null, 0);
      // a newer image while migrate to NEW_OPENFGA waits for the lock
      openfga.setVersion("v1.10.1");
      // a negative assertion: time enough to interrupt the migration, which must not happen
      ControlPlane.sleep(Duration.ofSeconds(8));
      Job after = openfga.job();
      assertThat(after).as("the running migration's Job, 8 s after the newer image").isNotNull();
      assertThat(after.getMetadata().getUid()).isEqualTo(uid);
      assertThat(after.getMetadata().getDeletionTimestamp()).isNull();
    } finally {
      cluster.kubelet().forget(cluster.namespace());
    }
    // not interrupted: once the lock is gone, the migration it ran reaches its end
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(postgres.schemaRevision(db)).isEqualTo(6));
  }

  /** The pods of a Job already read (none when it was gone). */
  private static List<Pod> pods(Job job) {
    if (job == null) {
      return List.of();
    }
    String uid = job.getMetadata().getUid();
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
