package dev.openfga.operator.tuples;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.openfga.CallFailure;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleKey;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;

/** What a {@link TuplesStep} found or did. */
public sealed interface TuplesAnswer {
  /** {@link TuplesStep.ReadModel}: the model's id and JSON. */
  record ModelRead(String modelId, JsonNode model) implements TuplesAnswer {}

  /** {@link TuplesStep.ReadModel}: the store has no model (or not the one named). */
  record NoModel(String message) implements TuplesAnswer {}

  /** {@link TuplesStep.ReadStore}: of the keys asked, those in the store. */
  record StoreRead(SortedSet<TupleKey> asked, Map<TupleKey, Tuple> present)
      implements TuplesAnswer {}

  /** {@link TuplesStep.WriteRecord}: written; the ConfigMap's new resourceVersion. */
  record RecordWritten(TuplesStep.WriteRecord step, String resourceVersion)
      implements TuplesAnswer {}

  /** {@link TuplesStep.WriteRecord}: not written: too large, or refused (the message says). */
  record RecordRefused(TuplesReason reason, String message) implements TuplesAnswer {}

  /** {@link TuplesStep.WriteRecord}: the ConfigMap changed since it was read: look again. */
  record RecordChanged() implements TuplesAnswer {}

  /** {@link TuplesStep.Delete}: these tuples are not in the store any more. */
  record Deleted(List<TupleKey> keys) implements TuplesAnswer {}

  /** {@link TuplesStep.Create}: these tuples are in the store, written by this call. */
  record Created(List<TupleKey> keys, boolean restored) implements TuplesAnswer {}

  /**
   * {@link TuplesStep.Create}: OpenFGA refused the batch (nothing of it written) because one of its
   * tuples is already there.
   */
  record Duplicate(List<TupleKey> keys) implements TuplesAnswer {}

  /** {@link TuplesStep.Create}: OpenFGA refused the batch as invalid; what it answered. */
  record Invalid(List<TupleKey> keys, String detail) implements TuplesAnswer {}

  /** A Write of {@code sent} tuples was over the server's limit: nothing written. */
  record OverLimit(int sent) implements TuplesAnswer {}

  /** {@link TuplesStep.HandOver}: the holder's record lists these tuples now. */
  record HandedOver(String holder, SortedSet<TupleKey> keys) implements TuplesAnswer {}

  /**
   * {@link TuplesStep.HandOver}: not now: the holder is gone or being deleted, or its record
   * changed since it was read or is being collected (why). Look again.
   */
  record HandOverLater(String holder, SortedSet<TupleKey> keys, String why)
      implements TuplesAnswer {}

  /** {@link TuplesStep.HandOver}: the holder's record cannot take them (the message says why). */
  record HandOverRefused(String holder, SortedSet<TupleKey> keys, String why)
      implements TuplesAnswer {}

  /** {@link TuplesStep.GiveRecordAway}: done (or there was no record). */
  record RecordGivenAway() implements TuplesAnswer {}

  /** A call to OpenFGA (or for its credentials) failed. */
  record Failed(CallFailure failure) implements TuplesAnswer {}
}
