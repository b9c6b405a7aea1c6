package dev.openfga.operator.tuples;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What the planner decided for an FGATuples: the next call to make (its answer joins the
 * observation, and the planner decides again), or the end of the reconcile.
 */
public sealed interface TuplesPlan {
  /**
   * Make these calls in order, as long as each succeeds (a create or delete done): the batches of
   * one kind go out without a decision between them. The answers join the observation.
   */
  record Call(List<TuplesStep> steps) implements TuplesPlan {
    public Call {
      if (steps.isEmpty()) {
        throw new IllegalArgumentException("a call of no step");
      }
      steps = List.copyOf(steps);
    }

    public Call(TuplesStep step) {
      this(List.of(step));
    }

    /** The first call. */
    public TuplesStep step() {
      return steps.get(0);
    }
  }

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
