package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two operator instances with leader election on the real Lease API, as the chart runs them (its
 * default): one acts, and SIGTERM to it ends the process within the chart's termination grace
 * period (30 s), hands the Lease back, and the other instance takes over.
 */
class LeaderElectionIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  private static final String LEASE = "openfga-it-leader";

  /** The pod's default {@code terminationGracePeriodSeconds}; the chart keeps it. */
  private static final Duration GRACE = Duration.ofSeconds(30);

  @Test
  void sigtermToTheLeaderReleasesTheLeaseAndTheOtherInstanceTakesOver() {
    // a Lease of its own name (a second release in the namespace would keep the default): the
    // chart's Role grants that name only
    OperatorInstall install =
        cluster.installOperator(
            cluster.namespace(), "leaderElection: {leaseName: " + LEASE + "}\n");
    // the connection keeper's period shortened: with leader election it must not run at all
    String keeper = "-Dopenfga.operator.test.connectionKeeperMillis=300";
    Map<String, OperatorInstall.OperatorProcess> instances =
        Map.of(
            "operator-a", cluster.closeAfterClass(install.start("operator-a", keeper)),
            "operator-b", cluster.closeAfterClass(install.start("operator-b", keeper)));
    String leader =
        await()
            .atMost(Duration.ofMinutes(1))
            .until(() -> holder(install), h -> h != null && instances.containsKey(h));
    String follower = leader.equals("operator-a") ? "operator-b" : "operator-a";

    Postgres.Database db = cluster.postgres().createDatabase("leader");
    OpenFgaView openfga =
        cluster.deploy(
            UpstreamOpenFga.fixture(cluster.namespace(), "openfga", Binaries.OLD_OPENFGA, 0, 1),
            db.ownerUri());
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA));

    // the Lease renewals keep the connection in use: no GET /version from either instance
    instances.values().forEach(i -> assertThat(i.log()).doesNotContain("GET /version"));
    OperatorInstall.OperatorProcess stopped = instances.get(leader);
    assertThat(stopped.terminate(GRACE))
        .as("exit code after SIGTERM (-1: still running after the grace period)\n%s", stopped.log())
        .isNotNegative();
    assertThat(stopped.log()).contains("Released the leader-election Lease");
    // released, not left to expire: right after the exit the old leader no longer holds it
    assertThat(holder(install)).isNotEqualTo(leader);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(holder(install)).isEqualTo(follower));

    openfga.setVersion(Binaries.NEW_OPENFGA);
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.NEW_OPENFGA));
    // the transition's log line comes after its last write
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(instances.get(follower).log())
                    .contains("migration to v1.10.0 succeeded"));
    assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(6);
    assertThat(
            cluster
                .client()
                .leases()
                .inNamespace(install.namespace())
                .withName("openfga-operator-leader")
                .get())
        .as("the default Lease, left to another release")
        .isNull();
  }

  private static String holder(OperatorInstall install) {
    Lease lease = cluster.client().leases().inNamespace(install.namespace()).withName(LEASE).get();
    return lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
  }
}
