package dev.openfga.operator.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.testing.MockCluster;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Without leader election the operator sends {@code GET /version} at a fixed period, so that its
 * connection to the API server is never idle long enough to be closed; closing the keeper stops it.
 */
class ConnectionKeeperTest {

  private static long versionRequests(MockCluster cluster) {
    return cluster.requests().stream()
        .filter(r -> r.method().equals("GET") && r.path().equals("/version"))
        .count();
  }

  @Test
  void sendsAVersionRequestEveryPeriodUntilClosed() throws Exception {
    try (MockCluster cluster = MockCluster.withoutControllers()) {
      ConnectionKeeper keeper =
          ConnectionKeeper.start(cluster.operatorClient(), Duration.ofMillis(100));
      await().atMost(Duration.ofSeconds(5)).until(() -> versionRequests(cluster) >= 3);
      keeper.close();
      long afterClose = versionRequests(cluster);
      Thread.sleep(400);
      // at most one that was already in flight
      assertThat(versionRequests(cluster)).isLessThanOrEqualTo(afterClose + 1);
    }
  }

  @Test
  void nothingIsSentBeforeTheFirstPeriod() throws Exception {
    try (MockCluster cluster = MockCluster.withoutControllers()) {
      try (ConnectionKeeper keeper =
          ConnectionKeeper.start(cluster.operatorClient(), Duration.ofSeconds(30))) {
        Thread.sleep(300);
        assertThat(versionRequests(cluster)).isZero();
      }
    }
  }
}
