package dev.openfga.operator.config;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations written the way Go's {@code time.ParseDuration} reads them ({@code 90s}, {@code 2m},
 * {@code 1h30m}, {@code 1.5h}, {@code 250ms}), and, as an extension, plain seconds ({@code 90}).
 * Negative durations are refused.
 */
public final class GoDuration {

  private static final Pattern PLAIN_SECONDS = Pattern.compile("\\d+");
  private static final Pattern TERM =
      Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|μs|ms|s|m|h)");
  private static final Map<String, Long> NANOS_PER_UNIT =
      Map.of(
          "ns", 1L,
          "us", 1_000L,
          "µs", 1_000L,
          "μs", 1_000L,
          "ms", 1_000_000L,
          "s", 1_000_000_000L,
          "m", 60_000_000_000L,
          "h", 3_600_000_000_000L);
  private static final BigInteger MAX_NANOS = BigInteger.valueOf(Long.MAX_VALUE);

  private GoDuration() {}

  /**
   * Parses a duration.
   *
   * @throws IllegalArgumentException when the text is not a duration, is negative or too large
   */
  public static Duration parse(String text) {
    String trimmed = text.strip();
    if (PLAIN_SECONDS.matcher(trimmed).matches()) {
      try {
        return Duration.ofSeconds(Long.parseLong(trimmed));
      } catch (NumberFormatException | ArithmeticException e) {
        throw new IllegalArgumentException("duration too large: " + text, e);
      }
    }
    if (trimmed.startsWith("+")) {
      trimmed = trimmed.substring(1);
    }
    if (trimmed.equals("0")) {
      return Duration.ZERO;
    }
    if (trimmed.isEmpty()) {
      throw new IllegalArgumentException("empty duration");
    }
    Matcher term = TERM.matcher(trimmed);
    BigDecimal nanos = BigDecimal.ZERO;
    int position = 0;
    while (position < trimmed.length()) {
      if (!term.find(position) || term.start() != position) {
        throw new IllegalArgumentException("not a duration: " + text);
      }
      nanos =
          nanos.add(
              new BigDecimal(term.group(1))
                  .multiply(BigDecimal.valueOf(NANOS_PER_UNIT.get(term.group(2)))));
      position = term.end();
    }
    BigInteger whole = nanos.toBigInteger();
    if (whole.compareTo(MAX_NANOS) > 0) {
      throw new IllegalArgumentException("duration too large: " + text);
    }
    return Duration.ofNanos(whole.longValueExact());
  }

  /** Formats like Go's {@code Duration.String()} for whole seconds, e.g. {@code 1h30m0s}. */
  public static String format(Duration duration) {
    if (duration.isZero()) {
      return "0s";
    }
    StringBuilder text = new StringBuilder();
    if (duration.toHours() > 0) {
      text.append(duration.toHours()).append('h');
    }
    if (duration.toHours() > 0 || duration.toMinutesPart() > 0) {
      text.append(duration.toMinutesPart()).append('m');
    }
    text.append(duration.toSecondsPart());
    if (duration.toNanosPart() > 0) {
      String fraction = String.format("%09d", duration.toNanosPart()).replaceAll("0+$", "");
      text.append('.').append(fraction);
    }
    return text.append('s').toString();
  }
}
