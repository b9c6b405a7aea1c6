package dev.openfga.operator.ops;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.slf4j.MDC;
import org.slf4j.Marker;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;
import org.slf4j.event.LoggingEvent;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.spi.LoggingEventAware;

/**
 * One SLF4J logger: asks {@link Logging} whether a level is on, and writes each event as one line
 * ({@link LogLine}) with the event's key/values (fluent API) and the thread's MDC.
 */
final class LineLogger extends LegacyAbstractLogger implements LoggingEventAware {

  /** A library's logger (quieter at INFO), decided once. */
  private final boolean library;

  LineLogger(String name) {
    this.name = name;
    this.library = Logging.isLibrary(name);
  }

  @Override
  public boolean isTraceEnabled() {
    return Logging.enabled(library, Level.TRACE);
  }

  @Override
  public boolean isDebugEnabled() {
    return Logging.enabled(library, Level.DEBUG);
  }

  @Override
  public boolean isInfoEnabled() {
    return Logging.enabled(library, Level.INFO);
  }

  @Override
  public boolean isWarnEnabled() {
    return Logging.enabled(library, Level.WARN);
  }

  @Override
  public boolean isErrorEnabled() {
    return Logging.enabled(library, Level.ERROR);
  }

  @Override
  protected String getFullyQualifiedCallerName() {
    return null;
  }

  @Override
  protected void handleNormalizedLoggingCall(
      Level level, Marker marker, String pattern, Object[] arguments, Throwable throwable) {
    write(level, pattern, arguments, List.of(), throwable);
  }

  /** The fluent API ({@code LOG.atInfo().addKeyValue(...).log(...)}) arrives here. */
  @Override
  public void log(LoggingEvent event) {
    if (!Logging.enabled(library, event.getLevel())) {
      return;
    }
    Object[] arguments = event.getArgumentArray();
    Throwable throwable = event.getThrowable();
    if (throwable == null) {
      throwable = MessageFormatter.getThrowableCandidate(arguments);
      if (throwable != null) {
        arguments = MessageFormatter.trimmedCopy(arguments);
      }
    }
    List<KeyValuePair> pairs = event.getKeyValuePairs();
    write(
        event.getLevel(),
        event.getMessage(),
        arguments,
        pairs == null ? List.of() : pairs,
        throwable);
  }

  private void write(
      Level level,
      String pattern,
      Object[] arguments,
      List<KeyValuePair> pairs,
      Throwable throwable) {
    String message = MessageFormatter.basicArrayFormat(pattern, arguments);
    Map<String, String> mdc = MDC.getCopyOfContextMap();
    Logging.write(
        new LogLine(
            Instant.now(),
            level,
            name,
            Thread.currentThread().getName(),
            message,
            pairs,
            mdc == null ? Map.of() : mdc,
            throwable));
  }
}
