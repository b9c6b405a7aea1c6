package dev.openfga.operator.ops;

import dev.openfga.operator.config.LoggingConfig;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The log configuration from {@code --log-format} and {@code --log-level}: one line per event on
 * standard output, text or JSON ({@link LogLine}), through the operator's own SLF4J backend ({@link
 * LogProvider}). The Kubernetes client and the operator framework stay at WARN unless the level is
 * debug or trace, and never go below DEBUG ({@link #LIBRARY_FLOOR}). Until {@link #configure} runs:
 * text, INFO, libraries at WARN.
 *
 * <p>No line holds a credential at any level (SPEC §10): the libraries' trace output, which is
 * where credentials would be, is never on; the JDK HTTP client's own wire log is switched off
 * ({@link #JDK_HTTP_LOG_PROPERTY}); and every line is masked before it is written ({@link
 * CredentialMask}) in case a message carries one anyway.
 */
public final class Logging {

  /**
   * Loggers of the libraries kept at WARN at the info level (the last is JOSDK's configuration
   * service, which logs under that name rather than a package).
   */
  public static final List<String> LIBRARY_LOGGERS =
      List.of("io.fabric8", "io.javaoperatorsdk", "Default ConfigurationService implementation");

  /**
   * The least severe level a library logger ever writes, whatever {@code --log-level} says. Their
   * TRACE lines are where credentials are: fabric8 installs its {@link #HTTP_WIRE_LOGGER} only when
   * that logger is on at TRACE, and it then logs every request's and answer's headers and bodies
   * (the ServiceAccount token in {@code Authorization}, a Secret's whole {@code data}); JOSDK logs
   * whole primary resources at TRACE (a Deployment with its environment: a datastore URI with its
   * password, a pre-shared key). None of their TRACE lines says more than that.
   */
  static final Level LIBRARY_FLOOR = Level.DEBUG;

  /**
   * fabric8's HTTP wire log (every header and body of every request to the API server); a library
   * logger, so it never writes below {@link #LIBRARY_FLOOR} and fabric8 never installs it.
   */
  public static final String HTTP_WIRE_LOGGER =
      "io.fabric8.kubernetes.client.http.HttpLoggingInterceptor";

  /**
   * The system property that turns on the JDK HTTP client's wire log (used by the Kubernetes client
   * and for OpenFGA and token requests), written to standard error past this backend with every
   * header, {@code Authorization} included. {@link #configure} removes it before any HTTP client is
   * made.
   */
  public static final String JDK_HTTP_LOG_PROPERTY = "jdk.httpclient.HttpClient.log";

  /** No event passes (a command line that prints only its own output). */
  private static final int OFF = Integer.MAX_VALUE;

  private record State(LoggingConfig.Format format, int own, int libraries, PrintStream out) {}

  private static volatile State state = state(LoggingConfig.DEFAULT, null);

  private Logging() {}

  /**
   * Applies the flags; from now on events go to standard output as it is now. Also switches the JDK
   * HTTP client's wire log off (with a warning if it was asked for): call it before any HTTP client
   * is made, since the JDK reads that property once.
   */
  public static void configure(LoggingConfig config) {
    configure(config, System.out);
  }

  /** Applies the flags, writing to {@code out} (tests). */
  static void configure(LoggingConfig config, PrintStream out) {
    state = state(config, out);
    String wireLog = System.getProperty(JDK_HTTP_LOG_PROPERTY);
    if (wireLog != null) {
      System.clearProperty(JDK_HTTP_LOG_PROPERTY);
      LoggerFactory.getLogger(Logging.class)
          .atWarn()
          .addKeyValue("property", JDK_HTTP_LOG_PROPERTY)
          .addKeyValue("value", wireLog)
          .log("Ignoring -D{}: the JDK HTTP client would log credentials", JDK_HTTP_LOG_PROPERTY);
    }
  }

  /** Nothing is logged any more (a command line whose output is its result). */
  public static void off() {
    State s = state;
    state = new State(s.format(), OFF, OFF, s.out());
  }

  private static State state(LoggingConfig config, PrintStream out) {
    int own = level(config.level()).toInt();
    boolean quietLibraries =
        !config.level().isVerbose() && config.level().compareTo(LoggingConfig.Level.WARN) < 0;
    int libraries = quietLibraries ? Level.WARN.toInt() : Math.max(own, LIBRARY_FLOOR.toInt());
    return new State(config.format(), own, libraries, out);
  }

  /** Whether events of {@code level} are written, from a library's logger or the operator's. */
  static boolean enabled(boolean library, Level level) {
    State s = state;
    return level.toInt() >= (library ? s.libraries() : s.own());
  }

  /** Whether the logger {@code name} is one of {@link #LIBRARY_LOGGERS} or below one. */
  static boolean isLibrary(String name) {
    for (String library : LIBRARY_LOGGERS) {
      if (name.startsWith(library)
          && (name.length() == library.length() || name.charAt(library.length()) == '.')) {
        return true;
      }
    }
    return false;
  }

  /**
   * Writes one event, whole, in the configured format, as UTF-8 bytes: a {@code PrintStream} would
   * encode with the platform's encoding, which is ASCII in an image without a locale. Never throws:
   * a logging call must not fail the code that logs.
   */
  static void write(LogLine line) {
    State s = state;
    PrintStream out = s.out() == null ? System.out : s.out();
    try {
      String text =
          CredentialMask.mask(s.format() == LoggingConfig.Format.JSON ? line.json() : line.text());
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      out.write(bytes, 0, bytes.length);
      out.flush();
    } catch (RuntimeException e) {
      out.println("log line of " + line.logger() + " could not be written: " + e);
    }
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
