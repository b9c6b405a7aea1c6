package dev.openfga.operator.tuples;

import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.stores.FGAStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;

/**
 * Everything one FGATuples decision looks at: the FGATuples, the time, the tuples it declares (or
 * why they cannot be read), its FGAStore and whether this process confirmed that FGAStore for its
 * store, the FGAModel of {@code spec.modelRef} (if any), its ownership record, the tuples other
 * FGATuples of the same FGAStore declare (each with the name of the first of them, by name, that
 * declares it; {@code ""} when one of them could not be read and every tuple this one owns counts
 * as declared by it), the most tuples one Write may carry, whether it is being deleted, and the
 * answers of the calls made so far in this reconcile. Read-only.
 */
public record TuplesObservation(
    FGATuples tuples,
    Instant now,
    Desired desired,
    Optional<FGAStore> store,
    boolean confirmed,
    Optional<FGAModel> model,
    Record record,
    Map<TupleKey, String> declaredElsewhere,
    int perWrite,
    boolean deleting,
    List<TuplesAnswer> answers) {

  public TuplesObservation {
    declaredElsewhere = Map.copyOf(declaredElsewhere);
    answers = List.copyOf(answers);
  }

  /** The tuples the spec declares; or why they cannot be read. */
  public sealed interface Desired {
    /** The tuples by key, and {@code sha256:} of them with their conditions. */
    record Valid(SortedMap<TupleKey, Tuple> tuples, String hash) implements Desired {}

    /** The ConfigMap or its key is missing (SourceNotFound), or the tuples do not read. */
    record Invalid(TuplesReason reason, String message) implements Desired {}
  }

  /** The ownership record ({@code <name>-tuples-record}) as read. */
  public sealed interface Record {
    /** No ConfigMap of that name. */
    record Absent() implements Record {}

    /**
     * The record of an earlier FGATuples of the name, handed to the garbage collector (an owner
     * reference to it) or being deleted: wait until it is gone.
     */
    record Collecting() implements Record {}

    /** A ConfigMap of that name that is not this FGATuples' record: what it is. */
    record Foreign(String why) implements Record {}

    /**
     * This FGATuples' record (or an earlier one's of the same name): the store it is for, the
     * tuples it created there, the tuples it was about to create and since when (a crash before the
     * record was written again leaves them), the uid of the FGATuples that last wrote it, and the
     * ConfigMap's resourceVersion.
     */
    record Own(
        String storeId,
        SortedSet<TupleKey> owned,
        SortedSet<TupleKey> pending,
        Optional<Instant> pendingSince,
        String uid,
        String resourceVersion)
        implements Record {}
  }

  /** With the answer of a call. */
  public TuplesObservation with(TuplesAnswer answer) {
    List<TuplesAnswer> all = new ArrayList<>(answers);
    all.add(answer);
    return new TuplesObservation(
        tuples,
        now,
        desired,
        store,
        confirmed,
        model,
        record,
        declaredElsewhere,
        perWrite,
        deleting,
        all);
  }

  /** The first answer of that kind, if a call gave one. */
  public <A extends TuplesAnswer> Optional<A> answer(Class<A> kind) {
    return answers.stream().filter(kind::isInstance).map(kind::cast).findFirst();
  }

  /** Every answer of that kind, in order. */
  public <A extends TuplesAnswer> List<A> all(Class<A> kind) {
    return answers.stream().filter(kind::isInstance).map(kind::cast).toList();
  }
}
