package dev.openfga.operator.models;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What the planner decided for an FGAModel: the next call to make (its answer joins the
 * observation, and the planner decides again), or the end of the reconcile.
 */
public sealed interface ModelPlan {
  /** Make this call. */
  record Call(ModelStep step) implements ModelPlan {}

  /**
   * The end: the status to write (none: nothing to write, as when the tests wait or the FGAStore is
   * not confirmed yet), the Events, the line to log, until when the tests wait before they run
   * again (after an error, or after they gave their slot up), and when to look again.
   */
  record Done(
      Optional<FGAModel.Status> status,
      List<Emit> events,
      Optional<Note> note,
      Optional<Instant> testsNotBefore,
      Duration again)
      implements ModelPlan {}

  /** An Event on the FGAModel; the key tells transitions apart: the same key is emitted once. */
  record Emit(ModelReason reason, String message, String key) {}

  /** A log line: WARN with the reason of a problem that is news, or DEBUG without one. */
  record Note(Optional<ModelReason> reason, String message) {}
}
