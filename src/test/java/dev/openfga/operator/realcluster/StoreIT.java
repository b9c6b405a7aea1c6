package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.openfga.ApiException;
import dev.openfga.operator.openfga.Credentials;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.Model;
import dev.openfga.operator.openfga.Store;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.testing.Edits;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * FGAStore against the real OpenFGA server (run by the test kubelet on PostgreSQL after the
 * operator's migration), with the chart's CRD and RBAC enforced by the real API server: create,
 * adopt, ambiguous names, a store deleted out of band, Retain and Delete, the migration gate, and a
 * pre-shared key.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class StoreIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();
  private static final Duration WAIT = Duration.ofMinutes(2);
  private static final String KEY = "it-preshared-key-1";

  private static String url;
  private static FgaApi fga;
  private static OperatorInstall install;
  private static OperatorInstall.OperatorProcess operator;

  /** A second watched namespace (a store belongs to one namespace). */
  private static String teamB;

  /**
   * The HTTP port of each OpenFGA server the tests start: their URLs are the chart's
   * storesAndModels.servers, given before they run.
   */
  private static final Map<String, Integer> PORTS = new java.util.LinkedHashMap<>();

  @BeforeAll
  static void openfgaAndTheOperator() {
    Postgres.Database db = cluster.postgres().createDatabase("stores");
    for (String name : List.of("openfga", "openfga-gated", "openfga-psk", "openfga-oidc")) {
      PORTS.put(name, RealCluster.serverPort());
    }
    teamB = cluster.newNamespace(cluster.namespace() + "-b", Map.of());
    install =
        cluster.installOperator(
            cluster.namespace(),
            "leaderElection: {enabled: false}\nwatchNamespaces: ["
                + teamB
                + "]\nstoresAndModels:\n  enabled: true\n  servers: ["
                + String.join(
                    ", ", PORTS.values().stream().map(p -> "http://127.0.0.1:" + p).toList())
                + "]\n");
    operator = cluster.startOperator(install, "operator-0");
    url = serve("openfga", db, Map.of());
    fga = new FgaApi(FgaApi.defaultHttpClient(), URI.create(url), Optional::empty);
  }

  /**
   * An OpenFGA Deployment whose pods run the real server, at the URL the operator was installed
   * for; waits until it is available.
   */
  private static String serve(String name, Postgres.Database db, Map<String, String> env) {
    String served = cluster.serveOpenFga(name, db, env, PORTS.get(name));
    assertThat(served).isEqualTo("http://127.0.0.1:" + PORTS.get(name));
    return served;
  }

  private static MixedOperation<FGAStore, ?, Resource<FGAStore>> stores() {
    return cluster.client().resources(FGAStore.class);
  }

  private static FGAStore apply(
      String name, String storeName, FGAStore.DeletionPolicy policy, String storeId) {
    return apply(name, storeName, policy, storeId, url, null, null);
  }

  private static FGAStore apply(
      String name,
      String storeName,
      FGAStore.DeletionPolicy policy,
      String storeId,
      String serverUrl,
      String credentials,
      String deployment) {
    return apply(
        cluster.namespace(), name, storeName, policy, storeId, serverUrl, credentials, deployment);
  }

  private static FGAStore apply(
      String namespace,
      String name,
      String storeName,
      FGAStore.DeletionPolicy policy,
      String storeId,
      String serverUrl,
      String credentials,
      String deployment) {
    FGAStore store = new FGAStore();
    store.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName(storeName);
    spec.setDeletionPolicy(policy);
    spec.setStoreId(storeId);
    FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
    ref.setUrl(serverUrl);
    if (credentials != null) {
      ref.setCredentialsRef(new FGAStore.NameRef(credentials));
    }
    if (deployment != null) {
      ref.setDeploymentRef(new FGAStore.NameRef(deployment));
    }
    spec.setOpenfgaRef(ref);
    store.setSpec(spec);
    return stores().inNamespace(namespace).resource(store).create();
  }

  private static FGAStore get(String name) {
    return stores().inNamespace(cluster.namespace()).withName(name).get();
  }

  /** The Ready condition of an FGAStore already read (or null: gone), or null. */
  private static Condition ready(FGAStore store) {
    if (store == null || store.getStatus() == null || store.getStatus().getConditions() == null) {
      return null;
    }
    return store.getStatus().getConditions().stream()
        .filter(c -> "Ready".equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  /**
   * Waits until the FGAStore's Ready condition has the reason; returns the FGAStore as that look
   * read it (its condition and the rest of its status come from one status write).
   */
  private static FGAStore awaitReason(String name, String reason) {
    return await()
        .atMost(WAIT)
        .until(
            () -> get(name),
            store -> {
              Condition ready = ready(store);
              return ready != null && reason.equals(ready.getReason());
            });
  }

  private static List<Event> events(String name, String reason) {
    return cluster
        .client()
        .v1()
        .events()
        .inNamespace(cluster.namespace())
        .list()
        .getItems()
        .stream()
        .filter(e -> name.equals(e.getInvolvedObject().getName()))
        .filter(e -> "FGAStore".equals(e.getInvolvedObject().getKind()))
        .filter(e -> reason.equals(e.getReason()))
        .toList();
  }

  private static long named(String storeName) throws Exception {
    return fga.storesNamed(storeName).size();
  }

  @Test
  @Order(1)
  void aNewNameIsCreatedOnceAndTheStatusSaysSo() throws Exception {
    apply("created", "it-created", null, null);
    FGAStore store = awaitReason("created", "StoreReady");
    assertThat(ready(store).getStatus()).isEqualTo("True");
    assertThat(store.getStatus().getCreatedByOperator()).isTrue();
    assertThat(fga.getStore(store.getStatus().getStoreId()))
        .get()
        .extracting(Store::name)
        .isEqualTo("it-created");
    assertThat(events("created", "StoreCreated")).hasSize(1);
    // looked at again (an annotation: a new event) it writes nothing and creates nothing
    Edits.edit(
        stores().inNamespace(cluster.namespace()).withName("created"),
        s -> s.getMetadata().setAnnotations(Map.of("touch", "1")));
    // a negative assertion: time enough to write or create something
    ControlPlane.sleep(Duration.ofSeconds(3));
    assertThat(named("it-created")).isEqualTo(1);
    assertThat(get("created").getStatus().getStoreId()).isEqualTo(store.getStatus().getStoreId());
  }

  @Test
  @Order(2)
  void anExistingStoreWithTheNameIsAdoptedNotDuplicated() throws Exception {
    Store existing = fga.createStore("it-adopted");
    apply("adopted", "it-adopted", null, null);
    FGAStore store = awaitReason("adopted", "StoreReady");
    assertThat(store.getStatus().getStoreId()).isEqualTo(existing.id());
    assertThat(store.getStatus().getCreatedByOperator()).isFalse();
    assertThat(named("it-adopted")).isEqualTo(1);
    assertThat(events("adopted", "StoreAdopted")).hasSize(1);
  }

  @Test
  @Order(3)
  void twoStoresWithTheNameAreAmbiguousAndNothingIsCreatedUntilAStoreIdIsGiven() throws Exception {
    Store first = fga.createStore("it-dup");
    fga.createStore("it-dup");
    apply("dup", "it-dup", null, null);
    Condition ready = ready(awaitReason("dup", "AmbiguousStoreName"));
    assertThat(ready.getStatus()).isEqualTo("False");
    assertThat(ready.getMessage()).contains(first.id()).contains("spec.storeId");
    assertThat(events("dup", "AmbiguousStoreName")).hasSize(1);
    assertThat(named("it-dup")).isEqualTo(2);

    Edits.edit(
        stores().inNamespace(cluster.namespace()).withName("dup"),
        s -> s.getSpec().setStoreId(first.id()));
    assertThat(awaitReason("dup", "StoreReady").getStatus().getStoreId()).isEqualTo(first.id());
    assertThat(named("it-dup")).isEqualTo(2);
  }

  @Test
  @Order(4)
  void aStoreDeletedOutOfBandIsMissingAndNeverRecreated() throws Exception {
    apply("vanishing", "it-vanishing", null, null);
    String id = awaitReason("vanishing", "StoreReady").getStatus().getStoreId();
    fga.deleteStore(id);
    Edits.edit(
        stores().inNamespace(cluster.namespace()).withName("vanishing"),
        s -> s.getMetadata().setAnnotations(Map.of("touch", "1")));
    Condition ready = ready(awaitReason("vanishing", "StoreMissing"));
    assertThat(ready.getMessage()).contains(id).contains("not re-created");
    assertThat(events("vanishing", "StoreMissing")).hasSize(1);
    // a negative assertion: time enough to re-create the store
    ControlPlane.sleep(Duration.ofSeconds(3));
    assertThat(named("it-vanishing")).isZero();
    assertThat(get("vanishing").getStatus().getStoreId()).isEqualTo(id);
  }

  @Test
  @Order(5)
  void deleteRemovesOnlyAStoreTheOperatorCreatedAndRetainKeepsIt() throws Exception {
    apply("retained", "it-retained", FGAStore.DeletionPolicy.Retain, null);
    apply("deleted", "it-deleted", FGAStore.DeletionPolicy.Delete, null);
    Store foreign = fga.createStore("it-foreign");
    apply("foreign", "it-foreign", FGAStore.DeletionPolicy.Delete, null);
    awaitReason("retained", "StoreReady");
    String deletedId = awaitReason("deleted", "StoreReady").getStatus().getStoreId();
    awaitReason("foreign", "StoreReady");

    for (String name : List.of("retained", "deleted", "foreign")) {
      stores().inNamespace(cluster.namespace()).withName(name).delete();
    }
    for (String name : List.of("retained", "deleted", "foreign")) {
      await().atMost(WAIT).until(() -> get(name) == null);
    }
    assertThat(named("it-retained")).isEqualTo(1);
    assertThat(fga.getStore(deletedId)).isEmpty();
    assertThat(fga.getStore(foreign.id())).as("adopted, so never deleted").isPresent();

    // a store the operator made, which another FGAStore adopted, is kept when its maker goes
    apply("maker", "it-shared", FGAStore.DeletionPolicy.Delete, null);
    awaitReason("maker", "StoreReady");
    apply("adopter", "it-shared", FGAStore.DeletionPolicy.Delete, null);
    assertThat(awaitReason("adopter", "StoreReady").getStatus().getCreatedByOperator()).isFalse();
    String sharedId = get("maker").getStatus().getStoreId();
    stores().inNamespace(cluster.namespace()).withName("maker").delete();
    await().atMost(WAIT).until(() -> get("maker") == null);
    assertThat(fga.getStore(sharedId)).as("the adopter stands for it").isPresent();
    assertThat(events("maker", "StoreNotDeleted"))
        .singleElement()
        .satisfies(e -> assertThat(e.getMessage()).contains("stands for it too"));
    stores().inNamespace(cluster.namespace()).withName("adopter").delete();
    await().atMost(WAIT).until(() -> get("adopter") == null);
    fga.deleteStore(sharedId);
  }

  @Test
  @Order(6)
  void aStoreWaitsForItsDeploymentsMigrationThenIsCreated() throws Exception {
    apply("gated", "it-gated", null, null, url, null, "openfga-gated");
    Condition waiting = ready(awaitReason("gated", "WaitingForMigration"));
    assertThat(waiting.getMessage()).contains("openfga-gated").contains("does not exist");
    assertThat(named("it-gated")).isZero();

    serve("openfga-gated", cluster.postgres().createDatabase("gated"), Map.of());
    awaitReason("gated", "StoreReady");
    assertThat(named("it-gated")).isEqualTo(1);
  }

  @Test
  @Order(7)
  void aPreSharedKeyFromTheSecretIsSentAndAWrongOneIsReported() throws Exception {
    String pskUrl =
        serve(
            "openfga-psk",
            cluster.postgres().createDatabase("psk"),
            Map.of("OPENFGA_AUTHN_METHOD", "preshared", "OPENFGA_AUTHN_PRESHARED_KEYS", KEY));
    KubernetesClient client = cluster.client();
    for (var secret : Map.of("good-key", KEY, "bad-key", "not-the-key").entrySet()) {
      client
          .resource(
              new SecretBuilder()
                  .withNewMetadata()
                  .withName(secret.getKey())
                  .withNamespace(cluster.namespace())
                  .addToAnnotations(Credentials.SERVERS, pskUrl)
                  .endMetadata()
                  .withStringData(Map.of("apiToken", secret.getValue()))
                  .build())
          .create();
    }
    apply("psk", "it-psk", null, null, pskUrl, "good-key", null);
    apply("psk-bad", "it-psk-bad", null, null, pskUrl, "bad-key", null);
    apply("psk-none", "it-psk-none", null, null, pskUrl, "no-such-secret", null);
    awaitReason("psk", "StoreReady");
    Condition bad = ready(awaitReason("psk-bad", "OpenFGARequestFailed"));
    assertThat(bad.getMessage()).contains("HTTP 401").doesNotContain("not-the-key");
    Condition none = ready(awaitReason("psk-none", "CredentialsError"));
    assertThat(none.getMessage()).contains("no-such-secret").contains("does not exist");
    // the key is for the server its Secret names, not for another an FGAStore names
    apply("psk-elsewhere", "it-psk-elsewhere", null, null, url, "good-key", null);
    Condition elsewhere = ready(awaitReason("psk-elsewhere", "CredentialsError"));
    assertThat(elsewhere.getMessage())
        .contains("good-key's annotation " + Credentials.SERVERS + " does not name " + url);
    assertThat(fga.listStores()).noneMatch(st -> st.name().equals("it-psk-elsewhere"));

    FgaApi withKey =
        new FgaApi(FgaApi.defaultHttpClient(), URI.create(pskUrl), () -> Optional.of(KEY));
    assertThat(withKey.storesNamed("it-psk")).hasSize(1);
    assertThat(withKey.storesNamed("it-psk-bad")).isEmpty();
  }

  @Test
  @Order(8)
  void oidcClientCredentialsFromTheSecretGetATokenTheServerAccepts() throws Exception {
    try (OidcIssuer issuer =
        new OidcIssuer("client-1", "secret-1", "https://api.openfga.example")) {
      String oidcUrl =
          serve(
              "openfga-oidc",
              cluster.postgres().createDatabase("oidc"),
              Map.of(
                  "OPENFGA_AUTHN_METHOD", "oidc",
                  "OPENFGA_AUTHN_OIDC_ISSUER", issuer.url(),
                  "OPENFGA_AUTHN_OIDC_AUDIENCE", "https://api.openfga.example"));
      cluster
          .client()
          .resource(
              new SecretBuilder()
                  .withNewMetadata()
                  .withName("oidc-client")
                  .withNamespace(cluster.namespace())
                  .addToAnnotations(Credentials.SERVERS, oidcUrl)
                  .endMetadata()
                  .withStringData(
                      Map.of(
                          "clientId", "client-1",
                          "clientSecret", "secret-1",
                          "apiTokenIssuer", issuer.url() + "/oauth/token",
                          "apiAudience", "https://api.openfga.example"))
                  .build())
          .create();
      apply("oidc", "it-oidc", null, null, oidcUrl, "oidc-client", null);
      awaitReason("oidc", "StoreReady");
      // a second store with the same Secret: its reconciles use the token already fetched (the
      // credentials are kept while the Secret is unchanged), which the server accepts
      apply("oidc-2", "it-oidc-2", null, null, oidcUrl, "oidc-client", null);
      awaitReason("oidc-2", "StoreReady");
      assertThat(issuer.tokensIssued()).isEqualTo(1);
      // the Secret changed (the API server gives it a new resourceVersion): the next reconcile
      // that reads it makes its credentials anew and fetches a token
      cluster
          .client()
          .secrets()
          .inNamespace(cluster.namespace())
          .withName("oidc-client")
          .edit(
              s ->
                  new SecretBuilder(s)
                      .editMetadata()
                      .addToLabels("rotated", "1")
                      .endMetadata()
                      .build());
      apply("oidc-3", "it-oidc-3", null, null, oidcUrl, "oidc-client", null);
      awaitReason("oidc-3", "StoreReady");
      assertThat(issuer.tokensIssued()).isEqualTo(2);
      String token = issuer.token();
      FgaApi withToken =
          new FgaApi(FgaApi.defaultHttpClient(), URI.create(oidcUrl), () -> Optional.of(token));
      assertThat(withToken.storesNamed("it-oidc")).hasSize(1);
      assertThat(withToken.storesNamed("it-oidc-2")).hasSize(1);
      // without a token the server refuses: the store was made with the fetched one
      assertThat(
              org.assertj.core.api.Assertions.catchThrowable(
                  () ->
                      new FgaApi(FgaApi.defaultHttpClient(), URI.create(oidcUrl), Optional::empty)
                          .listStores()))
          .isInstanceOf(ApiException.class)
          .hasMessageContaining("HTTP 401");
    }
  }

  @Test
  @Order(9)
  void theApiServerRefusesARenamedStoreAndAChangedStoreId() {
    apply("immutable", "it-immutable", null, null);
    awaitReason("immutable", "StoreReady");
    Throwable renamed = editRetrying("immutable", s -> s.getSpec().setName("it-renamed"));
    assertThat(renamed).hasMessageContaining("spec.name is immutable");
    String id = get("immutable").getStatus().getStoreId();
    assertThat(editRetrying("immutable", s -> s.getSpec().setStoreId(id))).as("adding").isNull();
    Throwable changed =
        editRetrying("immutable", s -> s.getSpec().setStoreId("01HVMMBCMGZNT3SED4Z17ECXCA"));
    assertThat(changed).hasMessageContaining("spec.storeId can be added, never changed or removed");
  }

  @Test
  @Order(9)
  void theApiServerRefusesReferencesToNamesNoObjectCanHave() {
    assertThatThrownBy(
            () -> apply("bad-refs", "it-bad-refs", null, null, url, "API_Key", "OpenFGA"))
        .isInstanceOf(io.fabric8.kubernetes.client.KubernetesClientException.class)
        .hasMessageContaining("spec.openfgaRef.credentialsRef.name in body should match")
        .hasMessageContaining("spec.openfgaRef.deploymentRef.name in body should match");
    assertThat(get("bad-refs")).isNull();
  }

  /**
   * Edits the FGAStore; returns what the API server refused it with, or null. The operator patches
   * the status meanwhile: a 409 is that race, not the answer, and is tried again.
   */
  private static Throwable editRetrying(String name, java.util.function.Consumer<FGAStore> change) {
    return org.assertj.core.api.Assertions.catchThrowable(
        () -> Edits.edit(stores().inNamespace(cluster.namespace()).withName(name), change));
  }

  @Test
  @Order(10)
  void aModelReadBackFromTheRealServerHashesAsItsDsl() throws Exception {
    String dsl =
        """
        model
          schema 1.1
        type user
        type group
          relations
            define member: [user, group#member]
        type document
          relations
            define owner: [user]
            define viewer: [user, user:*, group#member] or owner
        """;
    dev.openfga.operator.openfga.ModelJson.Normalised desired =
        dev.openfga.operator.openfga.ModelJson.fromDsl(dsl);
    Store store = fga.createStore("it-model-hash");
    String id = fga.writeModel(store.id(), desired.json());
    Model read = fga.listModels(store.id()).get(0);
    assertThat(read.id()).isEqualTo(id);
    assertThat(dev.openfga.operator.openfga.ModelJson.of(read.json()).json())
        .isEqualTo(desired.json());
    assertThat(dev.openfga.operator.openfga.ModelJson.of(read.json()).hash())
        .isEqualTo(desired.hash());
  }

  @Test
  @Order(11)
  void aStoreWhoseSecretIsDeletedFirstIsStillDeletedOrLeftWithAWarningNeverHeld() throws Exception {
    // deleted together with its Secret (kubectl delete -f, an uninstall): the credentials last
    // read still delete the store
    secret("first-key");
    apply(
        "secret-first",
        "it-secret-first",
        FGAStore.DeletionPolicy.Delete,
        null,
        url,
        "first-key",
        null);
    String deletedId = awaitReason("secret-first", "StoreReady").getStatus().getStoreId();
    cluster.client().secrets().inNamespace(cluster.namespace()).withName("first-key").delete();
    stores().inNamespace(cluster.namespace()).withName("secret-first").delete();
    await().atMost(WAIT).until(() -> get("secret-first") == null);
    assertThat(fga.getStore(deletedId)).isEmpty();

    // nothing to delete it with (the Secret gone while no operator ran, as in a namespace's
    // deletion): left in OpenFGA at once, with a Warning naming it, and the FGAStore let go
    secret("gone-key");
    apply("left", "it-left", FGAStore.DeletionPolicy.Delete, null, url, "gone-key", null);
    String leftId = awaitReason("left", "StoreReady").getStatus().getStoreId();
    operator.kill();
    cluster.client().secrets().inNamespace(cluster.namespace()).withName("gone-key").delete();
    stores().inNamespace(cluster.namespace()).withName("left").delete();
    assertThat(get("left")).as("held by the finalizer").isNotNull();
    operator = cluster.startOperator(install, "operator-1");
    await().atMost(WAIT).until(() -> get("left") == null);
    assertThat(events("left", "StoreNotDeleted"))
        .singleElement()
        .satisfies(
            e ->
                assertThat(e.getMessage())
                    .contains(leftId)
                    .contains("gone-key")
                    .contains("left in OpenFGA"));
    assertThat(fga.getStore(leftId)).isPresent();
  }

  @Test
  @Order(12)
  void aStatusWriteGuardedByAStaleResourceVersionIsRefusedByTheApiServer() {
    // the operator's status writes (StatusWrites.update) rest on this: a JSON patch of a custom
    // resource's status subresource carrying the resourceVersion read is refused once the object
    // has changed since, so a reconcile on a stale copy never overwrites a newer status
    apply("guarded", "it-guarded", null, null);
    awaitReason("guarded", "StoreReady");
    FGAStore read = get("guarded");
    String storeId = read.getStatus().getStoreId();
    editRetrying("guarded", s -> s.getMetadata().setLabels(Map.of("team", "payments")));

    Throwable refused =
        org.assertj.core.api.Assertions.catchThrowable(
            () ->
                stores()
                    .inNamespace(cluster.namespace())
                    .resource(read)
                    .subresource("status")
                    .patch(
                        io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                            io.fabric8.kubernetes.client.dsl.base.PatchType.JSON),
                        dev.openfga.operator.kube.JsonPatch.guardedBy(read)
                            .add("/status/createdByOperator", false)
                            .json()));

    assertThat(refused)
        .isInstanceOfSatisfying(
            io.fabric8.kubernetes.client.KubernetesClientException.class,
            e -> assertThat(e.getCode()).isEqualTo(409));
    FGAStore after = get("guarded");
    assertThat(after.getStatus().getStoreId()).isEqualTo(storeId);
    assertThat(after.getStatus().getCreatedByOperator()).isTrue();
  }

  @Test
  @Order(13)
  void aServerTheOperatorIsNotInstalledForIsSentNothing() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    HttpServer other = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    other.createContext(
        "/",
        e -> {
          asked.incrementAndGet();
          e.sendResponseHeaders(500, -1);
          e.close();
        });
    other.start();
    try {
      String otherUrl = "http://127.0.0.1:" + other.getAddress().getPort();
      // the real server too, by a name the list does not give it: were anything sent, the store
      // would be made there
      String localhost = url.replace("127.0.0.1", "localhost");
      apply("not-listed", "it-not-listed", null, null, otherUrl, null, null);
      apply("renamed", "it-not-listed-2", null, null, localhost, null, null);

      Condition refused = ready(awaitReason("not-listed", "ServerNotAllowed"));
      // the reconcile that wrote this sent nothing there before, not even the look-up by name
      assertThat(asked).hasValue(0);
      assertThat(refused.getStatus()).isEqualTo("False");
      assertThat(refused.getMessage())
          .contains(otherUrl + " is not one of the OpenFGA servers")
          .contains(url);
      assertThat(events("not-listed", "ServerNotAllowed")).hasSize(1);
      assertThat(ready(awaitReason("renamed", "ServerNotAllowed")).getMessage())
          .contains(localhost);
      assertThat(named("it-not-listed-2")).isZero();

      for (String name : List.of("not-listed", "renamed")) {
        stores().inNamespace(cluster.namespace()).withName(name).delete();
      }
      for (String name : List.of("not-listed", "renamed")) {
        await().atMost(WAIT).until(() -> get(name) == null);
      }
      assertThat(asked).as("requests to the server not listed, deletions included").hasValue(0);
    } finally {
      other.stop(0);
    }
  }

  @Test
  @Order(14)
  void twoNamespacesNamingOneStoreGetOneOwnerAndTheOtherWritesNothingIntoIt() throws Exception {
    // applied at once, as one sync of a GitOps tool would
    apply(cluster.namespace(), "claimed", "it-claimed", null, null, url, null, null);
    apply(teamB, "claimed", "it-claimed", null, null, url, null, null);

    Map<String, FGAStore> both =
        await()
            .atMost(WAIT)
            .until(
                () ->
                    Map.of(
                        cluster.namespace(),
                        Optional.ofNullable(
                            stores().inNamespace(cluster.namespace()).withName("claimed").get()),
                        teamB,
                        Optional.ofNullable(stores().inNamespace(teamB).withName("claimed").get())),
                read ->
                    read.values().stream()
                        .allMatch(
                            s ->
                                s.map(StoreIT::ready)
                                    .map(Condition::getReason)
                                    .filter(
                                        r ->
                                            r.equals("StoreReady")
                                                || r.equals("StoreClaimedElsewhere"))
                                    .isPresent()))
            .entrySet()
            .stream()
            .collect(
                java.util.stream.Collectors.toMap(
                    Map.Entry::getKey, e -> e.getValue().orElseThrow()));
    List<String> owners =
        both.entrySet().stream()
            .filter(e -> "StoreReady".equals(ready(e.getValue()).getReason()))
            .map(Map.Entry::getKey)
            .toList();
    assertThat(owners).hasSize(1);
    String owner = owners.get(0);
    String other = owner.equals(teamB) ? cluster.namespace() : teamB;
    FGAStore refused = both.get(other);
    assertThat(ready(refused).getMessage())
        .contains("claimed by")
        .contains("in another namespace")
        .doesNotContain(owner);
    assertThat(refused.getStatus().getStoreId()).isNull();
    assertThat(named("it-claimed")).isEqualTo(1);
    String id = both.get(owner).getStatus().getStoreId();

    // the other namespace's model writes nothing into the owner's store
    FGAModel model = new FGAModel();
    model.setMetadata(new ObjectMetaBuilder().withName("claimed").withNamespace(other).build());
    FGAModel.Spec spec = new FGAModel.Spec();
    spec.setStoreRef(new FGAStore.NameRef("claimed"));
    spec.setModel("model\n  schema 1.1\ntype user\n");
    model.setSpec(spec);
    cluster.client().resource(model).create();
    FGAModel waiting =
        await()
            .atMost(WAIT)
            .until(
                () ->
                    cluster
                        .client()
                        .resources(FGAModel.class)
                        .inNamespace(other)
                        .withName("claimed")
                        .get(),
                m ->
                    m.getStatus() != null
                        && m.getStatus().getConditions().stream()
                            .anyMatch(
                                c ->
                                    "Ready".equals(c.getType())
                                        && "StoreNotReady".equals(c.getReason())));
    assertThat(waiting.getStatus().getConditions())
        .filteredOn(c -> "Ready".equals(c.getType()))
        .singleElement()
        .satisfies(c -> assertThat(c.getMessage()).contains("StoreClaimedElsewhere"));
    assertThat(fga.listModels(id)).isEmpty();
  }

  private static void secret(String name) {
    cluster
        .client()
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(cluster.namespace())
                .addToAnnotations(Credentials.SERVERS, url)
                .endMetadata()
                .withStringData(Map.of("apiToken", "unused"))
                .build())
        .create();
  }
}
