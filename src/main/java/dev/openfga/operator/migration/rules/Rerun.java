package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Timestamps;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * SPEC section 9: a re-run asked for with {@code openfga.dev/migrate-requested-at}, newer than the
 * last one handled (kept in the record), counts as a migration needed. One in the future would hide
 * every request before it once handled, so it waits until its time, and says so.
 */
final class Rerun {
  private Rerun() {}

  /** The request, when it is newer than the handled one (or none was handled). */
  static Optional<String> newRequest(Optional<String> requested, Optional<String> handled) {
    if (requested.isEmpty()) {
      return Optional.empty();
    }
    Optional<Instant> at = Timestamps.parse(requested.get());
    Optional<Instant> done = handled.flatMap(Timestamps::parse);
    if (at.isEmpty() || (done.isPresent() && !at.get().isAfter(done.get()))) {
      return Optional.empty();
    }
    return requested;
  }

  /** A request in the future: a Warning, with the decisions after the record's rule. */
  static List<Step> notes(Facts f) {
    if (f.futureRequest().isEmpty()) {
      return List.of();
    }
    String problem = Messages.futureRequest(f.settings().requestedAt().orElseThrow());
    return List.of(new Step.Emit(EventReason.InvalidConfiguration, problem, "invalid/" + problem));
  }
}
