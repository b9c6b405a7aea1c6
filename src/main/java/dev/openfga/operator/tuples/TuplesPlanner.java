package dev.openfga.operator.tuples;

import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleCondition;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.stores.StoreReadiness;
import dev.openfga.operator.tuples.TuplesObservation.Desired;
import dev.openfga.operator.tuples.TuplesObservation.Record;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * What to do about an {@link FGATuples}: pure, a function of a {@link TuplesObservation}, so every
 * rule is tested directly ({@code TuplesPlannerTest}). In order: the tuples must read, its FGAStore
 * must be ready, listed and confirmed, the FGAModel of {@code spec.modelRef} must have a model, the
 * record must be its own; an unchanged set looked at less than {@link #RECHECK} ago is left alone
 * (no request at all); else the model is read and every tuple checked against it ({@code
 * InvalidTuples}: nothing written), the store is read for the declared and owned tuples, the tuples
 * it owns and no longer declares are deleted (not those another FGATuples of the store declares),
 * the record names the tuples about to be created, they are created in batches (a duplicate is
 * read: someone else's, never its own), the record is written, then the status once.
 */
public final class TuplesPlanner {
  /** How often an unchanged set is read again (a tuple deleted out of band is found then). */
  static final Duration RECHECK = Duration.ofMinutes(5);

  /** How soon a set that waits (its store, its model, the API) is looked at again. */
  static final Duration WAIT = Duration.ofSeconds(10);

  /** How often tuples from {@code spec.tuplesFrom} (a ConfigMap not watched) are read again. */
  static final Duration SOURCE_RECHECK = Duration.ofSeconds(30);

  /** How soon a record being garbage-collected is looked at again. */
  static final Duration COLLECTING_AGAIN = Duration.ofSeconds(2);

  /** The most tuples one FGATuples may declare (its record must stay under 1 MiB). */
  public static final int MAX_TUPLES = 20_000;

  /** How long a deleted FGATuples waits for its store before it lets its tuples be. */
  static final Duration GIVE_UP = Duration.ofMinutes(10);

  /** How many tuples a message names at most. */
  static final int NAMED = 5;

  private final Servers servers;

  public TuplesPlanner(Servers servers) {
    this.servers = servers;
  }

  /** The next call to make for the FGATuples of {@code o}, or the end of its reconcile. */
  public TuplesPlan plan(TuplesObservation o) {
    TuplesDraft d =
        new TuplesDraft(o, o.tuples().getSpec().getTuplesFrom() != null ? SOURCE_RECHECK : RECHECK);
    if (o.deleting()) {
      return TuplesDeletion.plan(d, servers);
    }
    if (o.desired() instanceof Desired.Invalid invalid) {
      return d.blocked(invalid.reason(), invalid.message(), d.again);
    }
    Desired.Valid desired = (Desired.Valid) o.desired();
    if (desired.tuples().size() > MAX_TUPLES) {
      return d.blocked(
          TuplesReason.TooManyTuples,
          desired.tuples().size()
              + " tuples declared; one FGATuples holds at most "
              + MAX_TUPLES
              + ": split them over several",
          d.again);
    }
    Optional<String> notReady = storeNotReady(o, servers);
    if (notReady.isPresent()) {
      return d.blocked(TuplesReason.StoreNotReady, notReady.get(), WAIT);
    }
    String ns = o.tuples().getMetadata().getNamespace();
    FGAStore store = o.store().orElseThrow();
    String storeId = store.getStatus().getStoreId();
    if (!o.confirmed()) {
      return d.waitOnly(
          OpenFgaCallLimit.BUSY_AGAIN,
          "FGAStore " + ns + "/" + store.getMetadata().getName() + " not confirmed yet");
    }
    Optional<String> pinned = Optional.empty();
    if (o.tuples().getSpec().getModelRef() != null) {
      Optional<String> waiting = modelNotReady(o);
      if (waiting.isPresent()) {
        return d.blocked(TuplesReason.WaitingForModel, waiting.get(), WAIT);
      }
      pinned = Optional.of(o.model().orElseThrow().getStatus().getModelId());
    }
    if (o.record() instanceof Record.Collecting) {
      return d.waitOnly(
          COLLECTING_AGAIN,
          "the ownership record of an earlier FGATuples of this name is being deleted");
    }
    if (o.record() instanceof Record.Foreign foreign) {
      return d.blocked(TuplesReason.RecordConflict, foreign.why(), d.again);
    }
    if (unchanged(o, desired, storeId, pinned)) {
      return d.waitOnly(untilRecheck(o), null);
    }
    return TuplesWrites.plan(d, desired, storeId, pinned);
  }

  /**
   * Whether the set, its store and its model are those of the last look, which is recent, and the
   * record holds no tuple about to be created: nothing to ask OpenFGA.
   */
  static boolean unchanged(
      TuplesObservation o, Desired.Valid desired, String storeId, Optional<String> pinned) {
    FGATuples.Status s = o.tuples().getStatus();
    if (s == null
        || !desired.hash().equals(s.getDeclaredHash())
        || !storeId.equals(s.getStoreId())
        || s.getVerifiedAt() == null
        || !java.util.Objects.equals(
            o.tuples().getMetadata().getGeneration(), s.getObservedGeneration())
        || !Conditions.isTrue(s.getConditions(), Conditions.READY)
        || pinned.isPresent() && !pinned.get().equals(s.getModelId())
        || !recordSettled(o, s, storeId)) {
      return false;
    }
    return o.now().isBefore(verifiedAt(s).plus(RECHECK));
  }

  /**
   * Whether the record is this FGATuples', for this store, with nothing pending, and lists as many
   * tuples as the status counts (another FGATuples, deleted, may have handed it some); or there is
   * none and the status says it wrote nothing (a set of tuples all written by someone else).
   */
  private static boolean recordSettled(TuplesObservation o, FGATuples.Status s, String storeId) {
    if (o.record() instanceof Record.Absent) {
      return Integer.valueOf(0).equals(s.getWritten()) && Integer.valueOf(0).equals(s.getHeld());
    }
    return o.record() instanceof Record.Own own
        && own.pending().isEmpty()
        && own.storeId().equals(storeId)
        && own.uid().equals(o.tuples().getMetadata().getUid())
        && s.getWritten() != null
        && s.getHeld() != null
        && own.owned().size() == s.getWritten() + s.getHeld();
  }

  private static Duration untilRecheck(TuplesObservation o) {
    Instant due = verifiedAt(o.tuples().getStatus()).plus(RECHECK);
    Duration left = Duration.between(o.now(), due);
    Duration source = o.tuples().getSpec().getTuplesFrom() != null ? SOURCE_RECHECK : RECHECK;
    return left.compareTo(source) < 0 ? left.plusSeconds(1) : source;
  }

  private static Instant verifiedAt(FGATuples.Status s) {
    try {
      return Instant.parse(s.getVerifiedAt());
    } catch (RuntimeException e) {
      return Instant.EPOCH;
    }
  }

  /** Why the FGAStore cannot be used yet, or empty. */
  static Optional<String> storeNotReady(TuplesObservation o, Servers servers) {
    String ns = o.tuples().getMetadata().getNamespace();
    FGAStore.NameRef ref = o.tuples().getSpec().getStoreRef();
    if (ref == null || ref.getName() == null) {
      return Optional.of("spec.storeRef.name must name an FGAStore");
    }
    Optional<String> notReady = StoreReadiness.notReady(ns, ref.getName(), o.store().orElse(null));
    return notReady.isPresent()
        ? notReady
        : StoreReadiness.notAllowed(ns, ref.getName(), o.store().get(), servers);
  }

  /** Why the FGAModel of spec.modelRef has no model to write against yet, or empty. */
  static Optional<String> modelNotReady(TuplesObservation o) {
    String ns = o.tuples().getMetadata().getNamespace();
    String name = o.tuples().getSpec().getModelRef().getName();
    if (name == null) {
      return Optional.of("spec.modelRef.name must name an FGAModel");
    }
    if (o.model().isEmpty()) {
      return Optional.of("FGAModel " + ns + "/" + name + " does not exist");
    }
    FGAModel model = o.model().get();
    FGAModel.Status s = model.getStatus();
    String storeName = o.tuples().getSpec().getStoreRef().getName();
    FGAStore.NameRef modelStore = model.getSpec() == null ? null : model.getSpec().getStoreRef();
    if (modelStore == null || !storeName.equals(modelStore.getName())) {
      return Optional.of(
          "FGAModel " + ns + "/" + name + " is for another FGAStore, not " + storeName);
    }
    if (s == null
        || s.getModelId() == null
        || !Conditions.isTrue(s.getConditions(), Conditions.READY)
        || !o.store().orElseThrow().getStatus().getStoreId().equals(s.getStoreId())) {
      return Optional.of("FGAModel " + ns + "/" + name + " has no published model yet");
    }
    return Optional.empty();
  }

  /** At most {@link #NAMED} tuples, by key, and how many more. */
  static String named(java.util.Collection<TupleKey> keys) {
    List<String> first = keys.stream().limit(NAMED).map(TupleKey::text).toList();
    String more = keys.size() > NAMED ? " and " + (keys.size() - NAMED) + " more" : "";
    return String.join(", ", first) + more;
  }

  /** A short hash of these tuples' keys: what tells one Event's news from another's. */
  static String hashOf(java.util.Collection<TupleKey> keys) {
    StringBuilder all = new StringBuilder();
    keys.forEach(k -> all.append(k.text()).append('\n'));
    return dev.openfga.operator.kube.Names.shortHash(all.toString());
  }

  /** The declared tuples that are in the store with another condition than declared. */
  static SortedSet<TupleKey> otherCondition(Desired.Valid desired, Ledger l) {
    SortedSet<TupleKey> keys = new TreeSet<>();
    for (Tuple t : desired.tuples().values()) {
      Tuple there = l.present.get(t.key());
      if (there != null && !TupleCondition.same(there.condition(), t.condition())) {
        keys.add(t.key());
      }
    }
    return keys;
  }

  static <T> List<T> first(List<T> items, int n) {
    return new ArrayList<>(items.subList(0, Math.min(n, items.size())));
  }
}
