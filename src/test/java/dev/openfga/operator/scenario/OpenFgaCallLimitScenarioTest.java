package dev.openfga.operator.scenario;

import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.FakeOpenFga;
import dev.openfga.operator.testing.MockCluster;
import dev.openfga.operator.testing.TestStores;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An OpenFGA server that hangs holds at most {@link OpenFgaCallLimit#SLOTS} of the operator's four
 * reconcile threads: a Deployment's migration runs meanwhile.
 */
class OpenFgaCallLimitScenarioTest {
  @RegisterExtension final MockCluster cluster = new MockCluster();
  private FakeOpenFga hanging;
  private final CountDownLatch released = new CountDownLatch(1);
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger mostInFlight = new AtomicInteger();

  @BeforeEach
  void start() throws IOException {
    hanging = new FakeOpenFga(cluster, this::hang);
  }

  @AfterEach
  void stop() {
    released.countDown();
    hanging.close();
  }

  private void hang(HttpExchange exchange) throws IOException {
    mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
    try {
      released.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      inFlight.decrementAndGet();
    }
    exchange.sendResponseHeaders(503, -1);
    exchange.close();
  }

  @Test
  void storesOnAHangingServerLeaveThreadsForAMigration() {
    for (int i = 0; i < 6; i++) {
      TestStores.create(cluster, "store-" + i, "store-" + i, "http://127.0.0.1:" + hanging.port());
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> inFlight.get() == OpenFgaCallLimit.SLOTS);

    cluster.jobs().script(j -> Script.SUCCEED);
    cluster.create(openfga().version("v1.8.0").build());

    // each hanging call takes 10 s before its timeout, and is tried four times
    await()
        .atMost(Duration.ofSeconds(8))
        .until(() -> cluster.recordedVersion("openfga").filter("v1.8.0"::equals).isPresent());
    assertThat(mostInFlight).hasValue(OpenFgaCallLimit.SLOTS);
  }
}
