package dev.openfga.operator.migration.rules;

import java.time.Duration;

/** The operator-wide settings the decision uses (from flags). */
public record Policy(
    int backoffLimit,
    long activeDeadlineSeconds,
    int ttlSecondsAfterFinished,
    Duration retryCooldown) {

  public static final Policy DEFAULTS = new Policy(3, 300, 300, Duration.ofSeconds(60));

  public MigrationJob.Spec jobSpec() {
    return new MigrationJob.Spec(backoffLimit, activeDeadlineSeconds);
  }
}
