package dev.openfga.operator.ops;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.event.KeyValuePair;

/**
 * One human line per event: {@code time level logger - message key=value...}, the key/values being
 * the event's own (SLF4J fluent API) followed by the MDC's (sorted), then the stack trace if any.
 * Values with blanks, quotes or {@code =} are quoted.
 */
public final class TextLayout extends LayoutBase<ILoggingEvent> {

  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSX").withZone(ZoneOffset.UTC);

  @Override
  public String doLayout(ILoggingEvent event) {
    StringBuilder line = new StringBuilder(128);
    line.append(TIME.format(event.getInstant())).append(' ');
    String level = event.getLevel().toString();
    line.append(level).append(" ".repeat(Math.max(1, 6 - level.length())));
    line.append(event.getLoggerName()).append(" - ").append(event.getFormattedMessage());
    List<KeyValuePair> pairs = event.getKeyValuePairs();
    if (pairs != null) {
      for (KeyValuePair pair : pairs) {
        appendPair(line, pair.key, pair.value);
      }
    }
    Map<String, String> mdc = event.getMDCPropertyMap();
    if (mdc != null && !mdc.isEmpty()) {
      new TreeMap<>(mdc).forEach((key, value) -> appendPair(line, key, value));
    }
    line.append(CoreConstants.LINE_SEPARATOR);
    IThrowableProxy throwable = event.getThrowableProxy();
    if (throwable != null) {
      line.append(ThrowableProxyUtil.asString(throwable)).append(CoreConstants.LINE_SEPARATOR);
    }
    return line.toString();
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
}
