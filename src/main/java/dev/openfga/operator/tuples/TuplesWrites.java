package dev.openfga.operator.tuples;

import static dev.openfga.operator.tuples.TuplesDraft.call;
import static dev.openfga.operator.tuples.TuplesPlanner.first;
import static dev.openfga.operator.tuples.TuplesPlanner.named;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.kube.Names;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.tuples.TuplesObservation.Desired;
import dev.openfga.operator.tuples.TuplesObservation.Record;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The tuples of a usable FGATuples in its store, one call at a time: the model read and every tuple
 * checked against it, the store read, deletes, the record's intent, creates, the record, the
 * status. Part of {@link TuplesPlanner}; pure.
 */
final class TuplesWrites {
  /** When a record found changed since it was read is looked at again (as a status write's). */
  static final java.time.Duration RECORD_CHANGED_AGAIN = java.time.Duration.ofSeconds(1);

  private TuplesWrites() {}

  static TuplesPlan plan(
      TuplesDraft d, Desired.Valid desired, String storeId, Optional<String> pinned) {
    TuplesObservation o = d.o;
    Ledger l = Ledger.of(o, storeId);
    Optional<TuplesAnswer.RecordRefused> refused = o.answer(TuplesAnswer.RecordRefused.class);
    if (refused.isPresent()) {
      return d.blocked(refused.get().reason(), refused.get().message(), d.again);
    }
    if (o.answer(TuplesAnswer.RecordChanged.class).isPresent()) {
      return d.waitOnly(RECORD_CHANGED_AGAIN, "the ownership record changed: look again");
    }
    Optional<TuplesAnswer.Failed> failed = o.answer(TuplesAnswer.Failed.class);
    Optional<TuplesAnswer.Invalid> invalid = o.answer(TuplesAnswer.Invalid.class);
    if (failed.isPresent() || invalid.isPresent()) {
      boolean progressWritten =
          o.answers().get(o.answers().size() - 1) instanceof TuplesAnswer.RecordWritten;
      if (!progressWritten && !l.recorded && !l.read.isEmpty()) {
        // what was written before the failure is recorded first: the next look goes on from there.
        // What was about to be created stays pending: a create whose answer was lost may have
        // been written, and the next look tells by its time
        SortedSet<TupleKey> pending = new TreeSet<>(l.pending);
        pending.removeAll(l.owned);
        return call(
            new TuplesStep.WriteRecord(
                storeId,
                owned(l, desired),
                pending,
                pending.isEmpty() ? Optional.empty() : l.pendingSince,
                l.resourceVersion));
      }
      counts(d, desired, l);
      if (invalid.isPresent()) {
        return d.blocked(TuplesReason.InvalidTuples, invalid.get().detail(), d.again);
      }
      TuplesReason reason =
          failed.get().failure().credentials()
              ? TuplesReason.CredentialsError
              : TuplesReason.OpenFGARequestFailed;
      missing(d, desired, l);
      return d.blocked(reason, failed.get().failure().message(), TuplesPlanner.WAIT);
    }
    Optional<TuplesAnswer.NoModel> noModel = o.answer(TuplesAnswer.NoModel.class);
    if (noModel.isPresent()) {
      return d.blocked(TuplesReason.WaitingForModel, noModel.get().message(), TuplesPlanner.WAIT);
    }
    Optional<TuplesAnswer.ModelRead> model = o.answer(TuplesAnswer.ModelRead.class);
    if (model.isEmpty()) {
      return call(new TuplesStep.ReadModel(storeId, pinned));
    }
    String modelId = model.get().modelId();
    List<String> problems = problems(model.get().model(), desired);
    d.next.setInvalid(first(problems, TuplesPlanner.NAMED));
    if (!problems.isEmpty()) {
      return d.blocked(
          TuplesReason.InvalidTuples,
          problems.size()
              + " declared tuples are not valid for model "
              + modelId
              + "; nothing is written until they are fixed: "
              + String.join("; ", first(problems, 3)),
          d.again);
    }
    if (o.answer(TuplesAnswer.StoreRead.class).isEmpty()) {
      SortedSet<TupleKey> keys = new TreeSet<>(desired.tuples().keySet());
      keys.addAll(l.owned);
      keys.addAll(l.pending);
      return call(new TuplesStep.ReadStore(storeId, keys));
    }
    Optional<TuplesPlan> stuck = duplicateNotReadBack(d, l);
    if (stuck.isPresent()) {
      return stuck.get();
    }
    int limit = perWrite(o);
    SortedSet<TupleKey> otherCondition = TuplesPlanner.otherCondition(desired, l);
    List<TupleKey> deletes = new ArrayList<>();
    for (TupleKey k : l.owned) {
      boolean declared = desired.tuples().containsKey(k);
      boolean gone = !declared && !o.declaredElsewhere().containsKey(k);
      if (l.present.containsKey(k) && (gone || declared && otherCondition.contains(k))) {
        deletes.add(k);
      }
    }
    if (!deletes.isEmpty()) {
      return batches(deletes, limit, b -> new TuplesStep.Delete(storeId, modelId, b));
    }
    List<Tuple> restores = new ArrayList<>();
    List<Tuple> fresh = new ArrayList<>();
    for (Tuple t : desired.tuples().values()) {
      if (!l.present.containsKey(t.key())) {
        (l.owned.contains(t.key()) ? restores : fresh).add(t);
      }
    }
    if (!restores.isEmpty()) {
      return batches(restores, limit, b -> new TuplesStep.Create(storeId, modelId, b, true));
    }
    if (!fresh.isEmpty()) {
      SortedSet<TupleKey> intent = new TreeSet<>();
      fresh.forEach(t -> intent.add(t.key()));
      if (!l.pending.containsAll(intent)) {
        return call(
            new TuplesStep.WriteRecord(
                storeId, new TreeSet<>(l.owned), intent, Optional.of(o.now()), l.resourceVersion));
      }
      return batches(fresh, limit, b -> new TuplesStep.Create(storeId, modelId, b, false));
    }
    SortedSet<TupleKey> owned = owned(l, desired);
    boolean changed = !l.recorded || !owned.equals(l.owned);
    if (changed && !(o.record() instanceof Record.Absent && owned.isEmpty())) {
      return call(
          new TuplesStep.WriteRecord(
              storeId, owned, new TreeSet<>(), Optional.empty(), l.resourceVersion));
    }
    d.next.setModelId(modelId);
    d.next.setDeclaredHash(desired.hash());
    d.next.setVerifiedAt(Timestamps.format(o.now()));
    return inSync(d, desired, l, storeId, modelId);
  }

  /** Ready=True; InSync as found; the Events of what this reconcile did. */
  private static TuplesPlan inSync(
      TuplesDraft d, Desired.Valid desired, Ledger l, String storeId, String modelId) {
    counts(d, desired, l);
    events(d, l, storeId, modelId);
    Conditions.set(
        d.next,
        Conditions.READY,
        true,
        TuplesReason.TuplesReady.name(),
        desired.tuples().size()
            + " tuples declared in store "
            + storeId
            + " (model "
            + modelId
            + ")",
        d.o.now());
    SortedSet<TupleKey> conflicts = TuplesPlanner.otherCondition(desired, l);
    conflicts.removeAll(l.owned);
    if (conflicts.isEmpty()) {
      Conditions.set(
          d.next,
          Conditions.IN_SYNC,
          true,
          TuplesReason.TuplesInSync.name(),
          "every declared tuple is in the store",
          d.o.now());
    } else {
      String message =
          conflicts.size()
              + " declared tuples are in the store with another condition, written by someone"
              + " else; they are left as they are: "
              + named(conflicts);
      if (Conditions.set(
          d.next,
          Conditions.IN_SYNC,
          false,
          TuplesReason.ConditionConflict.name(),
          message,
          d.o.now())) {
        d.emit(TuplesReason.ConditionConflict, message, TuplesPlanner.hashOf(conflicts));
      }
    }
    return d.done();
  }

  /** The Events of what this reconcile wrote and found. */
  private static void events(TuplesDraft d, Ledger l, String storeId, String modelId) {
    String at = d.o.now().toString();
    if (!l.created.isEmpty() || !l.deleted.isEmpty()) {
      d.emit(
          TuplesReason.TuplesWritten,
          "created "
              + l.created.size()
              + " and deleted "
              + l.deleted.size()
              + " tuples in store "
              + storeId
              + " (model "
              + modelId
              + ")",
          "written/" + at);
    }
    if (!l.restored.isEmpty()) {
      d.emit(
          TuplesReason.TuplesRestored,
          l.restored.size()
              + " tuples this FGATuples wrote were deleted out of band and are written again: "
              + named(l.restored),
          "restored/" + at);
    }
    if (!l.foundPresent.isEmpty()) {
      d.emit(
          TuplesReason.TuplesAlreadyPresent,
          l.foundPresent.size()
              + " declared tuples were already in the store: they are not this FGATuples' own"
              + " and stay when removed from it: "
              + named(l.foundPresent),
          "present/" + TuplesPlanner.hashOf(l.foundPresent));
    }
    FGATuples.Status before = d.o.tuples().getStatus();
    if (d.o.record() instanceof Record.Absent
        && before != null
        && before.getWritten() != null
        && before.getWritten() > 0) {
      d.emit(
          TuplesReason.TuplesRecordMissing,
          "the status says "
              + before.getWritten()
              + " tuples were written by this FGATuples, but its ownership record "
              + Names.tuplesRecord(d.o.tuples().getMetadata().getName())
              + " is gone: they are no longer known as its own, and removing them from it leaves"
              + " them in the store",
          "record-missing/" + d.o.tuples().getMetadata().getUid());
    }
    if (d.o.record() instanceof Record.Own own) {
      if (!own.storeId().equals(storeId)) {
        d.emit(
            TuplesReason.TuplesRecordForAnotherStore,
            "the ownership record named store "
                + own.storeId()
                + ", not "
                + storeId
                + ": the "
                + own.owned().size()
                + " tuples it lists there are left alone; the record starts afresh",
            "store/" + own.storeId() + "/" + storeId);
      } else if (!own.uid().equals(d.o.tuples().getMetadata().getUid())) {
        d.emit(
            TuplesReason.TuplesRecordAdopted,
            "the ownership record of an earlier FGATuples of this name is used: "
                + own.owned().size()
                + " tuples in store "
                + storeId
                + " are this FGATuples' own",
            "adopted/" + d.o.tuples().getMetadata().getUid());
      }
    }
    int reduced = d.o.all(TuplesAnswer.OverLimit.class).size();
    if (reduced > 0) {
      d.emit(
          TuplesReason.BatchSizeReduced,
          "OpenFGA refused Writes of "
              + d.o.perWrite()
              + " tuples; "
              + perWrite(d.o)
              + " are sent at once (lower --tuples-per-write to the server's limit)",
          "limit/" + perWrite(d.o));
    }
  }

  /** status.desired, written, preExisting, held, recordName and storeId. */
  private static void counts(TuplesDraft d, Desired.Valid desired, Ledger l) {
    int written = 0;
    int preExisting = 0;
    for (TupleKey k : desired.tuples().keySet()) {
      if (l.owned.contains(k)) {
        written++;
      } else if (l.present.containsKey(k)) {
        preExisting++;
      }
    }
    d.next.setDesired(desired.tuples().size());
    d.next.setWritten(written);
    d.next.setPreExisting(preExisting);
    d.next.setHeld(
        (int)
            l.owned.stream()
                .filter(k -> !desired.tuples().containsKey(k) && l.present.containsKey(k))
                .count());
    d.next.setStoreId(d.o.store().orElseThrow().getStatus().getStoreId());
    d.next.setRecordName(Names.tuplesRecord(d.o.tuples().getMetadata().getName()));
  }

  /**
   * InSync=False (TuplesMissing) when declared tuples were read absent and are still not written.
   */
  private static void missing(TuplesDraft d, Desired.Valid desired, Ledger l) {
    SortedSet<TupleKey> absent = new TreeSet<>();
    for (TupleKey k : desired.tuples().keySet()) {
      if (l.read.contains(k) && !l.present.containsKey(k)) {
        absent.add(k);
      }
    }
    if (!absent.isEmpty()) {
      String message = absent.size() + " declared tuples are not in the store: " + named(absent);
      if (Conditions.set(
          d.next,
          Conditions.IN_SYNC,
          false,
          TuplesReason.TuplesMissing.name(),
          message,
          d.o.now())) {
        d.emit(TuplesReason.TuplesMissing, message, "missing/" + TuplesPlanner.hashOf(absent));
      }
    }
  }

  /** The tuples owned, less those read gone that are no longer declared (nothing to delete). */
  private static SortedSet<TupleKey> owned(Ledger l, Desired.Valid desired) {
    SortedSet<TupleKey> owned = new TreeSet<>();
    for (TupleKey k : l.owned) {
      boolean goneForGood =
          l.read.contains(k) && !l.present.containsKey(k) && !desired.tuples().containsKey(k);
      if (!goneForGood) {
        owned.add(k);
      }
    }
    return owned;
  }

  /**
   * A batch refused as holding a tuple already there, then read, must have one there: else OpenFGA
   * contradicts itself (a read replica behind?) and the reconcile stops instead of looping.
   */
  private static Optional<TuplesPlan> duplicateNotReadBack(TuplesDraft d, Ledger l) {
    List<TuplesAnswer> answers = d.o.answers();
    TuplesAnswer last = answers.get(answers.size() - 1);
    if (last instanceof TuplesAnswer.Duplicate dup) {
      return Optional.of(
          call(
              new TuplesStep.ReadStore(
                  d.o.store().orElseThrow().getStatus().getStoreId(), new TreeSet<>(dup.keys()))));
    }
    if (answers.size() >= 2
        && last instanceof TuplesAnswer.StoreRead read
        && answers.get(answers.size() - 2) instanceof TuplesAnswer.Duplicate
        && read.present().isEmpty()) {
      return Optional.of(
          d.blocked(
              TuplesReason.OpenFGARequestFailed,
              "OpenFGA refused a Write as holding a tuple already there, but reads none of its "
                  + read.asked().size()
                  + " tuples: "
                  + named(read.asked()),
              TuplesPlanner.WAIT));
    }
    return Optional.empty();
  }

  /** The calls for {@code items} in batches of {@code limit}, in order. */
  static <T> TuplesPlan batches(
      List<T> items, int limit, java.util.function.Function<List<T>, TuplesStep> step) {
    List<TuplesStep> steps = new ArrayList<>();
    for (int from = 0; from < items.size(); from += limit) {
      steps.add(
          step.apply(new ArrayList<>(items.subList(from, Math.min(items.size(), from + limit)))));
    }
    return new TuplesPlan.Call(steps);
  }

  /** The most tuples one Write carries: the flag's, halved for each Write the server refused. */
  static int perWrite(TuplesObservation o) {
    int n = o.perWrite();
    for (TuplesAnswer.OverLimit over : o.all(TuplesAnswer.OverLimit.class)) {
      n = Math.max(1, Math.min(n, over.sent() / 2));
    }
    return n;
  }

  /** Every problem of a declared tuple with the model, in key order. */
  static List<String> problems(JsonNode model, Desired.Valid desired) {
    List<String> problems = new ArrayList<>();
    for (Tuple t : desired.tuples().values()) {
      TupleRules.problem(model, t).ifPresent(problems::add);
    }
    return problems;
  }
}
