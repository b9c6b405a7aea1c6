package dev.openfga.operator.kube;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/** RFC 3339 times as the operator writes them: UTC, whole seconds. */
public final class Timestamps {
  private Timestamps() {}

  public static Optional<Instant> parse(String value) {
    if (value == null || value.length() > 64) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          OffsetDateTime.parse(value.strip()).toInstant().truncatedTo(ChronoUnit.SECONDS));
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  public static String format(Instant instant) {
    return instant.truncatedTo(ChronoUnit.SECONDS).toString();
  }
}
