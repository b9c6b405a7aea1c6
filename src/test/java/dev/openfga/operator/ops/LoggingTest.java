package dev.openfga.operator.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.config.LoggingConfig;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.HttpLoggingInterceptor;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.javaoperatorsdk.operator.processing.event.source.controller.ControllerEventSource;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;

class LoggingTest {

  private static final Instant TIME = Instant.parse("2025-03-04T05:06:07.080Z");
  private static final String LOGGER = "dev.openfga.operator.controller.Reconciler";

  private final ByteArrayOutputStream written = new ByteArrayOutputStream();

  @AfterEach
  void restoreDefaults() {
    Logging.configure(LoggingConfig.DEFAULT);
    MDC.clear();
  }

  private String output() {
    return written.toString(StandardCharsets.UTF_8);
  }

  private void configure(LoggingConfig.Format format, LoggingConfig.Level level) {
    Logging.configure(
        new LoggingConfig(format, level), new PrintStream(written, true, StandardCharsets.UTF_8));
  }

  private static LogLine line(String message, List<KeyValuePair> pairs, Map<String, String> mdc) {
    return new LogLine(TIME, Level.INFO, LOGGER, "main", message, pairs, mdc, null);
  }

  @Test
  void textIsOneLineWithTimeLevelLoggerMessageAndKeyValues() {
    LogLine line =
        line(
            "Created Job openfga-migrate",
            List.of(
                new KeyValuePair("version", "v1.14.1"), new KeyValuePair("reason", "new version")),
            Map.of("resource.namespace", "team-a", "resource.name", "openfga"));

    assertThat(line.text())
        .isEqualTo(
            "2025-03-04T05:06:07.080Z INFO  dev.openfga.operator.controller.Reconciler - Created"
                + " Job openfga-migrate version=v1.14.1 reason=\"new version\""
                + " resource.name=openfga resource.namespace=team-a"
                + System.lineSeparator());
  }

  @Test
  void textAppendsTheStackTraceAfterTheLine() {
    LogLine line =
        new LogLine(
            TIME,
            Level.ERROR,
            LOGGER,
            "main",
            "Failed to start",
            List.of(),
            Map.of(),
            new IllegalStateException("boom"));

    String text = line.text();

    assertThat(text.lines().findFirst())
        .hasValue(
            "2025-03-04T05:06:07.080Z ERROR dev.openfga.operator.controller.Reconciler - Failed to"
                + " start");
    assertThat(text.lines().skip(1).findFirst()).hasValue("java.lang.IllegalStateException: boom");
    assertThat(text).contains("\tat dev.openfga.operator.ops.LoggingTest");
  }

  @Test
  void jsonIsOneObjectPerLineWithKeyValuesAndMdcAsFields() {
    LogLine line =
        line(
            "said \"hi\"\nand left",
            List.of(new KeyValuePair("version", "v1.14.1"), new KeyValuePair("attempt", 3)),
            Map.of("namespace", "team-a", "deployment", "openfga"));

    assertThat(line.json())
        .isEqualTo(
            "{\"time\":\"2025-03-04T05:06:07.080Z\",\"level\":\"INFO\",\"logger\":\""
                + LOGGER
                + "\",\"thread\":\"main\",\"msg\":\"said \\\"hi\\\"\\nand left\","
                + "\"version\":\"v1.14.1\",\"attempt\":3,"
                + "\"deployment\":\"openfga\",\"namespace\":\"team-a\"}"
                + System.lineSeparator());
  }

  @Test
  void jsonCarriesTheErrorAndItsStackTraceEscaped() {
    LogLine line =
        new LogLine(
            TIME,
            Level.WARN,
            LOGGER,
            "main",
            "Failed to close",
            List.of(),
            Map.of(),
            new IllegalStateException("bo\u0001om"));

    String json = line.json();

    assertThat(json.lines()).hasSize(1);
    assertThat(json)
        .contains("\"error\":\"java.lang.IllegalStateException: bo\\u0001om\"")
        .contains("\"stacktrace\":\"java.lang.IllegalStateException: bo\\u0001om\\n\\tat ");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    // level, operator's lowest level written, libraries' lowest level written
    "TRACE, TRACE, DEBUG",
    "DEBUG, DEBUG, DEBUG",
    "INFO, INFO, WARN",
    "WARN, WARN, WARN",
    "ERROR, ERROR, ERROR"
  })
  void setsTheLevelAndQuietensLibrariesAtInfoAndAtTrace(
      LoggingConfig.Level level, Level own, Level libraries) {
    configure(LoggingConfig.Format.TEXT, level);

    for (Level l : Level.values()) {
      assertThat(Logging.enabled(false, l))
          .as("operator at %s", l)
          .isEqualTo(l.compareTo(own) <= 0);
      assertThat(Logging.enabled(true, l))
          .as("libraries at %s", l)
          .isEqualTo(l.compareTo(libraries) <= 0);
    }
  }

  @Test
  void atTraceNoLibraryLogsAtTraceSoFabric8NeverTurnsItsHttpWireLogOn() {
    configure(LoggingConfig.Format.TEXT, LoggingConfig.Level.TRACE);

    // fabric8 installs its HttpLoggingInterceptor when this logger is on at TRACE
    assertThat(LoggerFactory.getLogger(HttpLoggingInterceptor.class).getName())
        .isEqualTo(Logging.HTTP_WIRE_LOGGER);
    assertThat(LoggerFactory.getLogger(HttpLoggingInterceptor.class).isTraceEnabled()).isFalse();
    // JOSDK logs whole primary resources (a Deployment's env) at TRACE
    assertThat(LoggerFactory.getLogger(ControllerEventSource.class).isTraceEnabled()).isFalse();
    assertThat(LoggerFactory.getLogger(ControllerEventSource.class).isDebugEnabled()).isTrue();
    assertThat(LoggerFactory.getLogger(LOGGER).isTraceEnabled()).isTrue();
  }

  @Test
  void aKubernetesClientMadeAtTraceLogsNeitherItsTokenNorASecretsData() throws Exception {
    String data = "cHNrLTlkMmU="; // a pre-shared key, base64
    configure(LoggingConfig.Format.TEXT, LoggingConfig.Level.TRACE);
    KubernetesMockServer server = new KubernetesMockServer(false);
    server.init();
    server
        .expect()
        .get()
        .withPath("/api/v1/namespaces/team-a/secrets/credentials")
        .andReturn(
            200,
            new SecretBuilder()
                .withNewMetadata()
                .withName("credentials")
                .withNamespace("team-a")
                .endMetadata()
                .withData(Map.of("apiToken", data))
                .build())
        .once();
    Config config =
        new ConfigBuilder(server.createClient().getConfiguration())
            .withOauthToken("sa-token-4f1c")
            .build();
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
      Secret read = client.secrets().inNamespace("team-a").withName("credentials").get();
      assertThat(read.getData()).containsEntry("apiToken", data);
      assertThat(server.getLastRequest().getHeader("Authorization"))
          .isEqualTo("Bearer sa-token-4f1c");
    } finally {
      server.destroy();
    }

    assertThat(output())
        .doesNotContain("sa-token-4f1c")
        .doesNotContain(data)
        .doesNotContain(Logging.HTTP_WIRE_LOGGER);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"TEXT", "JSON"})
  void everyLineIsMaskedBeforeItIsWritten(LoggingConfig.Format format) {
    configure(format, LoggingConfig.Level.INFO);

    LoggerFactory.getLogger("io.fabric8.kubernetes.client.Test")
        .warn(
            "request failed: {}",
            "GET /api/v1/secrets Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln");
    LoggerFactory.getLogger(LOGGER)
        .atInfo()
        .addKeyValue("uri", "postgres://openfga:pw-9f3a@db:5432/openfga")
        .log("failed", new IllegalStateException("sent Bearer psk-77c1"));

    assertThat(output())
        .doesNotContain("eyJ")
        .doesNotContain("pw-9f3a")
        .doesNotContain("psk-77c1")
        .contains("Authorization: ***")
        .contains("postgres://openfga:***@db:5432/openfga")
        .contains("Bearer ***");
  }

  @Test
  void theJdkHttpClientsWireLogIsSwitchedOffWithAWarning() {
    System.setProperty(Logging.JDK_HTTP_LOG_PROPERTY, "headers");
    try {
      configure(LoggingConfig.Format.TEXT, LoggingConfig.Level.INFO);

      assertThat(System.getProperty(Logging.JDK_HTTP_LOG_PROPERTY)).isNull();
      assertThat(output())
          .contains("WARN")
          .contains("Ignoring -Djdk.httpclient.HttpClient.log: the JDK HTTP client would log");
    } finally {
      System.clearProperty(Logging.JDK_HTTP_LOG_PROPERTY);
    }
  }

  @Test
  void librariesAreTheNamedLoggersAndThoseBelowThem() {
    assertThat(Logging.isLibrary("io.fabric8")).isTrue();
    assertThat(Logging.isLibrary("io.fabric8.kubernetes.client.informers")).isTrue();
    assertThat(Logging.isLibrary("io.javaoperatorsdk.operator.Operator")).isTrue();
    assertThat(Logging.isLibrary("Default ConfigurationService implementation")).isTrue();
    assertThat(Logging.isLibrary("io.fabric8x.Other")).isFalse();
    assertThat(Logging.isLibrary("dev.openfga.operator.Main")).isFalse();
  }

  @Test
  void slf4jLoggersWriteThroughTheConfiguredFormat() {
    configure(LoggingConfig.Format.JSON, LoggingConfig.Level.INFO);
    Logger operator = LoggerFactory.getLogger("dev.openfga.operator.controller.Test");
    Logger library = LoggerFactory.getLogger("io.fabric8.kubernetes.client.Test");

    MDC.put("namespace", "team-a");
    operator.atInfo().addKeyValue("version", "v1.9.0").log("migration to {} started", "v1.9.0");
    operator.debug("not written at info");
    library.info("not written: libraries stay at warn");
    library.warn("written", new IllegalStateException("boom"));

    List<String> lines = output().lines().toList();
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0))
        .contains("\"logger\":\"dev.openfga.operator.controller.Test\"")
        .contains("\"msg\":\"migration to v1.9.0 started\"")
        .contains("\"version\":\"v1.9.0\"")
        .contains("\"namespace\":\"team-a\"");
    assertThat(lines.get(1))
        .contains("\"level\":\"WARN\"")
        .contains("\"msg\":\"written\"")
        .contains("\"error\":\"java.lang.IllegalStateException: boom\"");
  }

  @Test
  void writesUtf8WhateverTheEncodingOfTheStream() {
    // an image without a locale gives standard output an ASCII encoding
    Logging.configure(
        new LoggingConfig(LoggingConfig.Format.TEXT, LoggingConfig.Level.INFO),
        new PrintStream(written, true, StandardCharsets.US_ASCII));

    LoggerFactory.getLogger(LOGGER).info("migration failed: é ü 日本 —");

    assertThat(output()).contains("migration failed: é ü 日本 —");
  }

  @Test
  void nullsAreWrittenNotThrown() {
    configure(LoggingConfig.Format.JSON, LoggingConfig.Level.INFO);
    Logger logger = LoggerFactory.getLogger(LOGGER);
    java.util.HashMap<String, String> mdc = new java.util.HashMap<>();
    mdc.put("job", null);

    logger.info((String) null);
    logger.atInfo().addKeyValue(null, "v").log("key null");
    String json =
        line("m", List.of(), mdc).json()
            + new LogLine(TIME, Level.INFO, LOGGER, "main", null, List.of(), Map.of(), null).json();

    assertThat(output().lines())
        .hasSize(2)
        .anySatisfy(l -> assertThat(l).contains("\"msg\":\"null\""))
        .anySatisfy(l -> assertThat(l).contains("\"null\":\"v\""));
    assertThat(json).contains("\"job\":\"null\"").contains("\"msg\":\"null\"");
  }

  @Test
  void jsonKeepsItsOwnFieldsAndWritesOnlyValidNumbers() {
    LogLine line =
        line(
            "the message",
            List.of(
                new KeyValuePair("msg", "from a key/value"),
                new KeyValuePair("ratio", Double.NaN),
                new KeyValuePair("count", 3)),
            Map.of("level", "from the MDC"));

    assertThat(line.json())
        .contains("\"msg\":\"the message\"")
        .contains("\"_msg\":\"from a key/value\"")
        .contains("\"level\":\"INFO\"")
        .contains("\"_level\":\"from the MDC\"")
        .contains("\"ratio\":\"NaN\"")
        .contains("\"count\":3");
  }

  @Test
  void theMdcIsNotHandedToThreadsStartedMeanwhile() throws InterruptedException {
    configure(LoggingConfig.Format.TEXT, LoggingConfig.Level.INFO);
    MDC.put("deployment", "openfga");
    Thread child = new Thread(() -> LoggerFactory.getLogger(LOGGER).info("from a pool thread"));
    child.start();
    child.join();
    MDC.remove("deployment");

    assertThat(output()).contains("from a pool thread").doesNotContain("deployment=");
  }

  @Test
  void offWritesNothing() {
    configure(LoggingConfig.Format.TEXT, LoggingConfig.Level.TRACE);
    Logging.off();

    LoggerFactory.getLogger("dev.openfga.operator.Main").error("not written");

    assertThat(output()).isEmpty();
  }
}
