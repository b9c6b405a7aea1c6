package dev.openfga.operator.models;

import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.models.ModelPlan.Emit;
import dev.openfga.operator.models.ModelPlan.Note;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What one pass of the planner has decided so far: the status to write (the one read, for the
 * generation looked at), the Events, until when the tests wait, when to look again.
 */
final class ModelDraft {
  final ModelObservation o;
  final FGAModel.Status next;
  final List<Emit> events = new ArrayList<>();
  final Duration again;
  Optional<Instant> testsNotBefore = Optional.empty();

  ModelDraft(ModelObservation o, Duration again) {
    this.o = o;
    this.next = Conditions.copy(o.model().getStatus(), FGAModel.Status::new);
    next.setObservedGeneration(o.model().getMetadata().getGeneration());
    this.again = again;
  }

  void emit(ModelReason reason, String message, String key) {
    events.add(new Emit(reason, message, key));
  }

  /**
   * {@code Ready=False} with this reason; when that is news, a WARN line and, for a Warning reason,
   * an Event.
   */
  ModelPlan blocked(ModelReason reason, String message, Duration again) {
    Optional<String> news = Conditions.block(next, reason.name(), message, o.now());
    if (news.isPresent() && reason.warning()) {
      emit(reason, message, news.get());
    }
    Optional<Note> note = news.map(key -> new Note(Optional.of(reason), message));
    return new ModelPlan.Done(Optional.of(next), events, note, testsNotBefore, again);
  }

  /** The status as decided. */
  ModelPlan done() {
    return new ModelPlan.Done(Optional.of(next), events, Optional.empty(), testsNotBefore, again);
  }

  /** Nothing written: the reconcile looks again after {@code after}; {@code debug} logged. */
  ModelPlan waitOnly(Duration after, String debug) {
    return new ModelPlan.Done(
        Optional.empty(),
        List.of(),
        Optional.ofNullable(debug).map(m -> new Note(Optional.empty(), m)),
        testsNotBefore,
        after);
  }
}
