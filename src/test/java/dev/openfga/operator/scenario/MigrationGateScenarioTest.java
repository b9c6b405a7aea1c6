package dev.openfga.operator.scenario;

import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.testing.FakeJobController;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.FakeOpenFga;
import dev.openfga.operator.testing.InMemoryOpenFga;
import dev.openfga.operator.testing.MockCluster;
import dev.openfga.operator.testing.TestStores;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The migration gate in the real operator (mock API server, fake Job and Deployment controllers, a
 * fake OpenFGA): a store waits for its database's first migration, not for every upgrade's.
 */
class MigrationGateScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  @RegisterExtension final MockCluster cluster = new MockCluster();
  private FakeOpenFga openfga;

  @BeforeEach
  void start() throws IOException {
    openfga = new FakeOpenFga(cluster, new InMemoryOpenFga());
  }

  @AfterEach
  void stop() {
    openfga.close();
  }

  private static Condition ready(FGAStore store) {
    return store == null || store.getStatus() == null || store.getStatus().getConditions() == null
        ? null
        : store.getStatus().getConditions().stream()
            .filter(c -> c.getType().equals("Ready"))
            .findFirst()
            .orElse(null);
  }

  @Test
  void aStoreStaysReadyWhileAnUpgradeMigrates() {
    // the first migration completes; the upgrade's keeps running
    cluster
        .jobs()
        .script(j -> "v1.8.0".equals(FakeJobController.version(j)) ? Script.SUCCEED : Script.RUN);
    TestStores.create(
        cluster,
        "app",
        "app-store",
        "http://127.0.0.1:" + openfga.port(),
        spec -> spec.getOpenfgaRef().setDeploymentRef(new FGAStore.NameRef("openfga")));
    FGAStore waiting =
        await()
            .atMost(WAIT)
            .until(
                () -> TestStores.get(cluster, "app"),
                s -> ready(s) != null && "WaitingForMigration".equals(ready(s).getReason()));
    assertThat(ready(waiting).getMessage()).contains("does not exist");

    cluster.create(openfga().version("v1.8.0").build());
    await()
        .atMost(WAIT)
        .until(
            () -> TestStores.get(cluster, "app"),
            s -> ready(s) != null && "StoreReady".equals(ready(s).getReason()));

    cluster.setImage("openfga", "openfga/openfga:v1.9.0");
    await()
        .atMost(WAIT)
        .until(
            () -> cluster.job("openfga-migrate"),
            j -> j != null && running(j) && "v1.9.0".equals(FakeJobController.version(j)));
    // the store looked at again mid-migration (a spec change is a new generation to observe)
    TestStores.edit(
        cluster, "app", s -> s.getSpec().setDeletionPolicy(FGAStore.DeletionPolicy.Delete));
    FGAStore looked =
        await()
            .atMost(WAIT)
            .until(
                () -> TestStores.get(cluster, "app"),
                s -> Long.valueOf(2).equals(s.getStatus().getObservedGeneration()));
    assertThat(ready(looked)).extracting(Condition::getStatus).isEqualTo("True");
    assertThat(ready(looked).getReason()).isEqualTo("StoreReady");
    // and the migration was still under way
    assertThat(cluster.recordedVersion("openfga")).contains("v1.8.0");
    assertThat(running(cluster.job("openfga-migrate"))).isTrue();
  }

  private static boolean running(Job job) {
    return job.getStatus() != null
        && job.getStatus().getActive() != null
        && job.getStatus().getActive() > 0;
  }
}
