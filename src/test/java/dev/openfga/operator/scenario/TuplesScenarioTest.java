package dev.openfga.operator.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.testing.FakeOpenFga;
import dev.openfga.operator.testing.InMemoryOpenFga;
import dev.openfga.operator.testing.MockCluster;
import dev.openfga.operator.testing.TestStores;
import dev.openfga.operator.tuples.FGATuples;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The FGATuples controller in the real operator against the mock API server and the in-memory
 * OpenFGA (as 1.8.16 or as 1.10.0): the fast tier of SPEC §11. Against the real server: {@code
 * TuplesIT}.
 */
class TuplesScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final String MODEL =
      "model\n  schema 1.1\ntype user\ntype org\n  relations\n"
          + "    define admin: [user, user with in_hours]\n"
          + "condition in_hours(hour: int) {\n  hour >= 9\n}\n";

  @RegisterExtension final MockCluster cluster = new MockCluster();
  private final InMemoryOpenFga api = new InMemoryOpenFga();
  private FakeOpenFga openfga;
  private String storeId;

  @AfterEach
  void stop() {
    if (openfga != null) {
      openfga.close();
    }
  }

  /** The operator, an FGAStore with its store and a model in it. */
  private void storeWithModel(String version) throws Exception {
    api.version = version;
    openfga = new FakeOpenFga(cluster, api);
    TestStores.create(cluster, "app", "app", openfga.url());
    storeId =
        await()
            .atMost(WAIT)
            .until(
                () -> {
                  FGAStore s = TestStores.get(cluster, "app");
                  return s == null || s.getStatus() == null ? null : s.getStatus().getStoreId();
                },
                id -> id != null);
    new FgaApi(FgaApi.defaultHttpClient(), URI.create(openfga.url()), Optional::empty)
        .writeModel(storeId, ModelJson.fromDsl(MODEL, "test").json());
  }

  private static String yaml(int from, int to) {
    return IntStream.range(from, to)
        .mapToObj(i -> "- {user: 'user:u" + i + "', relation: admin, object: 'org:acme'}")
        .collect(Collectors.joining("\n"));
  }

  private void source(String yaml) {
    cluster
        .client()
        .configMaps()
        .inNamespace(MockCluster.NS)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("base-tuples")
                .endMetadata()
                .addToData("tuples.yaml", yaml)
                .build())
        .createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
    // the ConfigMap is read again every 30 s; a touch of the FGATuples makes it read now
    if (get("base") != null) {
      cluster
          .client()
          .resources(FGATuples.class)
          .inNamespace(MockCluster.NS)
          .withName("base")
          .patch(
              PatchContext.of(PatchType.JSON_MERGE),
              "{\"metadata\":{\"annotations\":{\"touched\":\"" + System.nanoTime() + "\"}}}");
    }
  }

  private FGATuples declare(String name) {
    FGATuples t = new FGATuples();
    t.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(MockCluster.NS).build());
    t.setSpec(new FGATuples.Spec());
    t.getSpec().setStoreRef(new FGAStore.NameRef("app"));
    t.getSpec().setTuplesFrom(new FGATuples.TuplesFrom());
    t.getSpec()
        .getTuplesFrom()
        .setConfigMapKeyRef(new FGAModel.KeyRef("base-tuples", "tuples.yaml"));
    return cluster
        .client()
        .resources(FGATuples.class)
        .inNamespace(MockCluster.NS)
        .resource(t)
        .create();
  }

  private FGATuples get(String name) {
    return cluster
        .client()
        .resources(FGATuples.class)
        .inNamespace(MockCluster.NS)
        .withName(name)
        .get();
  }

  /** The status once its Ready condition matches {@code ready} (read once per check). */
  private FGATuples.Status readyWhere(
      String name, java.util.function.Predicate<io.fabric8.kubernetes.api.model.Condition> ready) {
    return await()
        .atMost(WAIT)
        .until(
            () -> {
              FGATuples t = get(name);
              return t == null ? null : t.getStatus();
            },
            s ->
                s != null
                    && Conditions.find(s.getConditions(), Conditions.READY)
                        .map(ready::test)
                        .orElse(false));
  }

  private FGATuples.Status inSyncWith(String name, int written) {
    return await()
        .atMost(WAIT)
        .until(
            () -> {
              FGATuples t = get(name);
              return t == null ? null : t.getStatus();
            },
            s ->
                s != null
                    && Conditions.isTrue(s.getConditions(), Conditions.IN_SYNC)
                    && Conditions.isTrue(s.getConditions(), Conditions.READY)
                    && Integer.valueOf(written).equals(s.getWritten()));
  }

  private List<Event> events() {
    return cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems();
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.8.16", "1.10.0"})
  void aSetFromAConfigMapIsWrittenInBatchesAndSurvivesItsStatusLoss(String version)
      throws Exception {
    storeWithModel(version);
    TupleKey app = new TupleKey("org:acme", "admin", "user:u7");
    api.putTuple(storeId, Tuple.of(app, null)); // the application's own, written before
    source(yaml(0, 250));

    declare("base");
    FGATuples.Status status = inSyncWith("base", 249);

    assertThat(status.getDesired()).isEqualTo(250);
    assertThat(status.getPreExisting()).isEqualTo(1);
    assertThat(api.tuples(storeId)).hasSize(250);
    assertThat(api.log).filteredOn(l -> l.startsWith("write +")).hasSize(3);
    ConfigMap record =
        cluster
            .client()
            .configMaps()
            .inNamespace(MockCluster.NS)
            .withName("base-tuples-record")
            .get();
    assertThat(record.getData()).containsEntry("owned", "249").containsEntry("storeId", storeId);
    assertThat(record.getMetadata().getOwnerReferences()).isEmpty();

    // the status lost: read back from the store and the record, nothing written
    int writes = api.writeRequests.get();
    cluster
        .client()
        .resources(FGATuples.class)
        .inNamespace(MockCluster.NS)
        .withName("base")
        .subresource("status")
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"status\":null}");
    inSyncWith("base", 249);
    assertThat(api.writeRequests.get()).isEqualTo(writes);

    // the application's tuple leaves the set, and one of the operator's: only that one goes
    source(yaml(0, 7) + "\n" + yaml(9, 250));
    inSyncWith("base", 248);
    assertThat(api.tuples(storeId))
        .containsKey(app.text())
        .doesNotContainKey("org:acme#admin@user:u8")
        .hasSize(249);
  }

  @Test
  void aFailedWriteLeavesATrueCountAndTheNextLookGoesOnFromThere() throws Exception {
    storeWithModel("1.10.0");
    source(yaml(0, 250));
    // OpenFGA goes down after the first Write is applied: every later Write is answered 500 until
    // it is back, so the failure stays in the status until the test looks
    api.afterWrite = () -> api.writesDown = true;

    declare("base");
    FGATuples.Status failed = readyWhere("base", c -> "OpenFGARequestFailed".equals(c.getReason()));
    assertThat(failed.getWritten()).isEqualTo(100);
    assertThat(failed.getDesired()).isEqualTo(250);
    assertThat(api.tuples(storeId)).hasSize(100);

    api.afterWrite = null;
    api.writesDown = false;
    // looked at again 10 s later: the 150 left, nothing twice
    inSyncWith("base", 250);
    assertThat(api.tuples(storeId)).hasSize(250);
    assertThat(api.tuplesWritten.get()).isEqualTo(250);
  }

  @Test
  void aReCreatedFGATuplesAdoptsTheRecordAndWritesNothing() throws Exception {
    storeWithModel("1.10.0");
    source(yaml(0, 3));
    String firstUid = declare("base").getMetadata().getUid();
    inSyncWith("base", 3);
    cluster
        .client()
        .resources(FGATuples.class)
        .inNamespace(MockCluster.NS)
        .withName("base")
        .delete();
    await().atMost(WAIT).until(() -> get("base") == null);
    assertThat(api.tuples(storeId)).as("Retain keeps them").hasSize(3);
    int writes = api.writeRequests.get();

    FGATuples again = declare("base");
    inSyncWith("base", 3);

    assertThat(again.getMetadata().getUid()).isNotEqualTo(firstUid);
    assertThat(api.writeRequests.get()).isEqualTo(writes);
    assertThat(events()).anyMatch(e -> "TuplesRecordAdopted".equals(e.getReason()));
    source(yaml(0, 2));
    inSyncWith("base", 2);
    assertThat(api.tuples(storeId))
        .containsOnlyKeys("org:acme#admin@user:u0", "org:acme#admin@user:u1");
  }

  private void declareInline(String name, FGAStore.DeletionPolicy policy, String... users) {
    FGATuples t = new FGATuples();
    t.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(MockCluster.NS).build());
    t.setSpec(new FGATuples.Spec());
    t.getSpec().setStoreRef(new FGAStore.NameRef("app"));
    t.getSpec().setDeletionPolicy(policy);
    t.getSpec()
        .setTuples(
            java.util.Arrays.stream(users)
                .map(u -> new FGATuples.TupleSpec(u, "admin", "org:acme"))
                .toList());
    cluster.client().resources(FGATuples.class).inNamespace(MockCluster.NS).resource(t).create();
  }

  @Test
  void aTupleLeftByADeletedFGATuplesIsDeletedOnceTheOtherDropsItToo() throws Exception {
    storeWithModel("1.10.0");
    declareInline("a", FGAStore.DeletionPolicy.Delete, "user:shared", "user:only-a");
    inSyncWith("a", 2);
    declareInline("b", FGAStore.DeletionPolicy.Retain, "user:shared");
    FGATuples.Status b = inSyncWith("b", 0);
    assertThat(b.getPreExisting()).isEqualTo(1);

    cluster.client().resources(FGATuples.class).inNamespace(MockCluster.NS).withName("a").delete();
    await().atMost(WAIT).until(() -> get("a") == null);

    assertThat(api.tuples(storeId)).containsOnlyKeys("org:acme#admin@user:shared");
    assertThat(events())
        .anyMatch(
            e ->
                "TuplesHandedOver".equals(e.getReason())
                    && e.getMessage().contains("still declared by FGATuples b"));
    // b counts it as its own at its next look; dropped from b, it goes
    cluster
        .client()
        .resources(FGATuples.class)
        .inNamespace(MockCluster.NS)
        .withName("b")
        .edit(
            t -> {
              t.getSpec()
                  .setTuples(List.of(new FGATuples.TupleSpec("user:other", "admin", "org:acme")));
              return t;
            });
    await()
        .atMost(WAIT)
        .until(
            () -> api.tuples(storeId).keySet(),
            keys -> keys.equals(java.util.Set.of("org:acme#admin@user:other")));
    assertThat(inSyncWith("b", 1).getPreExisting()).isZero();
  }

  @Test
  void aConditionsContextNeverReachesAnEventNorTheStatus() throws Exception {
    storeWithModel("1.10.0");
    source(
        "- {user: 'user:anne', relation: admin, object: 'org:acme',"
            + " condition: {name: in_hours, context: {hour: 10, note: 'MARKER-7f3a'}}}\n"
            + "- {user: 'user:bob', relation: admin, object: 'org:acme',"
            + " condition: {name: nope, context: {note: 'MARKER-7f3a'}}}");
    declare("base");
    FGATuples.Status status =
        await()
            .atMost(WAIT)
            .until(
                () -> get("base").getStatus(),
                s -> s != null && !Conditions.isTrue(s.getConditions(), Conditions.READY));

    assertThat(Conditions.find(status.getConditions(), Conditions.READY).orElseThrow().getReason())
        .isEqualTo("InvalidTuples");
    assertThat(status.getInvalid())
        .containsExactly(
            "Invalid tuple 'org:acme#admin@user:bob (condition nope)'. Reason: undefined condition");
    assertThat(api.tuples(storeId)).isEmpty();
    await()
        .atMost(WAIT)
        .until(
            this::events, es -> es.stream().anyMatch(e -> "InvalidTuples".equals(e.getReason())));
    assertThat(events()).allSatisfy(e -> assertThat(e.getMessage()).doesNotContain("MARKER-7f3a"));
    assertThat(
            cluster
                .client()
                .resources(FGATuples.class)
                .inNamespace(MockCluster.NS)
                .withName("base")
                .get()
                .getStatus()
                .toString())
        .doesNotContain("MARKER-7f3a");
  }

  @Test
  void aMissingSourceIsNamedAndAStoreOnAnotherServerIsSentNothing() throws Exception {
    storeWithModel("1.10.0");
    declare("base");
    // awaited rather than taken from the first status: the informer may still show the FGAStore
    // before its store was made, and the first look then says StoreNotReady
    readyWhere(
        "base",
        c ->
            ("ConfigMap " + MockCluster.NS + "/base-tuples does not exist").equals(c.getMessage()));

    TestStores.create(cluster, "elsewhere", "x", "http://127.0.0.1:1");
    FGATuples t = new FGATuples();
    t.setMetadata(new ObjectMetaBuilder().withName("other").withNamespace(MockCluster.NS).build());
    t.setSpec(new FGATuples.Spec());
    t.getSpec().setStoreRef(new FGAStore.NameRef("elsewhere"));
    t.getSpec().setTuples(List.of(new FGATuples.TupleSpec("user:anne", "admin", "org:acme")));
    cluster.client().resources(FGATuples.class).inNamespace(MockCluster.NS).resource(t).create();
    readyWhere("other", c -> "StoreNotReady".equals(c.getReason()));
  }
}
