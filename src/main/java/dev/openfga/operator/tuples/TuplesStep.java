package dev.openfga.operator.tuples;

import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleKey;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;

/**
 * A call an FGATuples' plan asks for ({@link TuplesPlan.Call}). Each is answered by a {@link
 * TuplesAnswer}, which joins the observation before the planner decides again; one that fails is
 * answered by {@link TuplesAnswer.Failed}.
 */
public sealed interface TuplesStep {
  /**
   * Read the credentials, make the API client for the store's server (the calls below use it), and
   * read the model the writes name: {@code modelId}, or the store's newest.
   */
  record ReadModel(String storeId, Optional<String> modelId) implements TuplesStep {}

  /** Read which of {@code keys} are in the store, with their conditions and when written. */
  record ReadStore(String storeId, SortedSet<TupleKey> keys) implements TuplesStep {}

  /**
   * Write the ownership record: the tuples this FGATuples created in {@code storeId}, and those it
   * is about to create ({@code pending}, since {@code pendingSince}); created, or replaced on the
   * version read ({@code resourceVersion}).
   */
  record WriteRecord(
      String storeId,
      SortedSet<TupleKey> owned,
      SortedSet<TupleKey> pending,
      Optional<Instant> pendingSince,
      Optional<String> resourceVersion)
      implements TuplesStep {}

  /** Delete these tuples (missing ones are no error). */
  record Delete(String storeId, String modelId, List<TupleKey> keys) implements TuplesStep {}

  /**
   * Create these tuples. {@code ignoreDuplicates} only for tuples this FGATuples owns: a new tuple
   * must be refused when it is already there, or it would be taken for its own.
   */
  record Create(String storeId, String modelId, List<Tuple> tuples, boolean ignoreDuplicates)
      implements TuplesStep {}

  /**
   * Add these tuples to the ownership record of the FGATuples {@code holder}, which still declares
   * them: this one, deleted with {@code Delete}, created them, and the holder deletes them once it
   * no longer declares them.
   */
  record HandOver(String storeId, String holder, SortedSet<TupleKey> keys) implements TuplesStep {}

  /** Hand the record to the garbage collector: owned by the FGATuples being deleted. */
  record GiveRecordAway() implements TuplesStep {}
}
