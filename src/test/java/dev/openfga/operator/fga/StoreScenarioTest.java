package dev.openfga.operator.fga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.openfga.operator.testing.FakeOpenFga;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The FGAStore controller in the real operator against the mock API server and a fake OpenFGA
 * (stores in a map): the fast tier; the rules against the real server are {@code StoreIT}.
 */
class StoreScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final ObjectMapper JSON = new ObjectMapper();

  private MockCluster cluster;
  private FakeOpenFga openfga;
  private final Map<String, String> stores = new ConcurrentHashMap<>();
  private final AtomicInteger ids = new AtomicInteger();

  @BeforeEach
  void start() throws IOException {
    cluster = new MockCluster();
    openfga = new FakeOpenFga(cluster, this::serve);
  }

  @AfterEach
  void stop() {
    cluster.close();
    openfga.close();
  }

  /** DELETE requests answered 503 before the server deletes again. */
  private final AtomicInteger failingDeletes = new AtomicInteger();

  /**
   * When set, each look-up of the stores ({@code GET /stores}) waits until this many have arrived,
   * or 2 s: two look-ups the operator sends at once are answered at once.
   */
  private volatile CountDownLatch lookups;

  private void serve(HttpExchange exchange) throws IOException {
    String path = exchange.getRequestURI().getPath();
    String method = exchange.getRequestMethod();
    int status = 200;
    ObjectNode body = JSON.createObjectNode();
    if (method.equals("DELETE") && failingDeletes.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      exchange.sendResponseHeaders(503, -1);
      exchange.close();
      return;
    }
    if (path.equals("/stores") && method.equals("GET")) {
      CountDownLatch held = lookups;
      if (held != null) {
        held.countDown();
        try {
          held.await(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      ArrayNode list = body.putArray("stores");
      stores.forEach((id, name) -> list.addObject().put("id", id).put("name", name));
    } else if (path.equals("/stores") && method.equals("POST")) {
      String name = JSON.readTree(exchange.getRequestBody()).path("name").asText();
      String id = String.format("01HVMMBCMGZNT3SED4Z17E%04d", ids.incrementAndGet());
      stores.put(id, name);
      body.put("id", id).put("name", name);
      status = 201;
    } else {
      String id = path.substring("/stores/".length());
      if (!stores.containsKey(id)) {
        status = 404;
        body.put("code", "store_id_not_found");
      } else if (method.equals("DELETE")) {
        stores.remove(id);
        status = 204;
      } else {
        body.put("id", id).put("name", stores.get(id));
      }
    }
    byte[] out = status == 204 ? new byte[0] : body.toString().getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(status, out.length == 0 ? -1 : out.length);
    try (OutputStream o = exchange.getResponseBody()) {
      o.write(out);
    }
  }

  private FGAStore apply(String name, String storeName) {
    return TestStores.create(cluster, name, storeName, "http://127.0.0.1:" + openfga.port());
  }

  private Condition ready(String name) {
    FGAStore s =
        cluster.client().resources(FGAStore.class).inNamespace(MockCluster.NS).withName(name).get();
    return s == null || s.getStatus() == null
        ? null
        : s.getStatus().getConditions().stream()
            .filter(c -> c.getType().equals("Ready"))
            .findFirst()
            .orElse(null);
  }

  @Test
  void aNewStoreIsCreatedOnceAndReportedReady() {
    apply("app", "app-store");
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(ready("app")).extracting(Condition::getStatus).isEqualTo("True"));
    assertThat(stores).containsValue("app-store").hasSize(1);
    FGAStore s =
        cluster
            .client()
            .resources(FGAStore.class)
            .inNamespace(MockCluster.NS)
            .withName("app")
            .get();
    assertThat(s.getStatus().getStoreId()).isIn(stores.keySet());
    assertThat(s.getStatus().getCreatedByOperator()).isTrue();
    assertThat(s.getMetadata().getFinalizers()).containsExactly("fgastores.openfga.dev/finalizer");
  }

  @Test
  void twoFGAStoresOfOneStoreNameCreateOneStoreAndTheOtherAdoptsIt() {
    // without the operator's lock on the name both look-ups would meet here, find no store and
    // both create one; the second spells the server's URL another way
    lookups = new CountDownLatch(2);
    apply("first", "shared");
    TestStores.create(cluster, "second", "shared", "http://127.0.0.1:" + openfga.port() + "/");
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(ready("first")).extracting(Condition::getStatus).isEqualTo("True");
              assertThat(ready("second")).extracting(Condition::getStatus).isEqualTo("True");
            });
    assertThat(stores).hasSize(1).containsValue("shared");
    String id = stores.keySet().iterator().next();
    FGAStore first = TestStores.get(cluster, "first");
    FGAStore second = TestStores.get(cluster, "second");
    assertThat(first.getStatus().getStoreId()).isEqualTo(id);
    assertThat(second.getStatus().getStoreId()).isEqualTo(id);
    // one made it (and may delete it), the other adopted it (and never deletes it)
    assertThat(
            java.util.List.of(
                first.getStatus().getCreatedByOperator(),
                second.getStatus().getCreatedByOperator()))
        .containsExactlyInAnyOrder(true, false);
    assertThat(cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems())
        .extracting(e -> e.getReason())
        .containsOnlyOnce(StorePlanner.CREATED, StorePlanner.ADOPTED);
  }

  @Test
  void twoStoresWithTheNameBlockAndCreateNothing() {
    stores.put("01HVMMBCMGZNT3SED4Z17EAAAA", "dup");
    stores.put("01HVMMBCMGZNT3SED4Z17EBBBB", "dup");
    apply("dup", "dup");
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(ready("dup"))
                    .extracting(Condition::getReason)
                    .isEqualTo("AmbiguousStoreName"));
    assertThat(stores).hasSize(2);
  }

  @Test
  void aStoreDeletedWithItsSecretIsStillDeletedWhenTheServerRefusesAtFirst() {
    cluster
        .client()
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("key")
                .withNamespace(MockCluster.NS)
                .endMetadata()
                .addToData("apiToken", "a2V5") // key
                .build())
        .create();
    // created with both, so that no reconcile ever sees it without them
    TestStores.create(
        cluster,
        "app",
        "app-store",
        "http://127.0.0.1:" + openfga.port(),
        spec -> {
          spec.setDeletionPolicy(FGAStore.DeletionPolicy.Delete);
          spec.getOpenfgaRef().setCredentialsRef(new FGAStore.NameRef("key"));
        });
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(ready("app")).extracting(Condition::getStatus).isEqualTo("True"));
    assertThat(stores).hasSize(1);

    // the first try (FgaApi's four attempts) is refused; the next, 10 s later, deletes
    failingDeletes.set(FgaApi.ATTEMPTS);
    cluster.client().secrets().inNamespace(MockCluster.NS).withName("key").delete();
    cluster.client().resources(FGAStore.class).inNamespace(MockCluster.NS).withName("app").delete();

    await().atMost(Duration.ofSeconds(30)).until(() -> TestStores.get(cluster, "app") == null);
    assertThat(stores).isEmpty();
    assertThat(cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems())
        .extracting(e -> e.getReason())
        .contains("OpenFGARequestFailed")
        .doesNotContain("StoreNotDeleted");
  }
}
