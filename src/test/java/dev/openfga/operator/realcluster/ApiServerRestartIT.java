package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The API server restarted under a running operator (as in a control-plane upgrade), while a
 * migration is under way: the operator reconnects its watches and converges; nothing is lost or
 * done twice.
 */
class ApiServerRestartIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  @Test
  void theOperatorReconnectsAfterAnApiServerRestartAndFinishesWhatWasUnderWay() {
    OperatorInstall.OperatorProcess operator =
        cluster.startOperator(
            cluster.installOperator(cluster.namespace(), "leaderElection: {enabled: false}\n"),
            "operator-0");
    Postgres postgres = cluster.postgres();
    Postgres.Database db = postgres.createDatabase("restart");
    OpenFgaView before = deploy("before", db);
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(before.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA));

    try (Postgres.Lock lock = postgres.lockTable(db, "tuple")) {
      before.setVersion(Binaries.NEW_OPENFGA);
      await().atMost(Duration.ofMinutes(1)).until(() -> before.migrating(Binaries.NEW_OPENFGA));
      cluster.plane().restartApiServer(Duration.ofSeconds(3));
    }
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(before.recordedVersion()).isEqualTo(Binaries.NEW_OPENFGA));
    assertThat(postgres.schemaRevision(db)).isEqualTo(6);
    assertThat(cluster.kubelet().migrateRuns(cluster.namespace(), before.jobName())).hasSize(2);

    // the watches work again: a Deployment created after the restart is migrated too
    OpenFgaView after = deploy("after", postgres.createDatabase("restart_after"));
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(after.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA));
    // the scale comes right after the record
    await().atMost(Duration.ofSeconds(30)).until(() -> Integer.valueOf(1).equals(after.replicas()));
    assertThat(operator.isAlive()).isTrue();
  }

  private static OpenFgaView deploy(String name, Postgres.Database db) {
    return cluster.deploy(
        UpstreamOpenFga.fixture(cluster.namespace(), name, Binaries.OLD_OPENFGA, 0, 1),
        db.ownerUri());
  }
}
