package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.Emit;
import java.util.List;
import java.util.Optional;

/**
 * SPEC section 9: the Deployment runs an older semantic version than the recorded one (a rollback).
 * An older {@code openfga migrate} changes nothing, so no Job runs and the record keeps the newer
 * version; apart from the Warning, it is up to date (leftover Jobs, a failure, the first-install
 * restore), and a pending re-run request waits.
 */
final class DowngradeRule {
  private DowngradeRule() {}

  static Optional<Plan> decide(Facts f) {
    String version = f.version();
    Optional<String> newer =
        f.recorded()
            .filter(r -> ImageVersion.compare(version, r).map(cmp -> cmp < 0).orElse(false));
    if (newer.isEmpty()) {
      return Optional.empty();
    }
    String recorded = newer.get();
    Emit warning =
        new Emit(
            EventReason.MigrationDowngrade,
            Messages.downgrade(version, recorded),
            "downgrade/" + recorded + "/" + version);
    Plan plan = UpToDateRule.plan(f.withNotes(List.of(warning)));
    if (plan.state() != State.UP_TO_DATE) {
      return Optional.of(plan);
    }
    return Optional.of(
        new Plan(
            State.DOWNGRADED, Messages.downgraded(version, recorded), plan.steps(), plan.next()));
  }
}
