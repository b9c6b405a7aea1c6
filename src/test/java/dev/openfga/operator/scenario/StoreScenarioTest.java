package dev.openfga.operator.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.openfga.Credentials;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.stores.StoreReason;
import dev.openfga.operator.testing.Edits;
import dev.openfga.operator.testing.FakeOpenFga;
import dev.openfga.operator.testing.InMemoryOpenFga;
import dev.openfga.operator.testing.MockCluster;
import dev.openfga.operator.testing.TestStores;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The FGAStore controller in the real operator against the mock API server and a fake OpenFGA
 * (stores in a map): the fast tier; the rules against the real server are {@code StoreIT}.
 */
class StoreScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  @RegisterExtension final MockCluster cluster = new MockCluster();
  private FakeOpenFga openfga;
  private final InMemoryOpenFga api = new InMemoryOpenFga();
  private final Map<String, String> stores = api.stores;

  /** Requests {@link #other} and {@link #notListed} were sent. */
  private final AtomicInteger otherAsked = new AtomicInteger();

  private final AtomicInteger notListedAsked = new AtomicInteger();

  /** A second server the operator is installed for (a Secret's credentials are not for it). */
  private HttpServer other;

  /** A server the operator is not installed for. */
  private HttpServer notListed;

  @BeforeEach
  void start() throws IOException {
    other = countingServer(otherAsked);
    notListed = countingServer(notListedAsked);
    openfga = new FakeOpenFga(cluster, api, url(other));
  }

  @AfterEach
  void stop() {
    openfga.close();
    other.stop(0);
    notListed.stop(0);
  }

  private static String url(HttpServer server) {
    return "http://127.0.0.1:" + server.getAddress().getPort();
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
  void aStoreWhoseStatusWriteAfterTheCreateFailedIsStillTheOperatorsAndDeleted() {
    // the status write right after the create fails, as a crash between the two would lose it:
    // the next reconcile finds the store by name, and the intent recorded before the create
    // tells it is the operator's own
    AtomicInteger injected = new AtomicInteger();
    api.afterCreate =
        () -> {
          api.afterCreate = null;
          injected.incrementAndGet();
          // (not a 5xx: the client itself would try that again at once)
          cluster.failNextAt("PATCH", "/fgastores/app/status", 422, 1);
        };
    TestStores.create(
        cluster,
        "app",
        "app-store",
        "http://127.0.0.1:" + openfga.port(),
        spec -> spec.setDeletionPolicy(FGAStore.DeletionPolicy.Delete));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(ready("app")).extracting(Condition::getStatus).isEqualTo("True"));
    assertThat(injected).hasValue(1);
    assertThat(api.created).hasValue(1);
    String id = stores.keySet().iterator().next();
    FGAStore s = TestStores.get(cluster, "app");
    assertThat(s.getStatus().getStoreId()).isEqualTo(id);
    assertThat(s.getStatus().getCreatedByOperator()).isTrue();
    assertThat(s.getStatus().getCreating()).isNull();
    assertThat(eventReasons())
        .contains(StoreReason.StoreCreated.name())
        .doesNotContain(StoreReason.StoreAdopted.name());

    cluster.client().resources(FGAStore.class).inNamespace(MockCluster.NS).withName("app").delete();
    await().atMost(WAIT).until(() -> TestStores.get(cluster, "app") == null);
    assertThat(stores).isEmpty();
  }

  @Test
  void twoFGAStoresOfOneStoreNameCreateOneStoreAndTheOtherAdoptsIt() {
    // without the operator's lock on the name both look-ups would meet here, find no store and
    // both create one; the second spells the server's URL another way
    api.lookups = new CountDownLatch(2);
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
    assertThat(eventReasons())
        .containsOnlyOnce(StoreReason.StoreCreated.name(), StoreReason.StoreAdopted.name());

    // the one that made it, deleted under Delete, keeps it: the other stands for it
    String creator =
        Boolean.TRUE.equals(first.getStatus().getCreatedByOperator()) ? "first" : "second";
    String other = creator.equals("first") ? "second" : "first";
    var stores = cluster.client().resources(FGAStore.class).inNamespace(MockCluster.NS);
    Edits.edit(
        stores.withName(creator),
        s -> s.getSpec().setDeletionPolicy(FGAStore.DeletionPolicy.Delete));
    stores.withName(creator).delete();
    await().atMost(WAIT).until(() -> TestStores.get(cluster, creator) == null);
    assertThat(this.stores).containsOnlyKeys(id);
    assertThat(cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems())
        .filteredOn(e -> e.getReason().equals(StoreReason.StoreNotDeleted.name()))
        .singleElement()
        .satisfies(
            e ->
                assertThat(e.getMessage())
                    .contains("store " + id)
                    .contains("FGAStore " + MockCluster.NS + "/" + other + " stands for it too"));
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
  void aServerTheOperatorIsNotInstalledForGetsNoRequestNotEvenAtADeletion() {
    String foreign = url(notListed);
    TestStores.create(
        cluster,
        "foreign",
        "foreign-store",
        foreign,
        spec -> spec.setDeletionPolicy(FGAStore.DeletionPolicy.Delete));
    Condition refused =
        await()
            .atMost(WAIT)
            .until(
                () -> ready("foreign"),
                c -> c != null && c.getReason().equals(StoreReason.ServerNotAllowed.name()));
    // the reconcile that wrote this sent nothing there, not even the look-up by name
    assertThat(notListedAsked).hasValue(0);
    assertThat(refused.getStatus()).isEqualTo("False");
    assertThat(refused.getMessage())
        .contains(foreign + " is not one of the OpenFGA servers")
        .contains(openfga.url());
    assertThat(eventReasons()).containsOnlyOnce(StoreReason.ServerNotAllowed.name());

    // its FGAModel waits, and nothing of it goes there either
    FGAModel model = new FGAModel();
    model.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName("foreign")
            .withNamespace(MockCluster.NS)
            .build());
    FGAModel.Spec m = new FGAModel.Spec();
    m.setStoreRef(new FGAStore.NameRef("foreign"));
    m.setModel("model\n  schema 1.1\ntype user\n");
    model.setSpec(m);
    cluster.client().resources(FGAModel.class).inNamespace(MockCluster.NS).resource(model).create();
    Condition waiting =
        await()
            .atMost(WAIT)
            .until(
                () -> {
                  FGAModel read = TestStores.getModel(cluster, "foreign");
                  return read == null || read.getStatus() == null
                      ? null
                      : read.getStatus().getConditions().stream()
                          .filter(c -> c.getType().equals("Ready"))
                          .findFirst()
                          .orElse(null);
                },
                c -> c != null && c.getReason().equals("StoreNotReady"));
    assertThat(waiting.getMessage()).contains(StoreReason.ServerNotAllowed.name());

    // a store the operator made on a listed server, its url then pointed at the other one and the
    // FGAStore deleted (deletionPolicy Delete): the deletion is not sent there either
    TestStores.create(
        cluster,
        "moved",
        "moved-store",
        openfga.url(),
        spec -> spec.setDeletionPolicy(FGAStore.DeletionPolicy.Delete));
    String id =
        await()
            .atMost(WAIT)
            .until(
                () -> TestStores.get(cluster, "moved"),
                s ->
                    s.getStatus() != null
                        && Boolean.TRUE.equals(s.getStatus().getCreatedByOperator()))
            .getStatus()
            .getStoreId();
    TestStores.edit(cluster, "moved", s -> s.getSpec().getOpenfgaRef().setUrl(foreign));
    cluster
        .client()
        .resources(FGAStore.class)
        .inNamespace(MockCluster.NS)
        .withName("moved")
        .delete();
    await().atMost(WAIT).until(() -> TestStores.get(cluster, "moved") == null);
    assertThat(notListedAsked).as("requests to the server not listed").hasValue(0);
    assertThat(stores).containsKey(id);
    assertThat(cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems())
        .filteredOn(e -> e.getReason().equals(StoreReason.StoreNotDeleted.name()))
        .singleElement()
        .satisfies(
            e ->
                assertThat(e.getMessage())
                    .startsWith("store " + id + " is kept: " + foreign + " is not one of"));
  }

  @Test
  void aForeignAnswerIsNeverCopiedIntoTheStatusOrAnEvent() {
    api.foreignPage =
        "<html><body>502 Bad Gateway: upstream 10.0.3.7 token=leaked-123</body></html>";
    apply("proxied", "proxied");
    Condition failed =
        await()
            .atMost(WAIT)
            .until(
                () -> ready("proxied"),
                c -> c != null && c.getReason().equals(StoreReason.OpenFGARequestFailed.name()));
    assertThat(failed.getMessage())
        .endsWith("/stores: HTTP 502, not an OpenFGA error body")
        .doesNotContain("leaked-123")
        .doesNotContain("Bad Gateway");
    assertThat(cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems())
        .filteredOn(e -> e.getReason().equals(StoreReason.OpenFGARequestFailed.name()))
        .singleElement()
        .satisfies(
            e ->
                assertThat(e.getMessage())
                    .contains("HTTP 502, not an OpenFGA error body")
                    .doesNotContain("leaked-123"));
  }

  /** The reasons of the Events in the namespace, oldest first. */
  private java.util.List<String> eventReasons() {
    return cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems().stream()
        .map(e -> e.getReason())
        .toList();
  }

  /** A ready FGAStore {@code app} (deletionPolicy Delete) whose credentials the Secret holds. */
  private void readyStoreWithSecret() {
    cluster
        .client()
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("key")
                .withNamespace(MockCluster.NS)
                .addToAnnotations(Credentials.SERVERS, "http://127.0.0.1:" + openfga.port())
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
  }

  @Test
  void aSecretsCredentialsGoOnlyToTheServersItNames() {
    // whoever may create an FGAStore may name any Secret of its namespace
    readyStoreWithSecret();
    String url = url(other);
    TestStores.create(
        cluster,
        "other",
        "other-store",
        url,
        spec -> spec.getOpenfgaRef().setCredentialsRef(new FGAStore.NameRef("key")));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(ready("other"))
                    .extracting(Condition::getReason)
                    .isEqualTo(StoreReason.CredentialsError.name()));
    assertThat(ready("other").getMessage())
        .contains(
            "Secret "
                + MockCluster.NS
                + "/key's annotation openfga.dev/openfga-url does not name "
                + url);
    assertThat(otherAsked).hasValue(0);
    assertThat(ready("app")).extracting(Condition::getStatus).isEqualTo("True");
  }

  @Test
  void theCredentialsKeptForADeletionGoOnlyToTheServersTheSecretNamed() {
    // the Secret gone, the FGAStore's url (which the CRD lets change) pointed elsewhere, then the
    // FGAStore deleted: the credentials kept for its deletion must not go there
    readyStoreWithSecret();
    cluster.client().secrets().inNamespace(MockCluster.NS).withName("key").delete();
    TestStores.edit(cluster, "app", s -> s.getSpec().getOpenfgaRef().setUrl(url(other)));
    cluster.client().resources(FGAStore.class).inNamespace(MockCluster.NS).withName("app").delete();

    await()
        .atMost(WAIT)
        .until(
            () ->
                cluster
                    .client()
                    .v1()
                    .events()
                    .inNamespace(MockCluster.NS)
                    .list()
                    .getItems()
                    .stream()
                    .anyMatch(e -> e.getMessage().startsWith("could not delete store")));
    assertThat(otherAsked).as("requests to the server the Secret does not name").hasValue(0);
    assertThat(stores).hasSize(1);
  }

  /** An HTTP server on 127.0.0.1 that answers 500 and counts what it is asked. */
  private static HttpServer countingServer(AtomicInteger asked) throws IOException {
    HttpServer server = HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/",
        e -> {
          asked.incrementAndGet();
          e.sendResponseHeaders(500, -1);
          e.close();
        });
    server.start();
    return server;
  }

  @Test
  void aStoreWhoseSecretAReconcileFoundGoneBeforeItsDeletionIsStillDeleted() {
    // the Secret and the FGAStore deleted together (their namespace, one manifest): a reconcile
    // of the FGAStore in between finds the Secret gone before the deletion is seen
    readyStoreWithSecret();
    cluster.client().secrets().inNamespace(MockCluster.NS).withName("key").delete();
    TestStores.edit(
        cluster, "app", s -> s.getMetadata().setAnnotations(java.util.Map.of("touched", "yes")));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(ready("app"))
                    .extracting(Condition::getReason)
                    .isEqualTo(StoreReason.CredentialsError.name()));

    cluster.client().resources(FGAStore.class).inNamespace(MockCluster.NS).withName("app").delete();

    await().atMost(WAIT).until(() -> TestStores.get(cluster, "app") == null);
    assertThat(stores).isEmpty();
    assertThat(eventReasons()).doesNotContain("StoreNotDeleted");
  }

  @Test
  void aStoreWhoseSecretCanNoLongerBeReadIsDeletedWithTheCredentialsLastRead() {
    // its namespace being deleted takes the operator's RoleBinding there with it: the Secret,
    // still there, answers 403
    readyStoreWithSecret();
    cluster.failNext("GET", "/secrets/key", 403, 1000);

    cluster.client().resources(FGAStore.class).inNamespace(MockCluster.NS).withName("app").delete();

    await().atMost(WAIT).until(() -> TestStores.get(cluster, "app") == null);
    assertThat(stores).isEmpty();
  }

  @Test
  void aSecretMadeUnusableIsNotStoodInForByTheCredentialsItHeldBefore() {
    readyStoreWithSecret();
    cluster
        .client()
        .secrets()
        .inNamespace(MockCluster.NS)
        .withName("key")
        .edit(
            s -> {
              s.setData(java.util.Map.of("token", "eA==")); // no key a credential is read from
              return s;
            });

    cluster.client().resources(FGAStore.class).inNamespace(MockCluster.NS).withName("app").delete();

    await().atMost(WAIT).until(() -> eventReasons().contains(StoreReason.CredentialsError.name()));
    assertThat(TestStores.get(cluster, "app")).isNotNull();
    assertThat(stores).hasSize(1);
  }

  @Test
  void aStoreDeletedWithItsSecretIsStillDeletedWhenTheServerRefusesAtFirst() {
    readyStoreWithSecret();

    // the first try (FgaApi's four attempts) is refused; the next, 10 s later, deletes
    api.failingDeletes.set(FgaApi.ATTEMPTS);
    cluster.client().secrets().inNamespace(MockCluster.NS).withName("key").delete();
    cluster.client().resources(FGAStore.class).inNamespace(MockCluster.NS).withName("app").delete();

    await().atMost(Duration.ofSeconds(30)).until(() -> TestStores.get(cluster, "app") == null);
    assertThat(stores).isEmpty();
    assertThat(eventReasons()).contains("OpenFGARequestFailed").doesNotContain("StoreNotDeleted");
  }
}
