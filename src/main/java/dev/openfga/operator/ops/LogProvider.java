package dev.openfga.operator.ops;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Logger;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * The operator's SLF4J backend (found by SLF4J through {@code META-INF/services}): every logger is
 * a {@link LineLogger} writing one line per event as {@link Logging} is configured. A few classes
 * instead of a logging framework: docs/performance.md, "Where the memory goes".
 */
public final class LogProvider implements SLF4JServiceProvider, ILoggerFactory {

  private final Map<String, Logger> loggers = new ConcurrentHashMap<>();
  private final IMarkerFactory markers = new BasicMarkerFactory();
  private final MDCAdapter mdc = new ThreadMdc();

  @Override
  public Logger getLogger(String name) {
    return loggers.computeIfAbsent(name, LineLogger::new);
  }

  @Override
  public ILoggerFactory getLoggerFactory() {
    return this;
  }

  @Override
  public IMarkerFactory getMarkerFactory() {
    return markers;
  }

  @Override
  public MDCAdapter getMDCAdapter() {
    return mdc;
  }

  @Override
  public String getRequestedApiVersion() {
    return "2.0.99";
  }

  @Override
  public void initialize() {
    // nothing to set up: Logging holds the configuration, with defaults until Main applies flags
  }
}
