package dev.openfga.operator.ops;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;

/**
 * One log event and its two renderings.
 *
 * <p>Text: {@code time level logger - message key=value...}, the key/values being the event's own
 * (SLF4J fluent API) followed by the MDC's (sorted), then the stack trace if any. Values with
 * blanks, quotes or {@code =} are quoted.
 *
 * <p>JSON, one object a line: {@code time}, {@code level}, {@code logger}, {@code thread}, {@code
 * msg}, then the event's key/values and the MDC's as fields of their own (a key that is already
 * taken gets a {@code _} in front), then {@code error} and {@code stacktrace} if a throwable came
 * with the event. Always UTF-8, whatever the platform's encoding ({@link Logging#write}).
 */
record LogLine(
    Instant time,
    Level level,
    String logger,
    String thread,
    String message,
    List<KeyValuePair> pairs,
    Map<String, String> mdc,
    Throwable throwable) {

  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSX").withZone(ZoneOffset.UTC);

  String text() {
    StringBuilder line = new StringBuilder(128);
    line.append(TIME.format(time)).append(' ');
    String levelName = level.toString();
    line.append(levelName).append(" ".repeat(Math.max(1, 6 - levelName.length())));
    line.append(logger).append(" - ").append(message);
    for (KeyValuePair pair : pairs) {
      appendPair(line, pair.key, pair.value);
    }
    new TreeMap<>(mdc).forEach((key, value) -> appendPair(line, key, value));
    line.append(System.lineSeparator());
    if (throwable != null) {
      line.append(stackTrace(throwable));
    }
    return line.toString();
  }

  String json() {
    StringBuilder line = new StringBuilder(256).append('{');
    field(line, "time", TIME.format(time));
    field(line, "level", level.toString());
    field(line, "logger", logger);
    field(line, "thread", thread);
    field(line, "msg", message);
    Set<String> written = new HashSet<>(RESERVED);
    for (KeyValuePair pair : pairs) {
      String key = unique(written, pair.key);
      if (isPlainNumber(pair.value) || pair.value instanceof Boolean) {
        string(line.append(','), key).append(':').append(pair.value);
      } else {
        field(line, key, String.valueOf(pair.value));
      }
    }
    new TreeMap<>(mdc).forEach((key, value) -> field(line, unique(written, key), value));
    if (throwable != null) {
      field(line, "error", String.valueOf(throwable));
      field(line, "stacktrace", stackTrace(throwable));
    }
    return line.append('}').append(System.lineSeparator()).toString();
  }

  /** The fields every JSON line has (or may have); a key/value or MDC key never repeats them. */
  private static final Set<String> RESERVED =
      Set.of("time", "level", "logger", "thread", "msg", "error", "stacktrace");

  /** {@code key} (or {@code "null"}), with {@code _} in front until no field has that name yet. */
  private static String unique(Set<String> written, String key) {
    String name = String.valueOf(key);
    while (!written.add(name)) {
      name = "_" + name;
    }
    return name;
  }

  /** A number JSON can carry as it is: not NaN or infinite. */
  private static boolean isPlainNumber(Object value) {
    if (value instanceof Double d) {
      return Double.isFinite(d);
    }
    if (value instanceof Float f) {
      return Float.isFinite(f);
    }
    return value instanceof Number;
  }

  private static void appendPair(StringBuilder line, String key, Object value) {
    line.append(' ').append(key).append('=');
    String text = String.valueOf(value);
    boolean quote =
        text.isEmpty()
            || text.chars().anyMatch(c -> Character.isWhitespace(c) || c == '"' || c == '=');
    if (quote) {
      line.append('"').append(text.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
    } else {
      line.append(text);
    }
  }

  private static void field(StringBuilder line, String key, String value) {
    if (line.length() > 1) {
      line.append(',');
    }
    string(line, key).append(':');
    string(line, value);
  }

  /** {@code text} as a JSON string ({@code "null"} for {@code null}). */
  private static StringBuilder string(StringBuilder out, String value) {
    String text = String.valueOf(value);
    out.append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"');
  }

  private static String stackTrace(Throwable throwable) {
    StringWriter trace = new StringWriter();
    throwable.printStackTrace(new PrintWriter(trace));
    return trace.toString();
  }
}
