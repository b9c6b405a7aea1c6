package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Plan.State;
import java.time.Instant;
import java.util.Optional;

/**
 * Rule 7, no Job: while the retry deadline on the Deployment ({@code
 * openfga.dev/migration-retry-after}) is in the future, no Job is created; it looks again then.
 */
final class CooldownRule {
  private CooldownRule() {}

  static Optional<Plan> decide(Facts f) {
    return f.settings().retryAfter().filter(f.now()::isBefore).map(at -> cooldown(f, at));
  }

  private static Plan cooldown(Facts f, Instant at) {
    return f.plan(
        State.COOLDOWN,
        Messages.waitingForRetryDeadline(at),
        Plan.after(Timing.until(f.now(), at)));
  }
}
