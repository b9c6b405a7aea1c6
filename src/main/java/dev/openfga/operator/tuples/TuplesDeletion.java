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
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * An FGATuples being deleted. {@code Retain} (the default) keeps its tuples and its record (an
 * FGATuples of the same name adopts it). {@code Delete} deletes the tuples it created that are
 * still there and that no other FGATuples of the store declares, then hands the record to the
 * garbage collector. A store that cannot be reached for {@link TuplesPlanner#GIVE_UP} is given up
 * with a Warning: its tuples stay. Part of {@link TuplesPlanner}; pure.
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
      return call(new TuplesStep.GiveRecordAway());
    }
    if (!o.confirmed()) {
      return giveUpOrWait(d, own, "FGAStore not confirmed for its store");
    }
    Optional<TuplesAnswer.Failed> failed = o.answer(TuplesAnswer.Failed.class);
    if (failed.isPresent()) {
      return giveUpOrWait(d, own, failed.get().failure().message());
    }
    if (o.answer(TuplesAnswer.RecordGivenAway.class).isPresent()) {
      return d.release("tuples deleted; record handed to the garbage collector");
    }
    Ledger l = Ledger.of(o, storeId);
    if (o.answer(TuplesAnswer.StoreRead.class).isEmpty()) {
      SortedSet<TupleKey> keys = new TreeSet<>(l.owned);
      keys.addAll(l.pending);
      return call(new TuplesStep.ReadStore(storeId, keys));
    }
    List<TupleKey> deletes = new ArrayList<>();
    for (TupleKey k : l.owned) {
      if (l.present.containsKey(k) && !o.declaredElsewhere().contains(k)) {
        deletes.add(k);
      }
    }
    if (!deletes.isEmpty()) {
      return TuplesWrites.batches(
          deletes, TuplesWrites.perWrite(o), b -> new TuplesStep.Delete(storeId, null, b));
    }
    if (!l.deleted.isEmpty()) {
      d.emit(
          TuplesReason.TuplesWritten,
          "deleted "
              + l.deleted.size()
              + " tuples in store "
              + storeId
              + " (deletionPolicy Delete)",
          "deleted/" + o.now());
    }
    return call(new TuplesStep.GiveRecordAway());
  }

  /**
   * Waits for the store; after {@link TuplesPlanner#GIVE_UP}, lets the tuples be, with a Warning.
   */
  private static TuplesPlan giveUpOrWait(TuplesDraft d, Record.Own own, String why) {
    Instant since =
        Timestamps.parse(d.o.tuples().getMetadata().getDeletionTimestamp()).orElse(d.o.now());
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
