package dev.openfga.operator.ops;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import dev.openfga.operator.config.LoggingConfig;
import java.util.List;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * Sets up Logback from {@code --log-format} and {@code --log-level}: one appender on standard
 * output, text ({@link TextLayout}) or JSON (Logback's {@link JsonEncoder}). The Kubernetes client
 * and the operator framework stay at WARN unless the level is debug or trace.
 *
 * <p>When {@code -Dlogback.configurationFile} names a file, that file is left in charge.
 */
public final class Logging {

  /**
   * Loggers of the libraries kept at WARN at the info level (the last is JOSDK's configuration
   * service, which logs under that name rather than a package).
   */
  public static final List<String> LIBRARY_LOGGERS =
      List.of("io.fabric8", "io.javaoperatorsdk", "Default ConfigurationService implementation");

  private static final String USER_CONFIGURATION = "logback.configurationFile";

  private Logging() {}

  /** Configures the process's Logback (unless a Logback file was asked for). */
  public static void configure(LoggingConfig config) {
    if (System.getProperty(USER_CONFIGURATION) != null) {
      return;
    }
    ILoggerFactory factory = LoggerFactory.getILoggerFactory();
    if (factory instanceof LoggerContext context) {
      configure(context, config);
    }
  }

  /** Replaces the configuration of {@code context}. */
  static void configure(LoggerContext context, LoggingConfig config) {
    context.reset();
    Encoder<ILoggingEvent> encoder = encoder(context, config.format());
    ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
    console.setContext(context);
    console.setName("console");
    console.setEncoder(encoder);
    console.start();
    Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.setLevel(level(config.level()));
    root.addAppender(console);
    boolean quietLibraries =
        !config.level().isVerbose() && config.level().compareTo(LoggingConfig.Level.WARN) < 0;
    for (String library : LIBRARY_LOGGERS) {
      context.getLogger(library).setLevel(quietLibraries ? Level.WARN : null);
    }
  }

  /** The encoder for {@code format}, started. */
  static Encoder<ILoggingEvent> encoder(LoggerContext context, LoggingConfig.Format format) {
    Encoder<ILoggingEvent> encoder;
    if (format == LoggingConfig.Format.JSON) {
      JsonEncoder json = new JsonEncoder();
      json.setWithSequenceNumber(false);
      json.setWithNanoseconds(false);
      json.setWithContext(false);
      json.setWithArguments(false);
      json.setWithMessage(false);
      json.setWithFormattedMessage(true);
      encoder = json;
    } else {
      TextLayout layout = new TextLayout();
      layout.setContext(context);
      layout.start();
      LayoutWrappingEncoder<ILoggingEvent> text = new LayoutWrappingEncoder<>();
      text.setLayout(layout);
      encoder = text;
    }
    encoder.setContext(context);
    encoder.start();
    return encoder;
  }

  private static Level level(LoggingConfig.Level level) {
    return switch (level) {
      case TRACE -> Level.TRACE;
      case DEBUG -> Level.DEBUG;
      case INFO -> Level.INFO;
      case WARN -> Level.WARN;
      case ERROR -> Level.ERROR;
    };
  }
}
