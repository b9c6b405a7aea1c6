package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Step.Emit;
import java.util.List;
import java.util.Optional;

/**
 * Rule 5: the record. A ConfigMap of its name that the operator does not manage, or that another
 * Deployment controls, is a collision: a Warning, nothing overwritten, no Job. One controlled by an
 * older incarnation of the same Deployment (recreated, new UID) is re-owned first ({@link #notes}),
 * without running the migration again.
 */
final class RecordRule {
  private RecordRule() {}

  static Optional<Plan> decide(Facts f) {
    if (f.reading().orElse(null) instanceof StatusRecord.Reading.Collision collision) {
      String problem = collision.problem();
      String uid = f.o().statusConfigMap().orElseThrow().getMetadata().getUid();
      return Optional.of(
          f.blocked(
              problem,
              new Emit(
                  EventReason.MigrationStatusConflict,
                  problem,
                  "status-conflict/" + uid + "/" + problem)));
    }
    return Optional.empty();
  }

  /** What every decision after this rule starts with: the record re-owned when it must be. */
  static List<Step> notes(Facts f) {
    return f.record().filter(StatusRecord.Reading.Recorded::ownerNeedsRepair).isPresent()
        ? List.of(new Step.RepairStatusOwner())
        : List.of();
  }
}
