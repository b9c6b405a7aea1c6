package dev.openfga.operator.stores;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What the planner decided for an FGAStore: the next call to make (its answer joins the
 * observation, and the planner decides again), or the end of the reconcile or of the deletion.
 */
public sealed interface StorePlan {
  /** Make this call. */
  record Call(StoreStep step) implements StorePlan {}

  /**
   * The end of a reconcile: the status to write (none: nothing to write, as when the reconcile only
   * waits its turn), the Events, the line to log, whether the FGAStore's claim is let go (it stands
   * for no store now), and when to look again (empty: at the next event only).
   */
  record Done(
      Optional<FGAStore.Status> status,
      List<Emit> events,
      Optional<Note> note,
      boolean release,
      Optional<Duration> again)
      implements StorePlan {}

  /**
   * The end of a deletion: whether the finalizer goes (else the deletion is tried again after
   * {@code again}), the Events, the line to log.
   */
  record Deletion(
      boolean removeFinalizer, List<Emit> events, Optional<Note> note, Optional<Duration> again)
      implements StorePlan {}

  /** An Event on the FGAStore; the key tells transitions apart: the same key is emitted once. */
  record Emit(StoreReason reason, String message, String key) {}

  /** A log line: WARN (with the reason, if any) or INFO. */
  record Note(boolean warn, Optional<StoreReason> reason, String message) {}
}
