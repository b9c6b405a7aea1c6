package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.openfga.TuplePage;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.testing.Edits;
import dev.openfga.operator.tuples.FGATuples;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * FGATuples against the real OpenFGA server (the test kubelet's {@code openfga run} on PostgreSQL),
 * 1.8.16 and 1.10.0 side by side, with the chart's CRDs and RBAC enforced by the real API server
 * and the real garbage collector: more tuples than one Write carries reach InSync and the store
 * holds exactly them; only what the FGATuples created is ever deleted (not the application's
 * tuples, declared or not); a lost status, a re-created resource and a restore from a backup write
 * nothing and keep ownership through the record (and without the record give the tuples up, never
 * delete them); a managed tuple deleted out of band is written again; an invalid tuple blocks the
 * whole set; deletionPolicy Delete deletes exactly its own, and hands a tuple another FGATuples
 * still declares to that one's record, which deletes it later; the operator killed while a create
 * is under way (its answer lost) leaves the tuples pending in the record, and the next operator
 * takes those OpenFGA wrote since as its own. Writes that race with the application are made to
 * happen (a loopback proxy between the operator and OpenFGA lets the test write or delete just
 * before the operator's Write arrives): on 1.10 {@code on_duplicate}/{@code on_missing: ignore}
 * answer 200, on 1.8.16 the options are dropped, the Write is refused and the operator's read-back
 * fallback ends in the same place. What was written is read from OpenFGA's changelog ({@code GET
 * /stores/{id}/changes}), which records every write and delete.
 */
class TuplesIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();
  private static final Duration WAIT = Duration.ofMinutes(2);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper STATUS =
      new ObjectMapper()
          .setDefaultPropertyInclusion(
              com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL);

  /** A condition context value that must never appear in a log line, an Event or a condition. */
  private static final String MARKER = "ctx-marker-5c1e9a0d";

  private static final String DSL =
      """
      model
        schema 1.1
      type user
      type document
        relations
          define owner: [user]
          define viewer: [user, user with in_hours]
      condition in_hours(hour: int, site: string) {
        hour >= 9 && site != ""
      }
      """;

  /** One OpenFGA server: its version, the proxy the operator reaches it through, its own URL. */
  private record Server(String version, Proxy proxy, FgaApi fga, String url) {
    String tag() {
      return version.replaceAll("[^0-9]", "");
    }
  }

  private static final Map<String, Server> SERVERS = new HashMap<>();
  private static OperatorInstall install;

  /** Every operator process started, the one running now last (a test kills and restarts it). */
  private static final List<OperatorInstall.OperatorProcess> operators =
      new CopyOnWriteArrayList<>();

  @BeforeAll
  static void twoOpenFgaVersionsAndTheOperator() {
    Proxy toOld = cluster.closeAfterClass(Proxy.start());
    Proxy toNew = cluster.closeAfterClass(Proxy.start());
    // trace: every line the operator can log is searched for the condition context
    install =
        cluster.installOperator(
            cluster.namespace(),
            "leaderElection: {enabled: false}\nlogLevel: trace\nstoresAndModels:\n"
                + "  enabled: true\n  servers: ["
                + toOld.url()
                + ", "
                + toNew.url()
                + "]\n");
    operators.add(cluster.startOperator(install, "operator-0"));
    for (var v : Map.of(Binaries.OLD_OPENFGA, toOld, Binaries.NEW_OPENFGA, toNew).entrySet()) {
      String name = "openfga-" + v.getKey().replaceAll("[^0-9]", "");
      String url =
          cluster.serveOpenFga(
              v.getKey(), name, cluster.postgres().createDatabase("tuples"), Map.of(), 0);
      v.getValue().target = URI.create(url);
      SERVERS.put(
          v.getKey(),
          new Server(
              v.getKey(),
              v.getValue(),
              new FgaApi(FgaApi.defaultHttpClient(), URI.create(url), Optional::empty),
              url));
    }
  }

  @AfterAll
  static void noConditionContextInTheOperatorsOutput() {
    if (!operators.isEmpty()) {
      // the output of every process, the killed ones' too; the tuples controller's own debug
      // lines are in what is searched (not necessarily in each process's: some lived briefly)
      StringBuilder output = new StringBuilder();
      operators.forEach(operator -> output.append(operator.log()));
      assertThat(output.toString())
          .contains("DEBUG dev.openfga.operator.tuples.TuplesReconciler")
          .doesNotContain(MARKER);
    }
  }

  // ---------------------------------------------------------------------------------------------

  @ParameterizedTest(name = "OpenFGA {0}")
  @ValueSource(strings = {Binaries.OLD_OPENFGA, Binaries.NEW_OPENFGA})
  void manyTuplesAreWrittenInBatchesAndOnlyItsOwnAreEverDeleted(String version) throws Exception {
    Server s = SERVERS.get(version);
    String name = "bulk-" + s.tag();
    String storeId = store(s, name, false);
    FGAModel model = new FGAModel();
    model.setMetadata(meta(name));
    FGAModel.Spec modelSpec = new FGAModel.Spec();
    modelSpec.setStoreRef(new FGAStore.NameRef(name));
    modelSpec.setModel(DSL);
    model.setSpec(modelSpec);
    cluster.client().resource(model).create();

    // 150 tuples over 30 objects and a conditioned one: two Writes at least (100 a Write)
    List<FGATuples.TupleSpec> declared = new ArrayList<>(many("doc", 150));
    declared.add(conditioned("user:carol", "document:hours"));
    int n = declared.size();
    create(name, name, name, declared, null);
    FGATuples ready = awaitSettled(name, n);
    assertThat(ready.getStatus().getWritten()).isEqualTo(n);
    assertThat(ready.getStatus().getPreExisting()).isZero();
    assertThat(ready.getStatus().getStoreId()).isEqualTo(storeId);
    assertThat(ready.getStatus().getModelId())
        .isEqualTo(
            cluster
                .client()
                .resources(FGAModel.class)
                .inNamespace(cluster.namespace())
                .withName(name)
                .get()
                .getStatus()
                .getModelId());
    Map<TupleKey, Tuple> inStore = storeTuples(s, storeId);
    assertThat(inStore.keySet()).containsExactlyInAnyOrderElementsOf(keys(declared));
    Tuple withCondition = inStore.get(new TupleKey("document:hours", "viewer", "user:carol"));
    assertThat(withCondition.condition().name()).isEqualTo("in_hours");
    assertThat(withCondition.condition().context().path("site").asText()).isEqualTo(MARKER);
    assertThat(withCondition.condition().context().path("hour").asInt()).isEqualTo(10);
    assertThat(changes(s, storeId))
        .as("one create per tuple, nothing else")
        .hasSize(n)
        .allMatch(c -> c.operation().equals("TUPLE_OPERATION_WRITE"));
    assertThat(s.proxy.writesTo(storeId))
        .as("batches of at most 100")
        .hasSizeGreaterThanOrEqualTo(2)
        .allMatch(w -> w.body().path("writes").path("tuple_keys").size() <= 100);
    assertThat(ready.getStatus().getConditions())
        .extracting(Condition::getMessage)
        .noneMatch(m -> m.contains(MARKER));

    // the application writes one tuple the FGATuples will declare, and one it never will
    TupleKey app = new TupleKey("document:app", "owner", "user:app");
    TupleKey foreign = new TupleKey("document:app", "viewer", "user:someone");
    applicationWrites(s, storeId, app, foreign);
    int before = changes(s, storeId).size();
    declared.add(spec(app));
    setTuples(name, declared);
    FGATuples withApp = awaitSettled(name, n + 1);
    assertThat(withApp.getStatus().getPreExisting()).isEqualTo(1);
    assertThat(withApp.getStatus().getWritten()).isEqualTo(n);
    assertThat(changes(s, storeId))
        .as("the application's tuple is not written again")
        .hasSize(before);

    // removing the application's entry leaves its tuple; removing one of its own deletes that one
    TupleKey own = key(declared.get(0));
    declared.removeIf(t -> key(t).equals(app) || key(t).equals(own));
    setTuples(name, declared);
    FGATuples trimmed = awaitSettled(name, n - 1);
    assertThat(trimmed.getStatus().getWritten()).isEqualTo(n - 1);
    assertThat(trimmed.getStatus().getPreExisting()).isZero();
    List<Change> since = changes(s, storeId);
    assertThat(since.subList(before, since.size()))
        .containsExactly(new Change("TUPLE_OPERATION_DELETE", own));
    inStore = storeTuples(s, storeId);
    assertThat(inStore).containsKeys(app, foreign).doesNotContainKey(own);
    assertThat(inStore).hasSize(n - 1 + 2);

    // the status lost: looked at afresh, nothing is written, the same counts come back
    int beforeLoss = since.size();
    resources()
        .withName(name)
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON),
            "[{\"op\":\"add\",\"path\":\"/status\",\"value\":{}}]");
    FGATuples back = awaitSettled(name, n - 1);
    assertThat(back.getStatus().getWritten()).isEqualTo(n - 1);
    assertThat(changes(s, storeId)).as("a lost status writes nothing").hasSize(beforeLoss);
    // the tuple the application added and never declared was never touched: its one change
    assertThat(changes(s, storeId)).filteredOn(c -> c.key().equals(foreign)).hasSize(1);
    assertThat(storeTuples(s, storeId)).containsKeys(app, foreign);
    assertThat(events(name, null)).extracting(Event::getMessage).noneMatch(m -> m.contains(MARKER));
  }

  @ParameterizedTest(name = "OpenFGA {0}")
  @ValueSource(strings = {Binaries.OLD_OPENFGA, Binaries.NEW_OPENFGA})
  void reCreatedOrRestoredFromABackupItAdoptsItsRecordAndWritesNothing(String version)
      throws Exception {
    Server s = SERVERS.get(version);
    String name = "again-" + s.tag();
    String storeId = store(s, name, true);
    List<FGATuples.TupleSpec> declared = new ArrayList<>(many("again", 6));
    create(name, name, null, declared, null);
    FGATuples first = awaitSettled(name, 6);
    assertThat(first.getStatus().getWritten()).isEqualTo(6);
    int written = changes(s, storeId).size();
    assertThat(written).isEqualTo(6);

    // deleted (Retain) and applied again from Git: a new uid, the record adopted, nothing written
    FGATuples second = deleteAndCreate(name, first, null);
    assertThat(record(name)).isNotNull();
    FGATuples adopted = awaitSettled(name, 6, second.getMetadata().getUid());
    assertThat(adopted.getStatus().getWritten()).isEqualTo(6);
    assertThat(events(name, "TuplesRecordAdopted"))
        .anyMatch(e -> e.getInvolvedObject().getUid().equals(second.getMetadata().getUid()));
    assertThat(changes(s, storeId)).as("adopted, not written again").hasSize(written);
    // removing an entry deletes the tuple the first incarnation wrote
    TupleKey removed = key(declared.remove(0));
    setTuples(name, declared);
    awaitSettled(name, 5);
    assertThat(storeTuples(s, storeId)).doesNotContainKey(removed).hasSize(5);
    assertThat(changes(s, storeId))
        .hasSize(written + 1)
        .last()
        .isEqualTo(new Change("TUPLE_OPERATION_DELETE", removed));

    // a restore from a backup: the resource and its status as saved, the record kept
    FGATuples saved = get(name);
    FGATuples restored = deleteAndCreate(name, saved, saved.getStatus());
    FGATuples afterRestore = awaitSettled(name, 5, restored.getMetadata().getUid());
    assertThat(afterRestore.getStatus().getWritten()).isEqualTo(5);
    assertThat(events(name, "TuplesRecordAdopted"))
        .anyMatch(e -> e.getInvolvedObject().getUid().equals(restored.getMetadata().getUid()));
    assertThat(changes(s, storeId)).hasSize(written + 1);
    TupleKey removedAfterRestore = key(declared.remove(0));
    setTuples(name, declared);
    awaitSettled(name, 4);
    assertThat(storeTuples(s, storeId)).doesNotContainKey(removedAfterRestore).hasSize(4);
    assertThat(changes(s, storeId)).hasSize(written + 2);

    // restored without its record (deleted too): the tuples are given up, never deleted, which
    // is the safe side (they may be the application's for all the operator can tell)
    FGATuples savedAgain = get(name);
    resources().withName(name).delete();
    await().atMost(WAIT).until(() -> get(name) == null);
    cluster
        .client()
        .configMaps()
        .inNamespace(cluster.namespace())
        .withName(recordName(name))
        .delete();
    await().atMost(WAIT).until(() -> record(name) == null);
    FGATuples orphan = createFrom(savedAgain, savedAgain.getStatus());
    FGATuples foreign = awaitSettled(name, 4, orphan.getMetadata().getUid());
    assertThat(foreign.getStatus().getWritten()).isZero();
    assertThat(foreign.getStatus().getPreExisting()).isEqualTo(4);
    declared.clear();
    declared.add(spec(new TupleKey("document:again-new", "owner", "user:fresh")));
    setTuples(name, declared);
    FGATuples replaced = awaitSettled(name, 1);
    assertThat(replaced.getStatus().getWritten()).isEqualTo(1);
    assertThat(storeTuples(s, storeId)).as("the four given up stay").hasSize(5);
    assertThat(changes(s, storeId))
        .as("one create, no delete")
        .hasSize(written + 3)
        .last()
        .extracting(Change::operation)
        .isEqualTo("TUPLE_OPERATION_WRITE");
  }

  @ParameterizedTest(name = "OpenFGA {0}")
  @ValueSource(strings = {Binaries.OLD_OPENFGA, Binaries.NEW_OPENFGA})
  void aTupleDeletedOutOfBandIsWrittenAgainAndWritesRacingTheApplicationEndTheSame(String version)
      throws Exception {
    Server s = SERVERS.get(version);
    String name = "drift-" + s.tag();
    String storeId = store(s, name, true);
    List<FGATuples.TupleSpec> declared = new ArrayList<>(many("drift", 6));
    create(name, name, null, declared, null);
    awaitSettled(name, 6);

    // deleted out of band, found at the next verification (forced: verifiedAt made old)
    TupleKey lost = key(declared.get(1));
    s.fga.tuples().write(storeId, null, List.of(), List.of(lost), false, false);
    String forced = forceVerification(name);
    await().atMost(WAIT).until(() -> storeTuples(s, storeId).containsKey(lost));
    FGATuples restoredOnce = awaitVerifiedAfter(name, forced);
    assertThat(restoredOnce.getStatus().getWritten()).isEqualTo(6);
    assertThat(events(name, "TuplesRestored"))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getType()).isEqualTo("Warning");
              assertThat(e.getMessage()).contains(lost.text());
            });
    assertThat(s.proxy.writesTo(storeId))
        .filteredOn(w -> w.body().path("writes").path("tuple_keys").size() > 0)
        .last()
        .satisfies(
            w -> {
              assertThat(w.body().path("writes").path("on_duplicate").asText())
                  .as("a tuple it owns is written again ignoring duplicates")
                  .isEqualTo("ignore");
              assertThat(w.status()).isEqualTo(200);
            });

    // again, and the application writes it back just before the operator's Write arrives: 1.10
    // ignores the duplicate; 1.8.16 drops on_duplicate and refuses, and the read-back ends it
    TupleKey raced = key(declared.get(2));
    s.fga.tuples().write(storeId, null, List.of(), List.of(raced), false, false);
    CompletableFuture<Integer> answered =
        s.proxy.before(
            storeId,
            body -> names(body.path("writes"), raced),
            () ->
                s.fga
                    .tuples()
                    .write(storeId, null, List.of(Tuple.of(raced, null)), List.of(), false, false));
    forced = forceVerification(name);
    assertThat(answered.get(WAIT.toSeconds(), TimeUnit.SECONDS))
        .isEqualTo(version.equals(Binaries.NEW_OPENFGA) ? 200 : 400);
    FGATuples afterDup = awaitVerifiedAfter(name, forced);
    assertThat(afterDup.getStatus().getWritten()).as("still its own").isEqualTo(6);
    assertThat(storeTuples(s, storeId)).containsKey(raced).hasSize(6);

    // an entry removed while the application deletes that tuple at the same moment: 1.10 ignores
    // the missing tuple; 1.8.16 drops on_missing, refuses, and the operator reads and goes on
    TupleKey vanishing = key(declared.remove(3));
    CompletableFuture<Integer> deleteAnswered =
        s.proxy.before(
            storeId,
            body -> names(body.path("deletes"), vanishing),
            () -> s.fga.tuples().write(storeId, null, List.of(), List.of(vanishing), false, false));
    setTuples(name, declared);
    assertThat(deleteAnswered.get(WAIT.toSeconds(), TimeUnit.SECONDS))
        .isEqualTo(version.equals(Binaries.NEW_OPENFGA) ? 200 : 400);
    FGATuples afterMissing = awaitSettled(name, 5);
    assertThat(s.proxy.writesTo(storeId))
        .filteredOn(w -> names(w.body().path("deletes"), vanishing))
        .first()
        .satisfies(
            w ->
                assertThat(w.body().path("deletes").path("on_missing").asText())
                    .isEqualTo("ignore"));
    assertThat(afterMissing.getStatus().getWritten()).isEqualTo(5);
    assertThat(storeTuples(s, storeId)).doesNotContainKey(vanishing).hasSize(5);

    // a new entry the application writes between the operator's read and its create: the create
    // (never ignoring duplicates, on either version) is refused, and the tuple is not its own
    TupleKey contested = new TupleKey("document:drift-contested", "owner", "user:app");
    TupleKey plain = new TupleKey("document:drift-plain", "owner", "user:app");
    CompletableFuture<Integer> createAnswered =
        s.proxy.before(
            storeId,
            body -> names(body.path("writes"), contested),
            () -> applicationWrites(s, storeId, contested));
    declared.add(spec(contested));
    declared.add(spec(plain));
    setTuples(name, declared);
    assertThat(createAnswered.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(400);
    FGATuples afterCreateRace = awaitSettled(name, 7);
    assertThat(s.proxy.writesTo(storeId))
        .filteredOn(w -> names(w.body().path("writes"), contested))
        .singleElement()
        .satisfies(
            w ->
                assertThat(w.body().path("writes").has("on_duplicate"))
                    .as("a create never ignores duplicates")
                    .isFalse());
    assertThat(afterCreateRace.getStatus().getWritten()).isEqualTo(6);
    assertThat(afterCreateRace.getStatus().getPreExisting()).isEqualTo(1);
    assertThat(events(name, "TuplesAlreadyPresent"))
        .anyMatch(e -> e.getMessage().contains(contested.text()));
    assertThat(storeTuples(s, storeId)).containsKeys(contested, plain);
    // so removing it leaves it
    declared.removeIf(t -> key(t).equals(contested));
    setTuples(name, declared);
    awaitSettled(name, 6);
    assertThat(storeTuples(s, storeId)).containsKeys(contested, plain).hasSize(7);
  }

  @ParameterizedTest(name = "OpenFGA {0}")
  @ValueSource(strings = {Binaries.OLD_OPENFGA, Binaries.NEW_OPENFGA})
  void anOperatorKilledWhileACreateWasUnderWayLeavesItPendingAndTheNextTakesItAsItsOwn(
      String version) throws Exception {
    Server s = SERVERS.get(version);
    String name = "crash-" + s.tag();
    String storeId = store(s, name, true);
    List<FGATuples.TupleSpec> declared = new ArrayList<>(many("crash", 150));

    // the second create Write (the first, of 100, written and answered) is held at the proxy while
    // the operator is killed (kill -9); then it goes on to OpenFGA, which writes it, and its
    // answer goes to no one
    AtomicInteger creates = new AtomicInteger();
    AtomicReference<Held> held = new AtomicReference<>();
    OperatorInstall.OperatorProcess killed = operators.get(operators.size() - 1);
    CompletableFuture<Integer> lostAnswer =
        s.proxy.before(
            storeId,
            body ->
                body.path("writes").path("tuple_keys").size() > 0 && creates.incrementAndGet() == 2,
            () -> {
              killed.kill();
              held.set(new Held(killed.isAlive(), record(name), changes(s, storeId)));
            });
    create(name, name, null, declared, null);
    try {
      heldWhileKilled(s, storeId, name, declared, lostAnswer, held);
    } finally {
      // the next operator (the rest of the class needs one, whatever was found)
      if (!operators.get(operators.size() - 1).isAlive()) {
        operators.add(cluster.startOperator(install, "operator-" + operators.size()));
      }
    }
    List<TupleKey> lost =
        writtenKeys(
            s.proxy.writesTo(storeId).stream()
                .filter(w -> w.body().path("writes").path("tuple_keys").size() > 0)
                .toList()
                .get(1)
                .body());

    // the next operator: all 150 its own, none taken for someone else's, nothing written again
    FGATuples ready = awaitSettled(name, 150);
    assertThat(ready.getStatus().getWritten()).isEqualTo(150);
    assertThat(ready.getStatus().getPreExisting()).isZero();
    List<Change> after = changes(s, storeId);
    assertThat(after).hasSize(150).allMatch(c -> c.operation().equals("TUPLE_OPERATION_WRITE"));
    assertThat(after.stream().map(Change::key).distinct())
        .as("no tuple written twice")
        .hasSize(150);
    assertThat(s.proxy.writesTo(storeId)).as("the next operator sent no Write").hasSize(2);
    ConfigMap recorded = record(name);
    assertThat(recordKeys(recorded, "owned.gz"))
        .containsExactlyInAnyOrderElementsOf(keys(declared));
    assertThat(recordKeys(recorded, "pending.gz")).isEmpty();
    assertThat(recorded.getData()).doesNotContainKey("pendingSince");

    // an entry whose Write's answer was lost, removed: its own, so deleted
    TupleKey gone = lost.get(lost.size() / 2);
    declared.removeIf(t -> key(t).equals(gone));
    setTuples(name, declared);
    FGATuples trimmed = awaitSettled(name, 149);
    assertThat(trimmed.getStatus().getWritten()).isEqualTo(149);
    assertThat(changes(s, storeId))
        .hasSize(151)
        .last()
        .isEqualTo(new Change("TUPLE_OPERATION_DELETE", gone));
    assertThat(storeTuples(s, storeId)).doesNotContainKey(gone).hasSize(149);
    assertThat(recordKeys(record(name), "owned.gz")).hasSize(149).doesNotContain(gone);
  }

  /**
   * What was found while the second create Write was held and the operator killed ({@code held}),
   * and after the Write went on to OpenFGA with no one to take its answer.
   */
  private static void heldWhileKilled(
      Server s,
      String storeId,
      String name,
      List<FGATuples.TupleSpec> declared,
      CompletableFuture<Integer> lostAnswer,
      AtomicReference<Held> held)
      throws Exception {
    assertThat(lostAnswer.get(WAIT.toSeconds(), TimeUnit.SECONDS))
        .as("the held Write, written by OpenFGA")
        .isEqualTo(200);
    Held h = held.get();
    List<Proxy.Write> sent =
        s.proxy.writesTo(storeId).stream()
            .filter(w -> w.body().path("writes").path("tuple_keys").size() > 0)
            .toList();
    assertThat(sent).hasSize(2);
    assertThat(sent.get(0).status()).isEqualTo(200);
    assertThat(sent.get(0).body().path("writes").path("tuple_keys").size()).isEqualTo(100);
    assertThat(writtenKeys(sent.get(1).body())).hasSize(50);

    // while the Write was held: the operator gone, the first 100 in OpenFGA, all 150 pending
    assertThat(h.operatorAlive()).as("the operator, once killed").isFalse();
    assertThat(h.changes())
        .hasSize(100)
        .allMatch(c -> c.operation().equals("TUPLE_OPERATION_WRITE"));
    assertThat(recordKeys(h.record(), "pending.gz"))
        .containsExactlyInAnyOrderElementsOf(keys(declared));
    assertThat(recordKeys(h.record(), "owned.gz")).isEmpty();
    Instant pendingSince = Instant.parse(h.record().getData().get("pendingSince"));
    // after it: OpenFGA holds all 150, each written since the intent (its own clock); the record
    // is as the killed operator left it
    assertThat(changes(s, storeId)).hasSize(150);
    Map<TupleKey, Tuple> written = storeTuples(s, storeId);
    assertThat(written.keySet()).containsExactlyInAnyOrderElementsOf(keys(declared));
    assertThat(written.values()).allMatch(t -> !t.timestamp().isBefore(pendingSince));
    ConfigMap left = record(name);
    assertThat(left.getMetadata().getResourceVersion())
        .as("the record never written again")
        .isEqualTo(h.record().getMetadata().getResourceVersion());
    FGATuples beforeRestart = get(name);
    assertThat(beforeRestart.getStatus() == null ? null : beforeRestart.getStatus().getWritten())
        .as("no status says what was written")
        .isNotEqualTo(Integer.valueOf(150));
  }

  @ParameterizedTest(name = "OpenFGA {0}")
  @ValueSource(strings = {Binaries.OLD_OPENFGA, Binaries.NEW_OPENFGA})
  void aTupleTheModelRefusesBlocksTheWholeSet(String version) throws Exception {
    Server s = SERVERS.get(version);
    String name = "invalid-" + s.tag();
    String storeId = store(s, name, true);
    List<FGATuples.TupleSpec> declared = new ArrayList<>(many("valid", 120));
    TupleKey bad = new TupleKey("document:valid-1", "editor", "user:u1");
    declared.add(spec(bad));
    create(name, name, null, declared, null);
    FGATuples refused =
        await()
            .atMost(WAIT)
            .until(() -> get(name), t -> "InvalidTuples".equals(reason(t, "Ready")));
    Condition ready = condition(refused, "Ready");
    assertThat(ready.getStatus()).isEqualTo("False");
    assertThat(ready.getMessage()).contains(bad.text()).contains("nothing is written");
    assertThat(refused.getStatus().getInvalid())
        .singleElement()
        .satisfies(i -> assertThat(i).contains(bad.text()));
    assertThat(events(name, "InvalidTuples")).isNotEmpty();
    assertThat(changes(s, storeId)).as("nothing of the set written").isEmpty();
    assertThat(storeTuples(s, storeId)).isEmpty();

    // fixed: all of it written
    declared.removeIf(t -> key(t).equals(bad));
    setTuples(name, declared);
    assertThat(awaitSettled(name, 120).getStatus().getWritten()).isEqualTo(120);
    assertThat(storeTuples(s, storeId)).hasSize(120);
  }

  @ParameterizedTest(name = "OpenFGA {0}")
  @ValueSource(strings = {Binaries.OLD_OPENFGA, Binaries.NEW_OPENFGA})
  void deletionPolicyDeleteDeletesExactlyItsOwnAndTheCollectorTakesTheRecord(String version)
      throws Exception {
    Server s = SERVERS.get(version);
    String name = "deleted-" + s.tag();
    String storeId = store(s, name, true);
    TupleKey app = new TupleKey("document:gone-app", "owner", "user:app");
    TupleKey foreign = new TupleKey("document:gone-app", "viewer", "user:app");
    applicationWrites(s, storeId, app, foreign);
    List<FGATuples.TupleSpec> declared = new ArrayList<>(many("gone", 4));
    declared.add(spec(app));
    declared.add(conditioned("user:carol", "document:gone-hours"));
    create(name, name, null, declared, FGAStore.DeletionPolicy.Delete);
    FGATuples ready = awaitSettled(name, 6);
    assertThat(ready.getStatus().getWritten()).isEqualTo(5);
    assertThat(ready.getStatus().getPreExisting()).isEqualTo(1);
    String uid = ready.getMetadata().getUid();
    assertThat(record(name)).isNotNull();
    assertThat(record(name).getMetadata().getOwnerReferences()).isEmpty();

    // the record's owner references as the API server saw them, change by change
    List<List<OwnerReference>> owners = new CopyOnWriteArrayList<>();
    try (Watch watch =
        cluster
            .client()
            .configMaps()
            .inNamespace(cluster.namespace())
            .withName(recordName(name))
            .watch(
                // from the version read: no change is missed while the watch opens
                new io.fabric8.kubernetes.api.model.ListOptionsBuilder()
                    .withResourceVersion(record(name).getMetadata().getResourceVersion())
                    .build(),
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, ConfigMap cm) {
                    List<OwnerReference> refs = cm.getMetadata().getOwnerReferences();
                    owners.add(refs == null ? List.of() : List.copyOf(refs));
                  }

                  @Override
                  public void onClose(WatcherException cause) {}
                })) {
      resources().withName(name).delete();
      await().atMost(WAIT).until(() -> get(name) == null);
      // the operator may not delete ConfigMaps (chart RBAC): only the garbage collector can
      await().atMost(WAIT).until(() -> record(name) == null);
      await()
          .atMost(WAIT)
          .untilAsserted(
              () ->
                  assertThat(owners)
                      .anySatisfy(
                          refs ->
                              assertThat(refs)
                                  .singleElement()
                                  .satisfies(
                                      r -> {
                                        assertThat(r.getKind()).isEqualTo("FGATuples");
                                        assertThat(r.getUid()).isEqualTo(uid);
                                      })));
    }
    assertThat(storeTuples(s, storeId).keySet())
        .as("its own deleted, the application's kept")
        .containsExactlyInAnyOrder(app, foreign);
    assertThat(changes(s, storeId))
        .filteredOn(c -> c.operation().equals("TUPLE_OPERATION_DELETE"))
        .extracting(Change::key)
        .containsExactlyInAnyOrderElementsOf(
            keys(declared).stream().filter(k -> !k.equals(app)).toList());
  }

  /**
   * Two FGATuples declare one tuple; the one that created it is deleted with {@code Delete}: the
   * tuple passes to the other's record (made by the operator, as the API server and the chart's
   * RBAC allow), which deletes it once it drops it too. Kubernetes behaviour only: one version.
   */
  @Test
  void deletedWithDeleteItHandsATupleAnotherDeclaresToItAndThatOneDeletesItLater()
      throws Exception {
    Server s = SERVERS.get(Binaries.NEW_OPENFGA);
    String store = "handed-" + s.tag();
    String storeId = store(s, store, true);
    TupleKey shared = new TupleKey("document:handed", "owner", "user:shared");
    TupleKey onlyFirst = new TupleKey("document:handed", "viewer", "user:first");
    TupleKey later = new TupleKey("document:handed", "viewer", "user:later");
    String first = "handed-first";
    String second = "handed-second";
    create(
        first, store, null, List.of(spec(shared), spec(onlyFirst)), FGAStore.DeletionPolicy.Delete);
    assertThat(awaitSettled(first, 2).getStatus().getWritten()).isEqualTo(2);
    create(second, store, null, List.of(spec(shared)), FGAStore.DeletionPolicy.Retain);
    FGATuples before = awaitSettled(second, 1);
    assertThat(before.getStatus().getPreExisting()).isEqualTo(1);
    assertThat(record(second)).as("it created nothing: no record").isNull();

    resources().withName(first).delete();
    await().atMost(WAIT).until(() -> get(first) == null);

    assertThat(storeTuples(s, storeId).keySet()).containsExactly(shared);
    ConfigMap handed = record(second);
    assertThat(handed.getData()).containsEntry("owned", "1").containsEntry("storeId", storeId);
    assertThat(handed.getMetadata().getOwnerReferences()).isEmpty();
    assertThat(events(first, "TuplesHandedOver"))
        .singleElement()
        .satisfies(e -> assertThat(e.getMessage()).contains("FGATuples " + second));

    // its next look counts it as its own
    FGATuples counted = awaitVerifiedAfter(second, forceVerification(second));
    assertThat(counted.getStatus().getWritten()).isEqualTo(1);
    assertThat(counted.getStatus().getPreExisting()).isZero();

    // dropped by the last one to declare it, it goes: deleted once, by the operator
    setTuples(second, List.of(spec(later)));
    await()
        .atMost(WAIT)
        .until(() -> storeTuples(s, storeId).keySet(), keys -> keys.equals(Set.of(later)));
    assertThat(changes(s, storeId))
        .filteredOn(c -> c.operation().equals("TUPLE_OPERATION_DELETE"))
        .extracting(Change::key)
        .containsExactlyInAnyOrder(onlyFirst, shared);
  }

  // ---------------------------------------------------------------------------------------------

  private static io.fabric8.kubernetes.api.model.ObjectMeta meta(String name) {
    return new ObjectMetaBuilder().withName(name).withNamespace(cluster.namespace()).build();
  }

  private static MixedOperation<FGATuples, ?, Resource<FGATuples>> all() {
    return cluster.client().resources(FGATuples.class);
  }

  private static io.fabric8.kubernetes.client.dsl.NonNamespaceOperation<
          FGATuples, ?, Resource<FGATuples>>
      resources() {
    return all().inNamespace(cluster.namespace());
  }

  private static FGATuples get(String name) {
    return resources().withName(name).get();
  }

  /**
   * A ready FGAStore on {@code s} (through its proxy); its store id, the model written if asked.
   */
  private static String store(Server s, String name, boolean withModel) throws Exception {
    FGAStore store = new FGAStore();
    store.setMetadata(meta(name));
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName("it-" + name);
    FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
    ref.setUrl(s.proxy.url());
    spec.setOpenfgaRef(ref);
    store.setSpec(spec);
    cluster.client().resource(store).create();
    String id =
        await()
            .atMost(WAIT)
            .until(
                () -> {
                  FGAStore st =
                      cluster
                          .client()
                          .resources(FGAStore.class)
                          .inNamespace(cluster.namespace())
                          .withName(name)
                          .get();
                  return st == null || st.getStatus() == null ? null : st.getStatus().getStoreId();
                },
                Objects::nonNull);
    if (withModel) {
      s.fga.writeModel(id, ModelJson.fromDsl(DSL).json());
    }
    return id;
  }

  private static FGATuples create(
      String name,
      String store,
      String model,
      List<FGATuples.TupleSpec> tuples,
      FGAStore.DeletionPolicy policy) {
    FGATuples t = new FGATuples();
    t.setMetadata(meta(name));
    FGATuples.Spec spec = new FGATuples.Spec();
    spec.setStoreRef(new FGAStore.NameRef(store));
    if (model != null) {
      spec.setModelRef(new FGAStore.NameRef(model));
    }
    spec.setTuples(new ArrayList<>(tuples));
    spec.setDeletionPolicy(policy);
    t.setSpec(spec);
    return resources().resource(t).create();
  }

  /** The FGATuples deleted (Retain), then created again from {@code copy}, with its status. */
  private static FGATuples deleteAndCreate(String name, FGATuples copy, FGATuples.Status status) {
    resources().withName(name).delete();
    await().atMost(WAIT).until(() -> get(name) == null);
    return createFrom(copy, status);
  }

  /**
   * Creates the FGATuples of {@code copy} anew (as a restore or {@code kubectl apply} does: no uid,
   * no resourceVersion), then, if given, puts {@code status} on it (a create cannot set status).
   */
  private static FGATuples createFrom(FGATuples copy, FGATuples.Status status) {
    FGATuples fresh = new FGATuples();
    fresh.setMetadata(meta(copy.getMetadata().getName()));
    fresh.setSpec(copy.getSpec());
    FGATuples created = resources().resource(fresh).create();
    if (status != null) {
      resources()
          .withName(created.getMetadata().getName())
          .subresource("status")
          .patch(
              PatchContext.of(PatchType.JSON),
              // not guarded by a resourceVersion: the operator adds its finalizer meanwhile
              JSON.createArrayNode()
                  .add(
                      JSON.createObjectNode()
                          .put("op", "add")
                          .put("path", "/status")
                          .set("value", STATUS.valueToTree(status)))
                  .toString());
    }
    return created;
  }

  private static void setTuples(String name, List<FGATuples.TupleSpec> tuples) {
    Edits.edit(resources().withName(name), t -> t.getSpec().setTuples(new ArrayList<>(tuples)));
  }

  /**
   * The next look reads the store: verifiedAt made older than the recheck period (5 minutes); the
   * time written.
   */
  private static String forceVerification(String name) {
    String old = Instant.now().minus(Duration.ofHours(1)).toString();
    resources()
        .withName(name)
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON),
            "[{\"op\":\"replace\",\"path\":\"/status/verifiedAt\",\"value\":\"" + old + "\"}]");
    return old;
  }

  private static String reason(FGATuples t, String type) {
    Condition c = condition(t, type);
    return c == null ? null : c.getReason();
  }

  private static Condition condition(FGATuples t, String type) {
    if (t == null || t.getStatus() == null || t.getStatus().getConditions() == null) {
      return null;
    }
    return t.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  /** Ready and InSync for its current generation, with {@code desired} tuples declared. */
  private static boolean settled(FGATuples t, int desired) {
    return t != null
        && t.getStatus() != null
        && Objects.equals(t.getStatus().getObservedGeneration(), t.getMetadata().getGeneration())
        && "TuplesReady".equals(reason(t, "Ready"))
        && "TuplesInSync".equals(reason(t, "InSync"))
        && Objects.equals(t.getStatus().getDesired(), desired);
  }

  private static FGATuples awaitSettled(String name, int desired) {
    return await().atMost(WAIT).until(() -> get(name), t -> settled(t, desired));
  }

  /** Settled, for the FGATuples of this uid, and its record adopted (naming that uid). */
  private static FGATuples awaitSettled(String name, int desired, String uid) {
    return await()
        .atMost(WAIT)
        .until(
            () -> get(name),
            t ->
                t != null
                    && uid.equals(t.getMetadata().getUid())
                    && settled(t, desired)
                    && t.getStatus().getVerifiedAt() != null);
  }

  /** Settled again after a look that read the store later than {@code before}. */
  private static FGATuples awaitVerifiedAfter(String name, String before) {
    Instant after = Instant.parse(before);
    return await()
        .atMost(WAIT)
        .until(
            () -> get(name),
            t ->
                settled(t, t.getStatus().getDesired())
                    && Instant.parse(t.getStatus().getVerifiedAt()).isAfter(after));
  }

  private static ConfigMap record(String name) {
    return cluster
        .client()
        .configMaps()
        .inNamespace(cluster.namespace())
        .withName(recordName(name))
        .get();
  }

  private static String recordName(String name) {
    return name + "-tuples-record";
  }

  /** The FGATuples' Events (of this reason, null: all). */
  private static List<Event> events(String name, String reason) {
    return cluster
        .client()
        .v1()
        .events()
        .inNamespace(cluster.namespace())
        .list()
        .getItems()
        .stream()
        .filter(e -> "FGATuples".equals(e.getInvolvedObject().getKind()))
        .filter(e -> name.equals(e.getInvolvedObject().getName()))
        .filter(e -> reason == null || reason.equals(e.getReason()))
        .toList();
  }

  // --- tuples -------------------------------------------------------------------------------

  /** {@code n} tuples, five to an object (viewer and owner by turns). */
  private static List<FGATuples.TupleSpec> many(String prefix, int n) {
    List<FGATuples.TupleSpec> tuples = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      tuples.add(
          new FGATuples.TupleSpec(
              "user:u" + i, i % 2 == 0 ? "viewer" : "owner", "document:" + prefix + "-" + i / 5));
    }
    return tuples;
  }

  private static FGATuples.TupleSpec conditioned(String user, String object) {
    FGATuples.TupleSpec t = new FGATuples.TupleSpec(user, "viewer", object);
    FGATuples.ConditionSpec c = new FGATuples.ConditionSpec();
    c.setName("in_hours");
    ObjectNode context = JSON.createObjectNode().put("hour", 10).put("site", MARKER);
    c.setContext(context);
    t.setCondition(c);
    return t;
  }

  private static FGATuples.TupleSpec spec(TupleKey k) {
    return new FGATuples.TupleSpec(k.user(), k.relation(), k.object());
  }

  private static TupleKey key(FGATuples.TupleSpec t) {
    return new TupleKey(t.getObject(), t.getRelation(), t.getUser());
  }

  private static List<TupleKey> keys(List<FGATuples.TupleSpec> tuples) {
    return tuples.stream().map(TuplesIT::key).toList();
  }

  /** The keys a Write body's {@code writes} names. */
  private static List<TupleKey> writtenKeys(JsonNode body) {
    List<TupleKey> keys = new ArrayList<>();
    for (JsonNode t : body.path("writes").path("tuple_keys")) {
      keys.add(
          new TupleKey(
              t.path("object").asText(), t.path("relation").asText(), t.path("user").asText()));
    }
    return keys;
  }

  /** The keys a record lists under {@code entry} ({@code owned.gz}, {@code pending.gz}). */
  private static List<TupleKey> recordKeys(ConfigMap record, String entry) throws IOException {
    String encoded = record.getBinaryData() == null ? null : record.getBinaryData().get(entry);
    if (encoded == null) {
      return List.of();
    }
    try (var in =
        new java.util.zip.GZIPInputStream(
            new java.io.ByteArrayInputStream(Base64.getDecoder().decode(encoded)))) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8)
          .lines()
          .filter(l -> !l.isEmpty())
          .map(TupleKey::parse)
          .toList();
    }
  }

  /** Whether a write body's {@code writes} or {@code deletes} names the key. */
  private static boolean names(JsonNode part, TupleKey k) {
    for (JsonNode t : part.path("tuple_keys")) {
      if (k.user().equals(t.path("user").asText())
          && k.relation().equals(t.path("relation").asText())
          && k.object().equals(t.path("object").asText())) {
        return true;
      }
    }
    return false;
  }

  /** Every tuple of the store, read from OpenFGA directly. */
  /** Tuples the application writes itself, straight to OpenFGA (no condition). */
  private static void applicationWrites(Server s, String storeId, TupleKey... keys)
      throws Exception {
    s.fga
        .tuples()
        .write(
            storeId,
            null,
            java.util.Arrays.stream(keys).map(k -> Tuple.of(k, null)).toList(),
            List.of(),
            false,
            false);
  }

  private static Map<TupleKey, Tuple> storeTuples(Server s, String storeId) throws Exception {
    Map<TupleKey, Tuple> all = new LinkedHashMap<>();
    String token = "";
    do {
      TuplePage page = s.fga.tuples().readAll(storeId, token);
      page.tuples().forEach(t -> all.put(t.key(), t));
      token = page.continuationToken();
    } while (!token.isEmpty());
    return all;
  }

  /** What the test found while a Write was held and the operator killed. */
  private record Held(boolean operatorAlive, ConfigMap record, List<Change> changes) {}

  /** One entry of OpenFGA's changelog. */
  private record Change(String operation, TupleKey key) {}

  private static final HttpClient HTTP = FgaApi.defaultHttpClient();

  /** The store's whole changelog, oldest first ({@code GET /stores/{id}/changes}). */
  private static List<Change> changes(Server s, String storeId) throws Exception {
    List<Change> changes = new ArrayList<>();
    String token = "";
    while (true) {
      String query =
          "?page_size=100"
              + (token.isEmpty()
                  ? ""
                  : "&continuation_token=" + URLEncoder.encode(token, StandardCharsets.UTF_8));
      HttpResponse<String> answer =
          HTTP.send(
              HttpRequest.newBuilder(
                      URI.create(s.url() + "/stores/" + storeId + "/changes" + query))
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      JsonNode page = JSON.readTree(answer.body());
      JsonNode entries = page.path("changes");
      for (JsonNode c : entries) {
        JsonNode k = c.path("tuple_key");
        changes.add(
            new Change(
                c.path("operation").asText(),
                new TupleKey(
                    k.path("object").asText(),
                    k.path("relation").asText(),
                    k.path("user").asText())));
      }
      String next = page.path("continuation_token").asText("");
      if (entries.isEmpty() || next.isEmpty() || next.equals(token)) {
        return changes;
      }
      token = next;
    }
  }

  // --- the proxy ----------------------------------------------------------------------------

  /**
   * A loopback HTTP proxy from the operator to one OpenFGA server: it keeps every Write with the
   * status OpenFGA answered, and can make the application act just before a chosen Write is passed
   * on (the race between the operator's read and its write, made to happen).
   */
  static final class Proxy implements AutoCloseable {
    /** A Write as the operator sent it, and OpenFGA's answer. */
    record Write(String storeId, JsonNode body, int status) {}

    private record Race(
        String storeId, Predicate<JsonNode> when, Act act, CompletableFuture<Integer> answered) {}

    @FunctionalInterface
    interface Act {
      void run() throws Exception;
    }

    private final HttpServer server;
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final HttpClient http = FgaApi.defaultHttpClient();
    private final List<Write> writes = new CopyOnWriteArrayList<>();
    private final AtomicReference<Race> race = new AtomicReference<>();
    volatile URI target;

    private Proxy(HttpServer server) {
      this.server = server;
    }

    static Proxy start() {
      try {
        HttpServer server =
            HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        Proxy proxy = new Proxy(server);
        server.setExecutor(proxy.pool);
        server.createContext("/", proxy::handle);
        server.start();
        return proxy;
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    List<Write> writesTo(String storeId) {
      return writes.stream().filter(w -> w.storeId().equals(storeId)).toList();
    }

    /**
     * Runs {@code act} once, just before the first Write to the store whose body matches is passed
     * on; the status OpenFGA answered that Write.
     */
    CompletableFuture<Integer> before(String storeId, Predicate<JsonNode> when, Act act) {
      Race r = new Race(storeId, when, act, new CompletableFuture<>());
      assertThat(race.compareAndSet(null, r)).as("one race at a time").isTrue();
      return r.answered();
    }

    private void handle(HttpExchange exchange) throws IOException {
      try (exchange) {
        byte[] body = exchange.getRequestBody().readAllBytes();
        String path = exchange.getRequestURI().getRawPath();
        String query = exchange.getRequestURI().getRawQuery();
        String method = exchange.getRequestMethod();
        String storeId = null;
        JsonNode json = null;
        Race armed = null;
        if ("POST".equals(method) && path.matches("/stores/[^/]+/write")) {
          storeId = path.split("/")[2];
          json = JSON.readTree(body);
          Race r = race.get();
          if (r != null
              && r.storeId().equals(storeId)
              && r.when().test(json)
              && race.compareAndSet(r, null)) {
            armed = r;
            try {
              r.act().run();
            } catch (Exception e) {
              r.answered().completeExceptionally(e);
            }
          }
        }
        HttpRequest.Builder request =
            HttpRequest.newBuilder(URI.create(target + path + (query == null ? "" : "?" + query)))
                .timeout(Duration.ofSeconds(30))
                .method(
                    method,
                    body.length == 0
                        ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(body));
        for (String h : List.of("Content-Type", "Accept", "Authorization")) {
          String v = exchange.getRequestHeaders().getFirst(h);
          if (v != null) {
            request.header(h, v);
          }
        }
        HttpResponse<byte[]> response;
        try {
          response = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          exchange.sendResponseHeaders(502, -1);
          return;
        } catch (IOException e) {
          exchange.sendResponseHeaders(502, -1);
          return;
        }
        if (json != null) {
          writes.add(new Write(storeId, json, response.statusCode()));
        }
        if (armed != null) {
          armed.answered().complete(response.statusCode());
        }
        response
            .headers()
            .firstValue("Content-Type")
            .ifPresent(v -> exchange.getResponseHeaders().add("Content-Type", v));
        byte[] out = response.body();
        exchange.sendResponseHeaders(response.statusCode(), out.length == 0 ? -1 : out.length);
        if (out.length > 0) {
          exchange.getResponseBody().write(out);
        }
      }
    }

    @Override
    public void close() {
      server.stop(0);
      pool.shutdownNow();
    }
  }
}
