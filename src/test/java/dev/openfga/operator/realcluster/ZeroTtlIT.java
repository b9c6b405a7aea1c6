package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code ttlSecondsAfterFinished: 0}: the real TTL controller deletes each Job as soon as it has
 * finished, so the Job's deletion can reach the operator before its own record write does. The
 * operator reads nothing before a create (ADR 0016): what keeps it from running a recorded
 * migration again is the record it remembers writing. Each version migrates exactly once.
 */
class ZeroTtlIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  @Test
  void eachVersionMigratesOnceAlthoughItsJobVanishesAtOnce() {
    Postgres.Database db = cluster.postgres().createDatabase("zerottl");
    cluster.startOperator(
        cluster.installOperator(
            cluster.namespace(),
            "leaderElection: {enabled: false}\n"
                + "migrationJob: {backoffLimit: 0, ttlSecondsAfterFinished: 0}\n"),
        "operator-0");
    OpenFgaView openfga =
        cluster.deploy(
            UpstreamOpenFga.fixture(cluster.namespace(), "openfga", Binaries.OLD_OPENFGA, 0, 1),
            db.ownerUri());

    awaitRecordedAndJobGone(openfga, Binaries.OLD_OPENFGA);
    assertThat(cluster.kubelet().migrateRuns(cluster.namespace(), openfga.jobName())).hasSize(1);
    assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(5);

    openfga.setVersion(Binaries.NEW_OPENFGA);
    awaitRecordedAndJobGone(openfga, Binaries.NEW_OPENFGA);
    assertThat(cluster.kubelet().migrateRuns(cluster.namespace(), openfga.jobName())).hasSize(2);
    assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(6);
    assertThat(openfga.events("MigrationStarted")).hasSize(2);
  }

  /**
   * The version recorded, the TTL controller deleted the Job; then a few seconds for a wrong second
   * Job to appear.
   */
  private static void awaitRecordedAndJobGone(OpenFgaView openfga, String version) {
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(version));
    await().atMost(Duration.ofMinutes(1)).untilAsserted(() -> assertThat(openfga.job()).isNull());
    // a negative assertion: no second Job appears
    ControlPlane.sleep(Duration.ofSeconds(5));
    assertThat(openfga.job()).as("a Job after the recorded migration's Job was deleted").isNull();
  }
}
