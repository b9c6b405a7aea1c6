package dev.openfga.operator.tuples;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What the planner decided for an FGATuples: the next call to make (its answer joins the
 * observation, and the planner decides again), or the end of the reconcile.
 */
public sealed interface TuplesPlan {
  /** Make this call. */
  record Call(TuplesStep step) implements TuplesPlan {}

  /**
   * The end: the status to write (none: nothing to write), the Events, the line to log, when to
   * look again, and (while being deleted) whether the finalizer may go.
   */
  record Done(
      Optional<FGATuples.Status> status,
      List<Emit> events,
      Optional<Note> note,
      Duration again,
      boolean removeFinalizer)
      implements TuplesPlan {}

  /** An Event on the FGATuples; the key tells transitions apart: the same key is emitted once. */
  record Emit(TuplesReason reason, String message, String key) {}

  /** A log line: WARN with the reason of a problem that is news, or DEBUG without one. */
  record Note(Optional<TuplesReason> reason, String message) {}
}
