package dev.openfga.operator.tuples;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.openfga.CallFailure;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleCondition;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.tuples.TuplesObservation.Desired;
import dev.openfga.operator.tuples.TuplesObservation.Record;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The FGATuples plan, driven against a store simulated in the test (what OpenFGA answers each
 * call): which calls it asks for, in which order, and what it ends with. Each rule of SPEC §11 has
 * a case: batches, ownership (never a tuple it did not create), the record written before the
 * creates, a crash between them, tuples deleted out of band, co-declared tuples, the model check.
 */
class TuplesPlannerTest {
  private static final String URL = "http://openfga.openfga:8080";
  private static final String STORE = "01HVMMBCMGZNT3SED4Z17ECXCA";
  private static final String MODEL_ID = "01HVMMBCMGZNT3SED4Z17EMODL";
  private static final Instant NOW = Instant.parse("2026-12-04T10:00:00Z");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNode MODEL = model();
  private static final TuplesPlanner PLANNER = new TuplesPlanner(new Servers(List.of(URL)));

  private static JsonNode model() {
    try {
      return ModelJson.fromDsl(
              "model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user]\n"
                  + "type org\n  relations\n    define admin: [user, group#member]\n"
                  + "    define viewer: [user, user:*, user with in_hours]\n"
                  + "    define can_view: viewer or admin\n"
                  + "condition in_hours(hour: int) {\n  hour >= 9 && hour < 17\n}\n",
              "test")
          .json();
    } catch (ModelJson.InvalidModel e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A store as OpenFGA keeps it, answering the plan's calls; the record as the API server keeps it.
   */
  private static final class SimulatedStore {
    final Map<TupleKey, Tuple> tuples = new TreeMap<>();
    final List<TuplesStep> calls = new ArrayList<>();

    /** How many times the planner decided in the last drive (batches go out without one). */
    int plans;

    Record record = new Record.Absent();
    int writes;

    /** The tuples handed to other FGATuples' records, by their names. */
    final Map<String, SortedSet<TupleKey>> handed = new TreeMap<>();

    /** When set, answers a call instead of the store (e.g. a failure). */
    Function<TuplesStep, TuplesAnswer> instead = s -> null;

    TuplesAnswer answer(TuplesStep step, TuplesObservation o) {
      calls.add(step);
      TuplesAnswer special = instead.apply(step);
      if (special != null) {
        return special;
      }
      if (step instanceof TuplesStep.ReadModel) {
        return new TuplesAnswer.ModelRead(MODEL_ID, MODEL);
      }
      if (step instanceof TuplesStep.ReadStore read) {
        Map<TupleKey, Tuple> present = new HashMap<>();
        read.keys().stream()
            .filter(tuples::containsKey)
            .forEach(k -> present.put(k, tuples.get(k)));
        return new TuplesAnswer.StoreRead(read.keys(), present);
      }
      if (step instanceof TuplesStep.WriteRecord w) {
        record =
            new Record.Own(
                w.storeId(),
                w.owned(),
                w.pending(),
                w.pendingSince(),
                o.tuples().getMetadata().getUid(),
                "rv" + ++writes);
        return new TuplesAnswer.RecordWritten(w, "rv" + writes);
      }
      if (step instanceof TuplesStep.Delete d) {
        assertThat(d.keys().size()).isLessThanOrEqualTo(o.perWrite());
        d.keys().forEach(tuples::remove);
        return new TuplesAnswer.Deleted(d.keys());
      }
      if (step instanceof TuplesStep.Create c) {
        assertThat(c.tuples().size()).isLessThanOrEqualTo(o.perWrite());
        List<TupleKey> keys = c.tuples().stream().map(Tuple::key).toList();
        if (!c.ignoreDuplicates() && keys.stream().anyMatch(tuples::containsKey)) {
          return new TuplesAnswer.Duplicate(keys);
        }
        c.tuples()
            .forEach(t -> tuples.putIfAbsent(t.key(), new Tuple(t.key(), t.condition(), NOW)));
        return new TuplesAnswer.Created(keys, c.ignoreDuplicates());
      }
      if (step instanceof TuplesStep.HandOver h) {
        handed.computeIfAbsent(h.holder(), x -> new TreeSet<>()).addAll(h.keys());
        return new TuplesAnswer.HandedOver(h.holder(), h.keys());
      }
      if (step instanceof TuplesStep.GiveRecordAway) {
        return new TuplesAnswer.RecordGivenAway();
      }
      throw new IllegalArgumentException(step.toString());
    }

    /** Plans until done, answering every call; the end. */
    TuplesPlan.Done drive(TuplesObservation o) {
      o =
          new TuplesObservation(
              o.tuples(),
              o.now(),
              o.desired(),
              o.store(),
              o.confirmed(),
              o.model(),
              record,
              o.declaredElsewhere(),
              o.perWrite(),
              o.deleting(),
              List.of());
      TuplesPlan plan = PLANNER.plan(o);
      int n = 0;
      plans = 1;
      while (plan instanceof TuplesPlan.Call call) {
        assertThat(n++).isLessThan(1000);
        for (TuplesStep step : call.steps()) { // as the reconciler: on while each succeeds
          TuplesAnswer a = answer(step, o);
          o = o.with(a);
          if (!(a instanceof TuplesAnswer.Created || a instanceof TuplesAnswer.Deleted)) {
            break;
          }
        }
        plan = PLANNER.plan(o);
        plans++;
      }
      return (TuplesPlan.Done) plan;
    }

    <S extends TuplesStep> List<S> calls(Class<S> kind) {
      return calls.stream().filter(kind::isInstance).map(kind::cast).toList();
    }

    SortedSet<TupleKey> owned() {
      return record instanceof Record.Own own ? own.owned() : new TreeSet<>();
    }
  }

  private static TupleKey key(String object, String relation, String user) {
    return new TupleKey(object, relation, user);
  }

  private static List<FGATuples.TupleSpec> specs(int n) {
    List<FGATuples.TupleSpec> specs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      specs.add(new FGATuples.TupleSpec("user:u" + i, "admin", "org:acme"));
    }
    return specs;
  }

  private static FGATuples resource(List<FGATuples.TupleSpec> tuples) {
    FGATuples t = new FGATuples();
    t.setMetadata(
        new ObjectMetaBuilder()
            .withNamespace("team-a")
            .withName("base")
            .withUid("uid-1")
            .withGeneration(1L)
            .build());
    t.setSpec(new FGATuples.Spec());
    t.getSpec().setStoreRef(new FGAStore.NameRef("payments"));
    t.getSpec().setTuples(tuples);
    return t;
  }

  private static FGAStore store() {
    FGAStore store = new FGAStore();
    store.setMetadata(
        new ObjectMetaBuilder().withNamespace("team-a").withName("payments").withUid("s").build());
    store.setSpec(new FGAStore.Spec());
    store.getSpec().setOpenfgaRef(new FGAStore.OpenFgaRef());
    store.getSpec().getOpenfgaRef().setUrl(URL);
    store.setStatus(new FGAStore.Status());
    store.getStatus().setStoreId(STORE);
    Conditions.set(store.getStatus(), Conditions.READY, true, "StoreReady", "ready", NOW);
    return store;
  }

  private static TuplesObservation observed(
      FGATuples t, int perWrite, Map<TupleKey, String> elsewhere) {
    return new TuplesObservation(
        t,
        NOW,
        DeclaredTuples.fromSpec(t.getSpec().getTuples()),
        Optional.of(store()),
        true,
        Optional.empty(),
        new Record.Absent(),
        elsewhere,
        perWrite,
        false,
        List.of());
  }

  /** The planner's decision on an observation with no answer yet (another FGATuples none). */
  private static TuplesPlan.Done decide(
      FGATuples t,
      Instant now,
      Desired desired,
      Optional<FGAStore> store,
      boolean confirmed,
      Optional<FGAModel> model,
      Record record,
      boolean deleting) {
    return (TuplesPlan.Done)
        PLANNER.plan(
            new TuplesObservation(
                t, now, desired, store, confirmed, model, record, Map.of(), 100, deleting,
                List.of()));
  }

  private static TuplesObservation observed(FGATuples t) {
    return observed(t, 100, Map.of());
  }

  private static Condition condition(TuplesPlan.Done done, String type) {
    return Conditions.find(done.status().orElseThrow().getConditions(), type).orElseThrow();
  }

  private static List<String> events(TuplesPlan.Done done) {
    return done.events().stream().map(e -> e.reason().name() + ": " + e.message()).toList();
  }

  @Test
  void aNewSetIsRecordedAsIntentThenCreatedInBatchesThenRecorded() {
    SimulatedStore s = new SimulatedStore();
    TuplesPlan.Done done = s.drive(observed(resource(specs(250))));

    assertThat(s.calls.get(0)).isInstanceOf(TuplesStep.ReadModel.class);
    assertThat(s.calls.get(1)).isInstanceOf(TuplesStep.ReadStore.class);
    TuplesStep.WriteRecord intent = (TuplesStep.WriteRecord) s.calls.get(2);
    assertThat(intent.pending()).hasSize(250);
    assertThat(intent.owned()).isEmpty();
    assertThat(intent.pendingSince()).contains(NOW);
    assertThat(s.calls(TuplesStep.Create.class))
        .extracting(c -> c.tuples().size())
        .containsExactly(100, 100, 50);
    assertThat(s.calls(TuplesStep.Create.class)).allMatch(c -> !c.ignoreDuplicates());
    // read the model, read the store, the intent, the three creates at once, the record, done:
    // no decision between the batches
    assertThat(s.plans).isEqualTo(6);
    assertThat(s.calls.get(s.calls.size() - 1)).isInstanceOf(TuplesStep.WriteRecord.class);
    assertThat(s.owned()).hasSize(250);
    assertThat(((Record.Own) s.record).pending()).isEmpty();
    FGATuples.Status status = done.status().orElseThrow();
    assertThat(status.getDesired()).isEqualTo(250);
    assertThat(status.getWritten()).isEqualTo(250);
    assertThat(status.getPreExisting()).isZero();
    assertThat(condition(done, "Ready").getReason()).isEqualTo("TuplesReady");
    assertThat(condition(done, "InSync").getStatus()).isEqualTo("True");
    assertThat(events(done))
        .containsExactly(
            "TuplesWritten: created 250 and deleted 0 tuples in store "
                + STORE
                + " (model "
                + MODEL_ID
                + ")");
  }

  @Test
  void aSmallerFlagMakesSmallerBatches() {
    SimulatedStore s = new SimulatedStore();
    s.drive(observed(resource(specs(25)), 10, Map.of()));
    assertThat(s.calls(TuplesStep.Create.class))
        .extracting(c -> c.tuples().size())
        .containsExactly(10, 10, 5);
  }

  @Test
  void anUnchangedSetLookedAtRecentlyAsksNothing() {
    SimulatedStore s = new SimulatedStore();
    FGATuples t = resource(specs(3));
    TuplesPlan.Done first = s.drive(observed(t));
    t.setStatus(first.status().orElseThrow());
    s.calls.clear();

    TuplesPlan.Done again = s.drive(observed(t));

    assertThat(s.calls).isEmpty();
    assertThat(again.status()).isEmpty();
    assertThat(again.events()).isEmpty();
  }

  @Test
  void anUnchangedSetIsReadAgainAfterTheRecheckAndNothingIsWritten() {
    SimulatedStore s = new SimulatedStore();
    FGATuples t = resource(specs(3));
    t.setStatus(s.drive(observed(t)).status().orElseThrow());
    t.getStatus().setVerifiedAt(Timestamps.format(NOW.minus(TuplesPlanner.RECHECK)));
    s.calls.clear();

    TuplesPlan.Done again = s.drive(observed(t));

    assertThat(s.calls)
        .extracting(c -> c.getClass().getSimpleName())
        .containsExactly("ReadModel", "ReadStore");
    assertThat(again.status().orElseThrow().getVerifiedAt()).isEqualTo(Timestamps.format(NOW));
    assertThat(again.events()).isEmpty();
  }

  @Test
  void aTupleAlreadyThereIsNeverTakenForItsOwnNorDeleted() {
    SimulatedStore s = new SimulatedStore();
    TupleKey app = key("org:acme", "admin", "user:u1");
    s.tuples.put(app, new Tuple(app, null, NOW.minusSeconds(3600)));
    FGATuples t = resource(specs(3));
    TuplesPlan.Done done = s.drive(observed(t));

    assertThat(s.owned()).doesNotContain(app).hasSize(2);
    assertThat(done.status().orElseThrow().getPreExisting()).isEqualTo(1);
    assertThat(done.status().orElseThrow().getWritten()).isEqualTo(2);
    assertThat(events(done))
        .contains(
            "TuplesAlreadyPresent: 1 declared tuples were already in the store: they are not this"
                + " FGATuples' own and stay when removed from it: "
                + app.text());

    t.setStatus(done.status().orElseThrow());
    t.getSpec().setTuples(List.of());
    s.calls.clear();
    s.drive(observed(t));

    assertThat(s.tuples).containsOnlyKeys(app);
    assertThat(s.calls(TuplesStep.Delete.class))
        .flatExtracting(TuplesStep.Delete::keys)
        .doesNotContain(app)
        .hasSize(2);
  }

  @Test
  void aTupleWrittenBetweenTheReadAndTheCreateIsSomeoneElses() {
    SimulatedStore s = new SimulatedStore();
    TupleKey raced = key("org:acme", "admin", "user:u2");
    s.instead =
        step -> {
          if (step instanceof TuplesStep.WriteRecord w && !w.pending().isEmpty()) {
            s.tuples.put(raced, new Tuple(raced, null, NOW)); // the application, just now
          }
          return null;
        };
    TuplesPlan.Done done = s.drive(observed(resource(specs(3))));

    assertThat(s.calls(TuplesStep.Create.class)).hasSize(2); // refused as a whole, then the rest
    assertThat(s.owned()).doesNotContain(raced).hasSize(2);
    assertThat(events(done)).anyMatch(e -> e.startsWith("TuplesAlreadyPresent: 1 declared tuples"));
  }

  @Test
  void pendingTuplesFoundWrittenSinceTheIntentAreItsOwnAfterACrash() {
    SimulatedStore s = new SimulatedStore();
    TupleKey mine = key("org:acme", "admin", "user:u0");
    TupleKey theirs = key("org:acme", "admin", "user:u1");
    s.tuples.put(mine, new Tuple(mine, null, NOW.minusSeconds(30)));
    s.tuples.put(theirs, new Tuple(theirs, null, NOW.minus(Duration.ofHours(2))));
    s.record =
        new Record.Own(
            STORE,
            new TreeSet<>(),
            new TreeSet<>(Set.of(mine, theirs)),
            Optional.of(NOW.minusSeconds(60)),
            "uid-1",
            "rv0");

    s.drive(observed(resource(specs(2))));

    assertThat(s.calls(TuplesStep.Create.class)).isEmpty();
    assertThat(s.owned()).containsExactly(mine);
    assertThat(((Record.Own) s.record).pending()).isEmpty();
  }

  @Test
  void aPendingTupleWrittenLongAfterTheIntentIsSomeoneElses() {
    SimulatedStore s = new SimulatedStore();
    TupleKey late = key("org:acme", "admin", "user:u0");
    s.tuples.put(late, new Tuple(late, null, NOW)); // written now, the intent a day old
    s.record =
        new Record.Own(
            STORE,
            new TreeSet<>(),
            new TreeSet<>(Set.of(late)),
            Optional.of(NOW.minus(Duration.ofDays(1))),
            "uid-1",
            "rv0");

    TuplesPlan.Done done = s.drive(observed(resource(specs(1))));

    assertThat(s.owned()).isEmpty();
    assertThat(done.status().orElseThrow().getPreExisting()).isEqualTo(1);
  }

  @Test
  void aSetAllWrittenBySomeoneElseIsLeftAloneBetweenLooks() {
    SimulatedStore s = new SimulatedStore();
    specs(3)
        .forEach(
            t -> {
              TupleKey k = key(t.getObject(), t.getRelation(), t.getUser());
              s.tuples.put(k, new Tuple(k, null, NOW.minusSeconds(3600)));
            });
    FGATuples t = resource(specs(3));
    TuplesPlan.Done first = s.drive(observed(t));
    assertThat(s.record).isInstanceOf(Record.Absent.class);
    t.setStatus(first.status().orElseThrow());
    s.calls.clear();

    TuplesPlan.Done again = s.drive(observed(t));

    assertThat(s.calls).isEmpty();
    assertThat(again.status()).isEmpty();
  }

  @Test
  void aRecordBeingCollectedIsWaitedFor() {
    SimulatedStore s = new SimulatedStore();
    s.record = new Record.Collecting();
    TuplesPlan.Done done = s.drive(observed(resource(specs(1))));
    assertThat(s.calls).isEmpty();
    assertThat(done.status()).isEmpty();
    assertThat(done.again()).isEqualTo(TuplesPlanner.COLLECTING_AGAIN);
  }

  @Test
  void aLostRecordIsReportedOnceItsStatusSaysTuplesWereWritten() {
    SimulatedStore s = new SimulatedStore();
    FGATuples t = resource(specs(2));
    t.setStatus(s.drive(observed(t)).status().orElseThrow());
    s.record = new Record.Absent();
    t.getStatus().setVerifiedAt(Timestamps.format(NOW.minus(Duration.ofHours(1))));

    TuplesPlan.Done done = s.drive(observed(t));

    assertThat(events(done))
        .anyMatch(e -> e.startsWith("TuplesRecordMissing: the status says 2 tuples"));
    assertThat(done.status().orElseThrow().getWritten()).isZero();
    assertThat(done.status().orElseThrow().getPreExisting()).isEqualTo(2);
  }

  @Test
  void aTupleItWroteAndSomeoneDeletedIsWrittenAgainWithAWarning() {
    SimulatedStore s = new SimulatedStore();
    FGATuples t = synced(s, 3);
    TupleKey gone = key("org:acme", "admin", "user:u1");
    s.tuples.remove(gone);
    t.getStatus().setVerifiedAt(Timestamps.format(NOW.minus(Duration.ofHours(1))));
    s.calls.clear();

    TuplesPlan.Done done = s.drive(observed(t));

    assertThat(s.calls(TuplesStep.Create.class))
        .singleElement()
        .satisfies(c -> assertThat(c.ignoreDuplicates()).isTrue());
    assertThat(s.tuples).containsKey(gone);
    assertThat(events(done))
        .anyMatch(e -> e.startsWith("TuplesRestored: 1 tuples") && e.contains(gone.text()));
    assertThat(done.events())
        .filteredOn(e -> e.reason() == TuplesReason.TuplesRestored)
        .allMatch(e -> e.reason().warning());
  }

  @Test
  void aTupleAnotherFGATuplesDeclaresIsHeldNotDeleted() {
    SimulatedStore s = new SimulatedStore();
    FGATuples t = synced(s, 2);
    TupleKey shared = key("org:acme", "admin", "user:u1");
    t.getSpec().setTuples(specs(1));

    TuplesPlan.Done held = s.drive(observed(t, 100, Map.of(shared, "other")));

    assertThat(s.tuples).containsKey(shared);
    assertThat(s.owned()).contains(shared);
    assertThat(held.status().orElseThrow().getHeld()).isEqualTo(1);

    // held and unchanged: the next look asks nothing (its record lists written + held)
    t.setStatus(held.status().orElseThrow());
    s.calls.clear();
    s.drive(observed(t, 100, Map.of(shared, "other")));
    assertThat(s.calls).isEmpty();

    t.getStatus().setVerifiedAt(Timestamps.format(NOW.minus(Duration.ofHours(1))));
    s.drive(observed(t)); // the other one let it go

    assertThat(s.tuples).doesNotContainKey(shared);
    assertThat(s.owned()).doesNotContain(shared);
  }

  @Test
  void aTupleTheModelDoesNotAllowStopsEveryWriteAndIsNamed() {
    SimulatedStore s = new SimulatedStore();
    List<FGATuples.TupleSpec> specs = new ArrayList<>(specs(2));
    specs.add(new FGATuples.TupleSpec("user:carl", "owner", "org:acme"));
    specs.add(new FGATuples.TupleSpec("group:g", "admin", "org:acme"));

    TuplesPlan.Done done = s.drive(observed(resource(specs)));

    assertThat(s.calls(TuplesStep.Create.class)).isEmpty();
    assertThat(s.calls(TuplesStep.WriteRecord.class)).isEmpty();
    assertThat(condition(done, "Ready").getReason()).isEqualTo("InvalidTuples");
    assertThat(done.status().orElseThrow().getInvalid())
        .containsExactly(
            "Invalid tuple 'org:acme#admin@group:g'. Reason: type 'group' is not an allowed type"
                + " restriction for 'org#admin'",
            "Invalid tuple 'org:acme#owner@user:carl'. Reason: relation 'org#owner' not found");
    assertThat(events(done))
        .singleElement()
        .asString()
        .startsWith("InvalidTuples: 2 declared tuples");
  }

  @Test
  void conditionsAreCheckedAndTheirContextNeverNamed() throws IOException {
    FGATuples.TupleSpec withContext = new FGATuples.TupleSpec("user:anne", "viewer", "org:acme");
    FGATuples.ConditionSpec c = new FGATuples.ConditionSpec();
    c.setName("in_hours");
    c.setContext(JSON.readTree("{\"hour\": 10, \"secret\": \"s3cr3t\"}"));
    withContext.setCondition(c);
    FGATuples.TupleSpec undefined = new FGATuples.TupleSpec("user:bob", "viewer", "org:acme");
    FGATuples.ConditionSpec nope = new FGATuples.ConditionSpec();
    nope.setName("nope");
    nope.setContext(JSON.readTree("{\"secret\": \"s3cr3t\"}"));
    undefined.setCondition(nope);
    FGATuples.TupleSpec missing = new FGATuples.TupleSpec("user:carl", "admin", "org:acme");
    missing.setCondition(c);

    TuplesPlan.Done done =
        new SimulatedStore().drive(observed(resource(List.of(withContext, undefined, missing))));

    assertThat(done.status().orElseThrow().getInvalid())
        .containsExactly(
            "Invalid tuple 'org:acme#admin@user:carl (condition in_hours)'. Reason: invalid"
                + " condition for type restriction",
            "Invalid tuple 'org:acme#viewer@user:bob (condition nope)'. Reason: undefined condition");
    assertThat(events(done)).noneMatch(e -> e.contains("s3cr3t"));
    assertThat(condition(done, "Ready").getMessage()).doesNotContain("s3cr3t");
  }

  @Test
  void aFailedBatchRecordsWhatWasWrittenAndTheNextLookGoesOnFromThere() {
    SimulatedStore s = new SimulatedStore();
    int[] creates = {0};
    s.instead =
        step ->
            step instanceof TuplesStep.Create && ++creates[0] == 2
                ? new TuplesAnswer.Failed(
                    CallFailure.of(new IOException("HTTP 500 internal_error")))
                : null;
    FGATuples t = resource(specs(250));
    TuplesPlan.Done failed = s.drive(observed(t));

    assertThat(condition(failed, "Ready").getReason()).isEqualTo("OpenFGARequestFailed");
    assertThat(failed.status().orElseThrow().getWritten()).isEqualTo(100);
    assertThat(s.owned()).hasSize(100);
    assertThat(((Record.Own) s.record).pending())
        .as("not sent yet, or sent unanswered")
        .hasSize(150);
    assertThat(condition(failed, "InSync").getReason()).isEqualTo("TuplesMissing");

    s.instead = step -> null;
    t.setStatus(failed.status().orElseThrow());
    s.calls.clear();
    TuplesPlan.Done done = s.drive(observed(t));

    assertThat(s.calls(TuplesStep.Create.class))
        .extracting(c -> c.tuples().size())
        .containsExactly(100, 50);
    assertThat(done.status().orElseThrow().getWritten()).isEqualTo(250);
    assertThat(condition(done, "InSync").getStatus()).isEqualTo("True");
  }

  @Test
  void aCreateWhoseAnswerWasLostIsFoundWrittenAndTakenForItsOwn() {
    SimulatedStore s = new SimulatedStore();
    s.instead =
        step -> {
          if (step instanceof TuplesStep.Create c && s.calls(TuplesStep.Create.class).size() == 2) {
            // written by OpenFGA, the answer lost on the way back
            c.tuples().forEach(t -> s.tuples.put(t.key(), new Tuple(t.key(), null, NOW)));
            return new TuplesAnswer.Failed(CallFailure.of(new IOException("request timed out")));
          }
          return null;
        };
    FGATuples t = resource(specs(250));
    t.setStatus(s.drive(observed(t)).status().orElseThrow());
    s.instead = step -> null;
    s.calls.clear();

    TuplesPlan.Done done = s.drive(observed(t));

    assertThat(s.calls(TuplesStep.Create.class))
        .extracting(c -> c.tuples().size())
        .containsExactly(50);
    assertThat(s.owned()).hasSize(250);
    assertThat(done.status().orElseThrow().getWritten()).isEqualTo(250);
    assertThat(done.status().orElseThrow().getPreExisting()).isZero();
  }

  @Test
  void aWriteOverTheServersLimitIsHalvedWithAWarning() {
    SimulatedStore s = new SimulatedStore();
    s.instead =
        step ->
            step instanceof TuplesStep.Create c && c.tuples().size() > 50
                ? new TuplesAnswer.OverLimit(c.tuples().size())
                : null;
    TuplesPlan.Done done = s.drive(observed(resource(specs(120))));

    assertThat(s.calls(TuplesStep.Create.class))
        .extracting(c -> c.tuples().size())
        .containsExactly(100, 50, 50, 20);
    assertThat(s.owned()).hasSize(120);
    assertThat(events(done)).anyMatch(e -> e.startsWith("BatchSizeReduced"));
  }

  @Test
  void anOwnedTupleWithAnotherConditionIsDeletedThenWritten() throws IOException {
    SimulatedStore s = new SimulatedStore();
    FGATuples.TupleSpec spec = new FGATuples.TupleSpec("user:anne", "viewer", "org:acme");
    FGATuples t = resource(List.of(spec));
    t.setStatus(s.drive(observed(t)).status().orElseThrow());
    FGATuples.ConditionSpec c = new FGATuples.ConditionSpec();
    c.setName("in_hours");
    c.setContext(JSON.readTree("{\"hour\": 10}"));
    spec.setCondition(c);
    s.calls.clear();

    s.drive(observed(t));

    assertThat(s.calls)
        .extracting(x -> x.getClass().getSimpleName())
        .containsSubsequence("Delete", "WriteRecord", "Create", "WriteRecord");
    Tuple written = s.tuples.get(key("org:acme", "viewer", "user:anne"));
    assertThat(written.condition().name()).isEqualTo("in_hours");
  }

  @Test
  void someoneElsesTupleWithAnotherConditionIsLeftAndReported() {
    SimulatedStore s = new SimulatedStore();
    TupleKey k = key("org:acme", "viewer", "user:anne");
    s.tuples.put(k, new Tuple(k, new TupleCondition("in_hours", null), NOW.minusSeconds(7200)));
    TuplesPlan.Done done =
        s.drive(
            observed(
                resource(List.of(new FGATuples.TupleSpec("user:anne", "viewer", "org:acme")))));

    assertThat(s.calls(TuplesStep.Delete.class)).isEmpty();
    assertThat(condition(done, "InSync").getReason()).isEqualTo("ConditionConflict");
    assertThat(s.tuples.get(k).condition().name()).isEqualTo("in_hours");
  }

  @Test
  void aRecordOfAnotherStoreIsNotTrusted() {
    SimulatedStore s = new SimulatedStore();
    TupleKey old = key("org:acme", "admin", "user:u9");
    s.tuples.put(old, new Tuple(old, null, NOW.minusSeconds(7200)));
    s.record =
        new Record.Own(
            "01OTHERSTORE00000000000000",
            new TreeSet<>(Set.of(old)),
            new TreeSet<>(),
            Optional.empty(),
            "uid-1",
            "rv0");

    TuplesPlan.Done done = s.drive(observed(resource(specs(1))));

    assertThat(s.tuples).containsKey(old);
    assertThat(((Record.Own) s.record).storeId()).isEqualTo(STORE);
    assertThat(events(done)).anyMatch(e -> e.startsWith("TuplesRecordForAnotherStore"));
  }

  @Test
  void aRecordOfAnEarlierFGATuplesOfTheNameIsAdopted() {
    SimulatedStore s = new SimulatedStore();
    FGATuples first = resource(specs(2));
    s.drive(observed(first));
    FGATuples recreated = resource(specs(1));
    recreated.getMetadata().setUid("uid-2");

    TuplesPlan.Done done = s.drive(observed(recreated));

    assertThat(s.tuples).containsOnlyKeys(key("org:acme", "admin", "user:u0"));
    assertThat(((Record.Own) s.record).uid()).isEqualTo("uid-2");
    assertThat(events(done)).anyMatch(e -> e.startsWith("TuplesRecordAdopted"));
  }

  @Test
  void theBlockingChecksComeBeforeAnyCall() {
    FGATuples t = resource(specs(1));
    TuplesObservation o = observed(t);
    TuplesPlan noStore =
        decide(
            t,
            NOW,
            o.desired(),
            Optional.empty(),
            false,
            Optional.empty(),
            new Record.Absent(),
            false);
    assertThat(((TuplesPlan.Done) noStore).status().orElseThrow().getConditions())
        .singleElement()
        .satisfies(c -> assertThat(c.getReason()).isEqualTo("StoreNotReady"));

    TuplesPlan foreign =
        decide(
            t,
            NOW,
            o.desired(),
            o.store(),
            true,
            Optional.empty(),
            new Record.Foreign("ConfigMap team-a/base-tuples-record exists"),
            false);
    assertThat(((TuplesPlan.Done) foreign).status().orElseThrow().getConditions())
        .singleElement()
        .satisfies(c -> assertThat(c.getReason()).isEqualTo("RecordConflict"));

    TuplesPlan unconfirmed =
        decide(t, NOW, o.desired(), o.store(), false, Optional.empty(), new Record.Absent(), false);
    assertThat(((TuplesPlan.Done) unconfirmed).status()).isEmpty();

    TuplesPlan tooMany =
        decide(
            t,
            NOW,
            DeclaredTuples.fromSpec(specs(TuplesPlanner.MAX_TUPLES + 1)),
            o.store(),
            true,
            Optional.empty(),
            new Record.Absent(),
            false);
    assertThat(((TuplesPlan.Done) tooMany).status().orElseThrow().getConditions())
        .singleElement()
        .satisfies(c -> assertThat(c.getReason()).isEqualTo("TooManyTuples"));
  }

  @Test
  void aModelRefWaitsForThePublishedModelAndWritesAgainstIt() {
    FGATuples t = resource(specs(1));
    t.getSpec().setModelRef(new FGAStore.NameRef("app"));
    FGAModel model = new FGAModel();
    model.setMetadata(new ObjectMetaBuilder().withNamespace("team-a").withName("app").build());
    model.setSpec(new FGAModel.Spec());
    model.getSpec().setStoreRef(new FGAStore.NameRef("payments"));
    TuplesObservation o = observed(t);
    TuplesObservation waiting =
        new TuplesObservation(
            t,
            NOW,
            o.desired(),
            o.store(),
            true,
            Optional.of(model),
            new Record.Absent(),
            Map.of(),
            100,
            false,
            List.of());
    TuplesPlan.Done wait = (TuplesPlan.Done) PLANNER.plan(waiting);
    assertThat(condition(wait, "Ready").getReason()).isEqualTo("WaitingForModel");
    assertThat(wait.events()).isEmpty();

    model.setStatus(new FGAModel.Status());
    model.getStatus().setStoreId(STORE);
    model.getStatus().setModelId(MODEL_ID);
    Conditions.set(model.getStatus(), Conditions.READY, true, "ModelReady", "ok", NOW);
    SimulatedStore s = new SimulatedStore();
    TuplesPlan.Done done = s.drive(waiting);

    assertThat(s.calls(TuplesStep.ReadModel.class))
        .singleElement()
        .satisfies(r -> assertThat(r.modelId()).contains(MODEL_ID));
    assertThat(s.calls(TuplesStep.Create.class)).allMatch(c -> c.modelId().equals(MODEL_ID));
    assertThat(done.status().orElseThrow().getModelId()).isEqualTo(MODEL_ID);

    // a new model id: looked at again at once, not after the recheck
    t.setStatus(done.status().orElseThrow());
    model.getStatus().setModelId("01HVMMBCMGZNT3SED4Z17ENEWM");
    assertThat(
            TuplesPlanner.unchanged(
                waiting,
                (Desired.Valid) o.desired(),
                STORE,
                Optional.of("01HVMMBCMGZNT3SED4Z17ENEWM")))
        .isFalse();
  }

  @Test
  void deletingWithRetainKeepsEverythingAndWithDeleteOnlyItsOwn() {
    SimulatedStore s = new SimulatedStore();
    TupleKey app = key("org:acme", "admin", "user:u1");
    s.tuples.put(app, new Tuple(app, null, NOW.minusSeconds(3600)));
    FGATuples t = resource(specs(3));
    t.setStatus(s.drive(observed(t)).status().orElseThrow());
    TuplesObservation deleting =
        new TuplesObservation(
            t,
            NOW,
            new Desired.Valid(new TreeMap<>(), ""),
            Optional.of(store()),
            true,
            Optional.empty(),
            s.record,
            Map.of(),
            100,
            true,
            List.of());
    s.calls.clear();

    TuplesPlan.Done retain = s.drive(deleting);
    assertThat(retain.removeFinalizer()).isTrue();
    assertThat(s.calls).isEmpty();
    assertThat(s.tuples).hasSize(3);

    t.getSpec().setDeletionPolicy(FGAStore.DeletionPolicy.Delete);
    TuplesPlan.Done delete = s.drive(deleting);

    assertThat(delete.removeFinalizer()).isTrue();
    assertThat(s.tuples).containsOnlyKeys(app);
    assertThat(s.calls.get(s.calls.size() - 1)).isInstanceOf(TuplesStep.GiveRecordAway.class);
  }

  /** An FGATuples of {@code n} tuples, written by {@code s}, with the status it wrote. */
  private static FGATuples synced(SimulatedStore s, int n) {
    FGATuples t = resource(specs(n));
    t.setStatus(s.drive(observed(t)).status().orElseThrow());
    s.calls.clear();
    return t;
  }

  /**
   * {@code t}, deleted with {@code Delete}, as the planner sees it with its record in {@code s}.
   */
  private static TuplesObservation deleting(
      FGATuples t, SimulatedStore s, Map<TupleKey, String> elsewhere) {
    t.getSpec().setDeletionPolicy(FGAStore.DeletionPolicy.Delete);
    return new TuplesObservation(
        t,
        NOW,
        new Desired.Valid(new TreeMap<>(), ""),
        Optional.of(store()),
        true,
        Optional.empty(),
        s.record,
        elsewhere,
        100,
        true,
        List.of());
  }

  @Test
  void deletingWithDeleteHandsWhatOthersStillDeclareToTheirRecords() {
    SimulatedStore s = new SimulatedStore();
    FGATuples t = synced(s, 4);
    TupleKey u1 = key("org:acme", "admin", "user:u1");
    TupleKey u2 = key("org:acme", "admin", "user:u2");
    TupleKey u3 = key("org:acme", "admin", "user:u3");

    TuplesPlan.Done done =
        s.drive(deleting(t, s, Map.of(u1, "b-team", u2, "a-team", u3, "a-team")));

    assertThat(done.removeFinalizer()).isTrue();
    assertThat(s.tuples).containsOnlyKeys(u1, u2, u3);
    assertThat(s.handed)
        .containsExactly(
            Map.entry("a-team", new TreeSet<>(Set.of(u2, u3))),
            Map.entry("b-team", new TreeSet<>(Set.of(u1))));
    // deletes, then the hand-overs, then the record goes
    assertThat(s.calls)
        .extracting(c -> c.getClass().getSimpleName())
        .containsExactly("ReadStore", "Delete", "HandOver", "HandOver", "GiveRecordAway");
    assertThat(events(done))
        .containsExactly(
            "TuplesWritten: deleted 1 tuples in store " + STORE + " (deletionPolicy Delete)",
            "TuplesHandedOver: 2 tuples this FGATuples created in store "
                + STORE
                + " are still declared by FGATuples a-team: they are now in its ownership record"
                + " a-team-tuples-record, and it deletes them once it no longer declares them",
            "TuplesHandedOver: 1 tuples this FGATuples created in store "
                + STORE
                + " are still declared by FGATuples b-team: they are now in its ownership record"
                + " b-team-tuples-record, and it deletes them once it no longer declares them");
  }

  @Test
  void aHolderThatCannotTakeThemOrCannotBeReadLeavesThemWithAWarning() {
    SimulatedStore s = new SimulatedStore();
    FGATuples t = synced(s, 3);
    TupleKey u0 = key("org:acme", "admin", "user:u0");
    TupleKey u1 = key("org:acme", "admin", "user:u1");
    s.instead =
        step ->
            step instanceof TuplesStep.HandOver h
                ? new TuplesAnswer.HandOverRefused(h.holder(), h.keys(), "it is not a record")
                : null;

    TuplesPlan.Done done = s.drive(deleting(t, s, Map.of(u0, "", u1, "b-team")));

    assertThat(done.removeFinalizer()).isTrue();
    assertThat(s.tuples).containsOnlyKeys(u0, u1);
    assertThat(events(done))
        .containsExactly(
            "TuplesWritten: deleted 1 tuples in store " + STORE + " (deletionPolicy Delete)",
            "TuplesNotDeleted: 1 tuples this FGATuples created are left in store "
                + STORE
                + ": FGATuples b-team still declares them, and its ownership record cannot take"
                + " them (it is not a record)",
            "TuplesNotDeleted: 1 tuples this FGATuples created are left in store "
                + STORE
                + ": another FGATuples of the store could not be read, and may declare them");
  }

  @Test
  void aHolderThatIsGoingIsLookedAtAgainThenGivenUpAfterTenMinutes() {
    SimulatedStore s = new SimulatedStore();
    FGATuples t = synced(s, 3);
    TupleKey u1 = key("org:acme", "admin", "user:u1");
    s.instead =
        step ->
            step instanceof TuplesStep.HandOver h
                ? new TuplesAnswer.HandOverLater(h.holder(), h.keys(), "it is being deleted")
                : null;

    TuplesPlan.Done later = s.drive(deleting(t, s, Map.of(u1, "b-team")));

    assertThat(later.removeFinalizer()).isFalse();
    assertThat(later.again()).isEqualTo(TuplesPlanner.WAIT);
    assertThat(s.calls(TuplesStep.GiveRecordAway.class)).isEmpty();
    // what this pass deleted is told now: the next one finds them gone
    assertThat(events(later))
        .containsExactly(
            "TuplesWritten: deleted 2 tuples in store " + STORE + " (deletionPolicy Delete)");

    // still going ten minutes after the deletion: the tuple is left, with a Warning
    t.getMetadata().setDeletionTimestamp(Timestamps.format(NOW.minus(TuplesPlanner.GIVE_UP)));
    s.calls.clear();
    TuplesPlan.Done gaveUp = s.drive(deleting(t, s, Map.of(u1, "b-team")));
    assertThat(gaveUp.removeFinalizer()).isTrue();
    assertThat(s.tuples).containsOnlyKeys(u1);
    assertThat(events(gaveUp))
        .containsExactly(
            "TuplesNotDeleted: 1 tuples this FGATuples created are left in store "
                + STORE
                + ": FGATuples b-team still declares them, and they could not be handed to it for"
                + " 10 minutes (it is being deleted)");

    // or looked at again in time, without b-team among the declarers: deleted here
    t.getMetadata().setDeletionTimestamp(null);
    s.instead = step -> null;
    s.tuples.put(u1, new Tuple(u1, null, NOW));
    TuplesPlan.Done done = s.drive(deleting(t, s, Map.of()));
    assertThat(done.removeFinalizer()).isTrue();
    assertThat(s.tuples).isEmpty();
    assertThat(s.handed).isEmpty();
  }

  @Test
  void aRecordOfAnotherStoreIsGivenAwayOnceAndNothingIsDeleted() {
    SimulatedStore s = new SimulatedStore();
    FGATuples t = synced(s, 2);
    Record.Own own = (Record.Own) s.record;
    s.record =
        new Record.Own(
            "01HVMMBCMGZNT3SED4Z17EOTHR",
            own.owned(),
            own.pending(),
            own.pendingSince(),
            own.uid(),
            own.resourceVersion());

    TuplesPlan.Done done = s.drive(deleting(t, s, Map.of()));

    assertThat(done.removeFinalizer()).isTrue();
    assertThat(s.calls)
        .extracting(c -> c.getClass().getSimpleName())
        .containsExactly("GiveRecordAway");
    assertThat(s.tuples).hasSize(2);
  }

  @Test
  void aRecordHandedMoreTuplesThanTheStatusCountsIsReadAgain() {
    SimulatedStore s = new SimulatedStore();
    TupleKey shared = key("org:acme", "admin", "user:u2");
    s.tuples.put(shared, new Tuple(shared, null, NOW.minusSeconds(3600)));
    FGATuples t = resource(specs(3));
    t.setStatus(s.drive(observed(t)).status().orElseThrow());
    assertThat(t.getStatus().getPreExisting()).isEqualTo(1);
    Record.Own own = (Record.Own) s.record;
    SortedSet<TupleKey> owned = new TreeSet<>(own.owned());
    owned.add(shared); // another FGATuples, deleted, handed it over
    s.record =
        new Record.Own(
            STORE, owned, own.pending(), own.pendingSince(), own.uid(), own.resourceVersion());
    s.calls.clear();

    TuplesPlan.Done again = s.drive(observed(t));

    assertThat(s.calls).extracting(c -> c.getClass().getSimpleName()).contains("ReadStore");
    assertThat(again.status().orElseThrow().getWritten()).isEqualTo(3);
    assertThat(again.status().orElseThrow().getPreExisting()).isZero();

    // and it is its own now: dropped from the set, it is deleted
    t.setStatus(again.status().orElseThrow());
    t.getSpec().setTuples(specs(2));
    s.drive(observed(t));
    assertThat(s.tuples).doesNotContainKey(shared);
  }

  @Test
  void deletingWithDeleteWaitsForTheStoreThenGivesUpWithAWarning() {
    FGATuples t = resource(specs(1));
    t.getSpec().setDeletionPolicy(FGAStore.DeletionPolicy.Delete);
    t.getMetadata().setDeletionTimestamp(Timestamps.format(NOW.minusSeconds(60)));
    FGAStore notReady = store();
    notReady.getStatus().getConditions().clear();
    Record own =
        new Record.Own(
            STORE,
            new TreeSet<>(Set.of(key("org:acme", "admin", "user:u0"))),
            new TreeSet<>(),
            Optional.empty(),
            "uid-1",
            "rv1");
    TuplesPlan.Done wait =
        decide(
            t,
            NOW,
            new Desired.Valid(new TreeMap<>(), ""),
            Optional.of(notReady),
            true,
            Optional.empty(),
            own,
            true);
    assertThat(wait.removeFinalizer()).isFalse();

    TuplesPlan.Done gaveUp =
        decide(
            t,
            NOW.plus(TuplesPlanner.GIVE_UP),
            new Desired.Valid(new TreeMap<>(), ""),
            Optional.of(notReady),
            true,
            Optional.empty(),
            own,
            true);
    assertThat(gaveUp.removeFinalizer()).isTrue();
    assertThat(events(gaveUp))
        .singleElement()
        .asString()
        .startsWith("TuplesNotDeleted: the 1 tuples");
  }

  @Test
  void badSourcesAreNamedByPlace() {
    assertThat(
            DeclaredTuples.fromText(
                "- user: user:a\n  relation: admin\n", false, "ConfigMap a/b key t.yaml"))
        .isEqualTo(
            new Desired.Invalid(
                TuplesReason.InvalidSource, "ConfigMap a/b key t.yaml[0]: has no object"));
    assertThat(
            DeclaredTuples.fromText(
                "tuples:\n- {user: 'user:a', relation: admin, object: 'org:x'}\n"
                    + "- {user: 'user:a', relation: admin, object: 'org:x'}\n",
                false,
                "w"))
        .isEqualTo(
            new Desired.Invalid(
                TuplesReason.InvalidSource, "w[1]: org:x#admin@user:a is declared twice"));
    Desired broken = DeclaredTuples.fromText("[{\"user\": \"s3cr3t", true, "w");
    assertThat(broken).isInstanceOf(Desired.Invalid.class);
    assertThat(((Desired.Invalid) broken).message())
        .startsWith("w does not read as JSON at line 1")
        .doesNotContain("s3cr3t");
    assertThat(
            DeclaredTuples.fromText(
                "[{\"user\": \"carl\", \"relation\": \"admin\", \"object\": \"org:x\"}]",
                true,
                "w"))
        .isEqualTo(
            new Desired.Invalid(
                TuplesReason.InvalidSource,
                "w[0]: user carl is not type:id, type:id#relation or type:*"));
    Desired ok =
        DeclaredTuples.fromText(
            "- {user: 'group:g#member', relation: admin, object: 'org:x'}\n"
                + "- {user: 'user:*', relation: viewer, object: 'org:x', condition: {name: in_hours, context: {hour: 3}}}\n",
            false,
            "w");
    assertThat(((Desired.Valid) ok).tuples()).hasSize(2);
  }
}
