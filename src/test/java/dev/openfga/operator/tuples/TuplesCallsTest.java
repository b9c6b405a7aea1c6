package dev.openfga.operator.tuples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.openfga.Connector;
import dev.openfga.operator.openfga.Credentials;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.testing.FakeOpenFga;
import dev.openfga.operator.testing.InMemoryOpenFga;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.net.URI;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The calls of an FGATuples plan against an OpenFGA that answers as the real one (the in-memory
 * one, whose answers were probed from OpenFGA 1.8.16 and 1.10.0): each refusal told apart, and the
 * delete of a tuple gone since the read handled on a server that drops {@code on_missing}.
 */
class TuplesCallsTest {
  private static final String STORE = "01HVMMBCMGZNT3SED4Z17ECXCA";
  private final InMemoryOpenFga api = new InMemoryOpenFga();
  private FakeOpenFga server;
  private TuplesCalls calls;
  private TuplesObservation o;
  private String modelId;

  @BeforeEach
  void start() throws Exception {
    server = new FakeOpenFga(api);
    api.stores.put(STORE, "app");
    FgaApi client =
        new FgaApi(FgaApi.defaultHttpClient(), URI.create(server.url()), Optional::empty);
    modelId =
        client.writeModel(
            STORE,
            ModelJson.fromDsl(
                    "model\n  schema 1.1\ntype user\ntype org\n  relations\n"
                        + "    define admin: [user]\n",
                    "test")
                .json());
    calls =
        new TuplesCalls(
            new Connector(
                null, FgaApi.defaultHttpClient(), new Credentials.Cache(), Clock.systemUTC()),
            null);
    FGAStore store = new FGAStore();
    store.setMetadata(new ObjectMetaBuilder().withNamespace("team-a").withName("app").build());
    store.setSpec(new FGAStore.Spec());
    store.getSpec().setOpenfgaRef(new FGAStore.OpenFgaRef());
    store.getSpec().getOpenfgaRef().setUrl(server.url());
    store.setStatus(new FGAStore.Status());
    store.getStatus().setStoreId(STORE);
    Conditions.set(store.getStatus(), Conditions.READY, true, "StoreReady", "ready", Instant.now());
    FGATuples t = new FGATuples();
    t.setMetadata(
        new ObjectMetaBuilder().withNamespace("team-a").withName("base").withUid("u").build());
    t.setSpec(new FGATuples.Spec());
    o =
        new TuplesObservation(
            t,
            Instant.now(),
            new TuplesObservation.Desired.Valid(new TreeMap<>(), ""),
            Optional.of(store),
            true,
            Optional.empty(),
            new TuplesObservation.Record.Absent(),
            Map.of(),
            100,
            false,
            List.of());
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private static List<Tuple> admins(int from, int to) {
    List<Tuple> tuples = new ArrayList<>();
    for (int i = from; i < to; i++) {
      tuples.add(Tuple.of(new TupleKey("org:acme", "admin", "user:u" + i), null));
    }
    return tuples;
  }

  private static List<TupleKey> keys(List<Tuple> tuples) {
    return tuples.stream().map(Tuple::key).toList();
  }

  private TuplesAnswer run(TuplesStep step) throws InterruptedException {
    return calls.run(step, o);
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.8.16", "1.10.0"})
  void aBatchWithATupleAlreadyThereIsADuplicateAndWritesNothing(String version) throws Exception {
    api.version = version;
    assertThat(run(new TuplesStep.ReadModel(STORE, Optional.empty())))
        .isEqualTo(
            new TuplesAnswer.ModelRead(
                modelId,
                ((TuplesAnswer.ModelRead)
                        run(new TuplesStep.ReadModel(STORE, Optional.of(modelId))))
                    .model()));
    assertThat(run(new TuplesStep.Create(STORE, modelId, admins(0, 1), false)))
        .isEqualTo(new TuplesAnswer.Created(keys(admins(0, 1)), false));

    TuplesAnswer again = run(new TuplesStep.Create(STORE, modelId, admins(0, 3), false));

    assertThat(again).isEqualTo(new TuplesAnswer.Duplicate(keys(admins(0, 3))));
    assertThat(api.tuples(STORE)).hasSize(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.8.16", "1.10.0"})
  void aDeleteOfATupleGoneSinceTheReadDeletesTheRest(String version) throws Exception {
    api.version = version;
    run(new TuplesStep.ReadModel(STORE, Optional.empty()));
    run(new TuplesStep.Create(STORE, modelId, admins(0, 3), false));
    api.removeTuple(STORE, new TupleKey("org:acme", "admin", "user:u1"));
    int before = api.writeRequests.get();

    TuplesAnswer deleted = run(new TuplesStep.Delete(STORE, modelId, keys(admins(0, 3))));

    assertThat(deleted).isEqualTo(new TuplesAnswer.Deleted(keys(admins(0, 3))));
    assertThat(api.tuples(STORE)).isEmpty();
    // 1.10 honours on_missing: one Write; 1.8.16 drops it, refuses, and the rest is sent again
    assertThat(api.writeRequests.get() - before).isEqualTo(version.equals("1.10.0") ? 1 : 2);
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.8.16", "1.10.0"})
  void writingAgainAnOwnedTupleIgnoresDuplicatesOnlyWhereTheServerCan(String version)
      throws Exception {
    api.version = version;
    run(new TuplesStep.ReadModel(STORE, Optional.empty()));
    run(new TuplesStep.Create(STORE, modelId, admins(0, 1), false));

    TuplesAnswer restored = run(new TuplesStep.Create(STORE, modelId, admins(0, 2), true));

    if (version.equals("1.10.0")) {
      assertThat(restored).isEqualTo(new TuplesAnswer.Created(keys(admins(0, 2)), true));
      assertThat(api.tuples(STORE)).hasSize(2);
    } else {
      // the option dropped: refused as a duplicate, and the planner reads the batch
      assertThat(restored).isEqualTo(new TuplesAnswer.Duplicate(keys(admins(0, 2))));
      assertThat(api.tuples(STORE)).hasSize(1);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.8.16", "1.10.0"})
  void anInvalidTupleAndAWriteOverTheLimitAreToldApart(String version) throws Exception {
    api.version = version;
    api.maxTuplesPerWrite = 50;
    run(new TuplesStep.ReadModel(STORE, Optional.empty()));
    List<Tuple> bad = new ArrayList<>(admins(0, 2));
    bad.add(Tuple.of(new TupleKey("org:acme", "owner", "user:carl"), null));

    TuplesAnswer invalid = run(new TuplesStep.Create(STORE, modelId, bad, false));
    TuplesAnswer over = run(new TuplesStep.Create(STORE, modelId, admins(0, 60), false));

    assertThat(invalid).isInstanceOf(TuplesAnswer.Invalid.class);
    assertThat(((TuplesAnswer.Invalid) invalid).detail())
        .contains(
            "Invalid tuple 'org:acme#owner@user:carl'. Reason: relation 'org#owner' not found");
    assertThat(over).isEqualTo(new TuplesAnswer.OverLimit(60));
    assertThat(api.tuples(STORE)).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.10.0"})
  void theStoreIsReadWholeWhenSmallElseByObjectOrOneByOne(String version) throws Exception {
    api.version = version;
    FgaApi client =
        new FgaApi(FgaApi.defaultHttpClient(), URI.create(server.url()), Optional::empty);
    List<Tuple> mine = admins(0, 250);
    for (int i = 0; i < mine.size(); i += 100) {
      client
          .tuples()
          .write(
              STORE,
              null,
              mine.subList(i, Math.min(i + 100, mine.size())),
              List.of(),
              false,
              false);
    }
    int before = api.readRequests.get();
    var present = StoreReads.present(client, STORE, new TreeSet<>(keys(admins(0, 260))));
    assertThat(present).hasSize(250);
    assertThat(api.readRequests.get() - before).as("three pages of the whole store").isEqualTo(3);

    // a store mostly of other tuples: the two objects asked for by object, one tuple exactly
    List<Tuple> others = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      others.add(Tuple.of(new TupleKey("org:o" + i, "admin", "user:x"), null));
    }
    for (int i = 0; i < others.size(); i += 100) {
      client.tuples().write(STORE, null, others.subList(i, i + 100), List.of(), false, false);
    }
    TreeSet<TupleKey> asked = new TreeSet<>(keys(admins(0, 5)));
    asked.add(new TupleKey("org:o7", "admin", "user:x"));
    before = api.readRequests.get();
    present = StoreReads.present(client, STORE, asked);
    assertThat(present).hasSize(6);
    // 2 pages of the whole store (the budget), 1 page of org:acme (250 tuples: 100 … budget 2,
    // then exact reads of its 5), 1 exact read of org:o7
    assertThat(api.readRequests.get() - before).isEqualTo(2 + 2 + 5 + 1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.10.0"})
  void manyObjectsOfOneUserAreReadByUserNotOneByOne(String version) throws Exception {
    api.version = version;
    FgaApi client =
        new FgaApi(FgaApi.defaultHttpClient(), URI.create(server.url()), Optional::empty);
    List<Tuple> others = new ArrayList<>();
    List<Tuple> mine = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      others.add(Tuple.of(new TupleKey("org:x" + i, "admin", "user:x"), null));
    }
    for (int i = 0; i < 300; i++) {
      mine.add(Tuple.of(new TupleKey("org:o" + i, "admin", "user:eng"), null));
    }
    for (List<Tuple> all : List.of(others, mine)) {
      for (int i = 0; i < all.size(); i += 100) {
        client.tuples().write(STORE, null, all.subList(i, i + 100), List.of(), false, false);
      }
    }
    TreeSet<TupleKey> asked = new TreeSet<>(keys(mine));
    asked.add(new TupleKey("org:o999", "admin", "user:eng")); // not there
    int before = api.readRequests.get();

    var present = StoreReads.present(client, STORE, asked);

    assertThat(present).hasSize(300);
    // 5 pages of the whole store (its budget, not enough), then 3 pages of user:eng's orgs,
    // instead of 301 exact reads
    assertThat(api.readRequests.get() - before).isEqualTo(5 + 3);
  }
}
