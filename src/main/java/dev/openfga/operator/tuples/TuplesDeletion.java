package dev.openfga.operator.tuples;

import static dev.openfga.operator.tuples.TuplesDraft.call;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.tuples.TuplesObservation.Record;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * An FGATuples being deleted. {@code Retain} (the default) keeps its tuples and its record (an
 * FGATuples of the same name adopts it). {@code Delete} deletes the tuples it created that are
 * still there and that no other FGATuples of the store declares, adds those another one declares to
 * that one's record (it deletes them once it no longer declares them), then hands its own record to
 * the garbage collector. A store that cannot be reached for {@link TuplesPlanner#GIVE_UP} is given
 * up with a Warning: its tuples stay. Part of {@link TuplesPlanner}; pure.
 */
final class TuplesDeletion {
  private TuplesDeletion() {}

  static TuplesPlan plan(TuplesDraft d, Servers servers) {
    TuplesObservation o = d.o;
    FGATuples t = o.tuples();
    if (t.getSpec().getDeletionPolicy() != FGAStore.DeletionPolicy.Delete) {
      return d.release("deletionPolicy Retain: tuples and record kept");
    }
    if (o.record() instanceof Record.Foreign foreign) {
      d.emit(
          TuplesReason.TuplesNotDeleted,
          "no tuple deleted: the ownership record cannot be used (" + foreign.why() + ")",
          "not-deleted/" + t.getMetadata().getUid());
      return d.release(foreign.why());
    }
    if (!(o.record() instanceof Record.Own own)) {
      return d.release("no ownership record: no tuple to delete");
    }
    Optional<String> notReady = TuplesPlanner.storeNotReady(o, servers);
    if (notReady.isPresent()) {
      return giveUpOrWait(d, own, notReady.get());
    }
    String storeId = o.store().orElseThrow().getStatus().getStoreId();
    if (!own.storeId().equals(storeId)) {
      return o.answer(TuplesAnswer.RecordGivenAway.class).isPresent()
          ? d.release("record of another store handed to the garbage collector")
          : call(new TuplesStep.GiveRecordAway());
    }
    if (!o.confirmed()) {
      return giveUpOrWait(d, own, "FGAStore not confirmed for its store");
    }
    Optional<TuplesAnswer.Failed> failed = o.answer(TuplesAnswer.Failed.class);
    if (failed.isPresent()) {
      return giveUpOrWait(d, own, failed.get().failure().message());
    }
    Ledger l = Ledger.of(o, storeId);
    if (o.answer(TuplesAnswer.StoreRead.class).isEmpty()) {
      SortedSet<TupleKey> keys = new TreeSet<>(l.owned);
      keys.addAll(l.pending);
      return call(new TuplesStep.ReadStore(storeId, keys));
    }
    List<TupleKey> deletes = new ArrayList<>();
    for (TupleKey k : l.owned) {
      if (l.present.containsKey(k) && !o.declaredElsewhere().containsKey(k)) {
        deletes.add(k);
      }
    }
    if (!deletes.isEmpty()) {
      return TuplesWrites.batches(
          deletes, TuplesWrites.perWrite(o), b -> new TuplesStep.Delete(storeId, null, b));
    }
    Held held = held(o, l);
    List<TuplesAnswer.HandOverLater> later = o.all(TuplesAnswer.HandOverLater.class);
    o.all(TuplesAnswer.HandedOver.class).forEach(h -> held.byHolder.remove(h.holder()));
    o.all(TuplesAnswer.HandOverRefused.class).forEach(r -> held.byHolder.remove(r.holder()));
    later.forEach(h -> held.byHolder.remove(h.holder()));
    if (!held.byHolder.isEmpty()) {
      var first = held.byHolder.entrySet().iterator().next();
      return call(new TuplesStep.HandOver(storeId, first.getKey(), first.getValue()));
    }
    String uid = t.getMetadata().getUid();
    boolean givenUp = !d.o.now().isBefore(deletedAt(d).plus(TuplesPlanner.GIVE_UP));
    if (!later.isEmpty() && !givenUp) {
      deleted(d, l, storeId);
      TuplesAnswer.HandOverLater first = later.get(0);
      return d.waitOnly(
          TuplesPlanner.WAIT,
          "handing tuples to FGATuples " + first.holder() + " waits: " + first.why());
    }
    if (o.answer(TuplesAnswer.RecordGivenAway.class).isEmpty()) {
      return call(new TuplesStep.GiveRecordAway());
    }
    deleted(d, l, storeId);
    for (TuplesAnswer.HandedOver h : o.all(TuplesAnswer.HandedOver.class)) {
      d.emit(
          TuplesReason.TuplesHandedOver,
          h.keys().size()
              + " tuples this FGATuples created in store "
              + storeId
              + " are still declared by FGATuples "
              + h.holder()
              + ": they are now in its ownership record "
              + Names.tuplesRecord(h.holder())
              + ", and it deletes them once it no longer declares them",
          "handed/" + uid + "/" + h.holder());
    }
    for (TuplesAnswer.HandOverRefused r : o.all(TuplesAnswer.HandOverRefused.class)) {
      left(
          d,
          r.keys().size(),
          storeId,
          "FGATuples "
              + r.holder()
              + " still declares them, and its ownership record cannot take them ("
              + r.why()
              + ")",
          "not-handed/" + uid + "/" + r.holder());
    }
    for (TuplesAnswer.HandOverLater h : later) {
      left(
          d,
          h.keys().size(),
          storeId,
          "FGATuples "
              + h.holder()
              + " still declares them, and they could not be handed to it for "
              + TuplesPlanner.GIVE_UP.toMinutes()
              + " minutes ("
              + h.why()
              + ")",
          "not-handed/" + uid + "/" + h.holder());
    }
    if (held.unknown > 0) {
      left(
          d,
          held.unknown,
          storeId,
          "another FGATuples of the store could not be read, and may declare them",
          "unknown-holder/" + uid);
    }
    return d.release("tuples deleted; record handed to the garbage collector");
  }

  /** The Event of the tuples this pass deleted, if any. */
  private static void deleted(TuplesDraft d, Ledger l, String storeId) {
    if (!l.deleted.isEmpty()) {
      d.emit(
          TuplesReason.TuplesWritten,
          "deleted "
              + l.deleted.size()
              + " tuples in store "
              + storeId
              + " (deletionPolicy Delete)",
          "deleted/" + d.o.tuples().getMetadata().getUid() + "/" + d.o.now());
    }
  }

  /** When the FGATuples was deleted (now, if it does not say). */
  private static Instant deletedAt(TuplesDraft d) {
    return Timestamps.parse(d.o.tuples().getMetadata().getDeletionTimestamp()).orElse(d.o.now());
  }

  /** A Warning: {@code n} tuples it created stay in the store, and why. */
  private static void left(TuplesDraft d, int n, String storeId, String why, String key) {
    d.emit(
        TuplesReason.TuplesNotDeleted,
        n + " tuples this FGATuples created are left in store " + storeId + ": " + why,
        key);
  }

  /**
   * The tuples this FGATuples created that are still there and that other FGATuples declare: by the
   * first of them that declares each; how many by one that could not be read.
   */
  private record Held(SortedMap<String, SortedSet<TupleKey>> byHolder, int unknown) {}

  private static Held held(TuplesObservation o, Ledger l) {
    SortedMap<String, SortedSet<TupleKey>> byHolder = new TreeMap<>();
    int unknown = 0;
    for (TupleKey k : l.owned) {
      String holder = o.declaredElsewhere().get(k);
      if (holder == null || !l.present.containsKey(k)) {
        continue;
      }
      if (holder.isEmpty()) {
        unknown++;
      } else {
        byHolder.computeIfAbsent(holder, h -> new TreeSet<>()).add(k);
      }
    }
    return new Held(byHolder, unknown);
  }

  /**
   * Waits for the store; after {@link TuplesPlanner#GIVE_UP}, lets the tuples be, with a Warning.
   */
  private static TuplesPlan giveUpOrWait(TuplesDraft d, Record.Own own, String why) {
    Instant since = deletedAt(d);
    boolean storeGone = d.o.store().isEmpty();
    if (!storeGone && d.o.now().isBefore(since.plus(TuplesPlanner.GIVE_UP))) {
      return d.waitOnly(TuplesPlanner.WAIT, "deleting tuples waits: " + why);
    }
    d.emit(
        TuplesReason.TuplesNotDeleted,
        "the "
            + own.owned().size()
            + " tuples this FGATuples wrote are left in store "
            + own.storeId()
            + " ("
            + why
            + "); the ownership record "
            + Names.tuplesRecord(d.o.tuples().getMetadata().getName())
            + " is kept",
        "not-deleted/" + d.o.tuples().getMetadata().getUid());
    return d.release(why);
  }
}
