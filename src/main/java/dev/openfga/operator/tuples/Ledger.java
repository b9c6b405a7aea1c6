package dev.openfga.operator.tuples;

import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.tuples.TuplesObservation.Record;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * What one reconcile of an FGATuples knows so far about its store, from the record and the answers
 * of its calls, in order: which tuples are in the store (of those read), which are this FGATuples'
 * own, and what it created, restored and deleted. Pure.
 */
final class Ledger {
  /**
   * A tuple pending in the record counts as created by this FGATuples when OpenFGA wrote it at most
   * this long before the record says the creates began (the two clocks may differ), as FGAStore's
   * {@code status.creating}.
   */
  static final Duration CLOCK_SKEW = Duration.ofMinutes(5);

  /**
   * How long after the intent a pending tuple may have been written by this FGATuples: its creates
   * follow the intent at once (a pass of 20,000 tuples takes well under a minute), and a create
   * whose answer was lost is written within its timeout. A tuple written later (the application,
   * while this FGATuples was blocked) is not its own.
   */
  static final Duration PENDING_WINDOW = Duration.ofMinutes(10);

  final Map<TupleKey, Tuple> present = new HashMap<>();
  final SortedSet<TupleKey> read = new TreeSet<>();
  final SortedSet<TupleKey> owned = new TreeSet<>();
  final SortedSet<TupleKey> pending = new TreeSet<>();
  final List<TupleKey> created = new ArrayList<>();
  final List<TupleKey> restored = new ArrayList<>();
  final List<TupleKey> deleted = new ArrayList<>();

  /**
   * Declared tuples found already there and not its own: at the first read, or when a create was
   * refused for them (written since that read).
   */
  final SortedSet<TupleKey> foundPresent = new TreeSet<>();

  /** Since when the tuples pending in the record written last were about to be created. */
  Optional<Instant> pendingSince = Optional.empty();

  /** Whether a record written in this reconcile holds what the ledger says now. */
  boolean recorded;

  /** The record's resourceVersion to write on: the one read, or the last written. */
  Optional<String> resourceVersion = Optional.empty();

  /** Whether the record is another store's, or another FGATuples uid's (to be rewritten). */
  boolean recordStale;

  static Ledger of(TuplesObservation o, String storeId) {
    Ledger l = new Ledger();
    Optional<Instant> since = Optional.empty();
    if (o.record() instanceof Record.Own own) {
      l.resourceVersion = Optional.ofNullable(own.resourceVersion());
      if (own.storeId().equals(storeId)) {
        l.owned.addAll(own.owned());
        l.pending.addAll(own.pending());
        since = own.pendingSince();
      }
      l.recordStale =
          !own.storeId().equals(storeId)
              || !own.uid().equals(o.tuples().getMetadata().getUid())
              || !own.pending().isEmpty();
    }
    l.recorded = !l.recordStale;
    boolean first = true;
    for (TuplesAnswer a : o.answers()) {
      if (a instanceof TuplesAnswer.StoreRead r) {
        for (TupleKey k : r.asked()) {
          l.read.add(k);
          Tuple t = r.present().get(k);
          if (t == null) {
            l.present.remove(k);
          } else {
            l.present.put(k, t);
          }
        }
        if (first) {
          l.resolvePending(since);
          first = false;
          // declared and already there, not its own: the application's (or a person's)
          declared(o).keySet().stream()
              .filter(k -> l.present.containsKey(k) && !l.owned.contains(k))
              .forEach(l.foundPresent::add);
        } else {
          // a re-read after a duplicate: what is there now was not written by this FGATuples
          r.present().keySet().stream()
              .filter(k -> !l.owned.contains(k))
              .forEach(l.foundPresent::add);
        }
      } else if (a instanceof TuplesAnswer.Deleted d) {
        for (TupleKey k : d.keys()) {
          l.present.remove(k);
          l.owned.remove(k);
          l.deleted.add(k);
        }
        l.recorded = false;
      } else if (a instanceof TuplesAnswer.Created c) {
        Map<TupleKey, Tuple> declared = declared(o);
        for (TupleKey k : c.keys()) {
          l.present.put(k, declared.getOrDefault(k, Tuple.of(k, null)));
          l.owned.add(k);
          (c.restored() ? l.restored : l.created).add(k);
        }
        l.recorded = false;
      } else if (a instanceof TuplesAnswer.RecordWritten w) {
        l.resourceVersion = Optional.of(w.resourceVersion());
        l.pending.clear();
        l.pending.addAll(w.step().pending());
        l.pendingSince = w.step().pendingSince();
        l.recorded = w.step().pending().isEmpty();
        if (l.recorded) {
          // what the record now says (tuples found gone for good are no longer listed)
          l.owned.clear();
          l.owned.addAll(w.step().owned());
        }
      }
    }
    return l;
  }

  /**
   * The tuples the record says were about to be created: found written since the creates began
   * (within {@link #PENDING_WINDOW}), they are this FGATuples' own (a crash came between the write
   * and the record); found older or much later, someone else's; not found, nothing.
   */
  private void resolvePending(Optional<Instant> since) {
    for (TupleKey k : pending) {
      Tuple t = present.get(k);
      if (t != null
          && since.isPresent()
          && t.timestamp() != null
          && !t.timestamp().isBefore(since.get().minus(CLOCK_SKEW))
          && !t.timestamp().isAfter(since.get().plus(PENDING_WINDOW).plus(CLOCK_SKEW))) {
        owned.add(k);
      }
    }
    if (!pending.isEmpty()) {
      recorded = false;
    }
    pending.clear();
  }

  private static Map<TupleKey, Tuple> declared(TuplesObservation o) {
    return o.desired() instanceof TuplesObservation.Desired.Valid v ? v.tuples() : Map.of();
  }
}
