package dev.openfga.operator.ops;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import dev.openfga.operator.config.LoggingConfig;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.event.KeyValuePair;

class LoggingTest {

  private final LoggerContext context = new LoggerContext();

  LoggingTest() {
    context.setMDCAdapter(new LogbackMDCAdapter());
  }

  private LoggingEvent event(String message, Object... arguments) {
    Logger logger = context.getLogger("dev.openfga.operator.controller.Reconciler");
    LoggingEvent event =
        new LoggingEvent(Logger.class.getName(), logger, Level.INFO, message, null, arguments);
    event.setInstant(Instant.parse("2025-03-04T05:06:07.080Z"));
    return event;
  }

  private String encode(LoggingConfig.Format format, ILoggingEvent event) {
    Encoder<ILoggingEvent> encoder = Logging.encoder(context, format);
    return new String(encoder.encode(event), StandardCharsets.UTF_8);
  }

  @Test
  void textIsOneLineWithTimeLevelLoggerMessageAndKeyValues() {
    LoggingEvent event = event("Created Job {}", "openfga-migrate");
    event.addKeyValuePair(new KeyValuePair("version", "v1.14.1"));
    event.addKeyValuePair(new KeyValuePair("reason", "new version"));
    event.setMDCPropertyMap(Map.of("resource.namespace", "team-a", "resource.name", "openfga"));

    assertThat(encode(LoggingConfig.Format.TEXT, event))
        .isEqualTo(
            "2025-03-04T05:06:07.080Z INFO  dev.openfga.operator.controller.Reconciler - Created"
                + " Job openfga-migrate version=v1.14.1 reason=\"new version\""
                + " resource.name=openfga resource.namespace=team-a"
                + System.lineSeparator());
  }

  @Test
  void textAppendsTheStackTraceAfterTheLine() {
    LoggingEvent event = event("Failed to start");
    event.setThrowableProxy(
        new ch.qos.logback.classic.spi.ThrowableProxy(new IllegalStateException("boom")));

    String text = encode(LoggingConfig.Format.TEXT, event);

    assertThat(text.lines().findFirst())
        .hasValue(
            "2025-03-04T05:06:07.080Z INFO  dev.openfga.operator.controller.Reconciler - Failed to"
                + " start");
    assertThat(text).contains("java.lang.IllegalStateException: boom");
  }

  @Test
  void jsonIsOneObjectPerLineWithTheFormattedMessage() {
    LoggingEvent event = event("Created Job {}", "openfga-migrate");
    event.addKeyValuePair(new KeyValuePair("version", "v1.14.1"));
    event.setMDCPropertyMap(Map.of("resource.name", "openfga"));

    String json = encode(LoggingConfig.Format.JSON, event);

    assertThat(json.lines()).hasSize(1);
    assertThat(json)
        .startsWith("{")
        .contains("\"level\":\"INFO\"")
        .contains("\"loggerName\":\"dev.openfga.operator.controller.Reconciler\"")
        .contains("\"formattedMessage\":\"Created Job openfga-migrate\"")
        .contains("\"version\":\"v1.14.1\"")
        .contains("\"resource.name\":\"openfga\"")
        .doesNotContain("\"message\":\"Created Job {}\"")
        .doesNotContain("sequenceNumber");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "TRACE, TRACE, ",
    "DEBUG, DEBUG, ",
    "INFO, INFO, WARN",
    "WARN, WARN, ",
    "ERROR, ERROR, "
  })
  void setsTheLevelAndQuietensLibrariesAtInfo(
      LoggingConfig.Level level, String root, String libraries) {
    Logging.configure(context, new LoggingConfig(LoggingConfig.Format.TEXT, level));

    assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getLevel())
        .isEqualTo(Level.toLevel(root));
    for (String library : Logging.LIBRARY_LOGGERS) {
      assertThat(context.getLogger(library).getLevel())
          .isEqualTo(libraries == null ? null : Level.toLevel(libraries));
    }
  }

  @Test
  void infoLetsLibraryWarningsThroughButNotTheirInfo() {
    Logging.configure(context, LoggingConfig.DEFAULT);

    assertThat(context.getLogger("io.fabric8.kubernetes.client.informers").isInfoEnabled())
        .isFalse();
    assertThat(context.getLogger("io.javaoperatorsdk.operator.Operator").isWarnEnabled()).isTrue();
    assertThat(context.getLogger("dev.openfga.operator.Main").isInfoEnabled()).isTrue();
  }

  @Test
  void writesToOneConsoleAppenderWithTheChosenEncoder() {
    Logging.configure(
        context, new LoggingConfig(LoggingConfig.Format.JSON, LoggingConfig.Level.INFO));

    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    assertThat(root.getAppender("console"))
        .isInstanceOfSatisfying(
            ConsoleAppender.class,
            console -> assertThat(console.getEncoder()).isInstanceOf(JsonEncoder.class));
    assertThat(root.iteratorForAppenders()).toIterable().hasSize(1);
  }
}
