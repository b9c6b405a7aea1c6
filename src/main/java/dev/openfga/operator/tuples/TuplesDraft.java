package dev.openfga.operator.tuples;

import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.tuples.TuplesPlan.Emit;
import dev.openfga.operator.tuples.TuplesPlan.Note;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What one pass of the planner has decided so far: the status to write (the one read, for the
 * generation looked at), the Events, when to look again.
 */
final class TuplesDraft {
  final TuplesObservation o;
  final FGATuples.Status next;
  final List<Emit> events = new ArrayList<>();
  final Duration again;

  TuplesDraft(TuplesObservation o, Duration again) {
    this.o = o;
    this.next = Conditions.copy(o.tuples().getStatus(), FGATuples.Status::new);
    next.setObservedGeneration(o.tuples().getMetadata().getGeneration());
    this.again = again;
  }

  void emit(TuplesReason reason, String message, String key) {
    events.add(new Emit(reason, message, key));
  }

  /**
   * {@code Ready=False} with this reason; when that is news, a WARN line and, for a Warning reason,
   * an Event.
   */
  TuplesPlan blocked(TuplesReason reason, String message, Duration again) {
    Optional<String> news = Conditions.block(next, reason.name(), message, o.now());
    if (news.isPresent() && reason.warning()) {
      emit(reason, message, news.get());
    }
    Optional<Note> note = news.map(key -> new Note(Optional.of(reason), message));
    return new TuplesPlan.Done(Optional.of(next), events, note, again, false);
  }

  /** The status as decided. */
  TuplesPlan done() {
    return new TuplesPlan.Done(Optional.of(next), events, Optional.empty(), again, false);
  }

  /** Nothing written: the reconcile looks again after {@code after}; {@code debug} logged. */
  TuplesPlan waitOnly(Duration after, String debug) {
    return new TuplesPlan.Done(
        Optional.empty(),
        events,
        Optional.ofNullable(debug).map(m -> new Note(Optional.empty(), m)),
        after,
        false);
  }

  /** The deleted FGATuples may go: its finalizer is removed. */
  TuplesPlan release(String debug) {
    return new TuplesPlan.Done(
        Optional.empty(),
        events,
        Optional.ofNullable(debug).map(m -> new Note(Optional.empty(), m)),
        Duration.ZERO,
        true);
  }

  static TuplesPlan call(TuplesStep step) {
    return new TuplesPlan.Call(step);
  }
}
