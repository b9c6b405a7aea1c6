package dev.openfga.operator.scenario;

import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.config.BindAddress;
import dev.openfga.operator.ops.MetricsServer;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.MockCluster;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Scrapes the real metrics endpoint after a failure, a retry and a collision. */
class MetricsScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final String OPENFGA = "{deployment=\"openfga\",namespace=\"openfga\"}";

  @RegisterExtension final MockCluster cluster = new MockCluster();
  private PrometheusMeterRegistry registry;
  private MetricsServer server;

  @BeforeEach
  void start() throws Exception {
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    server = MetricsServer.start(BindAddress.parse("127.0.0.1:0"), registry);
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private String scrape() throws Exception {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }

  private static double value(String text, String series) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(series) + " ([0-9.eE+-]+|NaN)$").matcher(text);
    assertThat(m.find()).as("series %s in%n%s", series, text).isTrue();
    return Double.parseDouble(m.group(1));
  }

  @Test
  void migrationSeriesCountAttemptsFailuresSuccessesAndCollisions() throws Exception {
    cluster
        .jobs()
        .script(j -> cluster.jobs().createdByOperator().size() == 1 ? Script.FAIL : Script.SUCCEED);
    cluster.createForeignJob("other-migrate");
    cluster.create(openfga().version("v1.9.0").build());
    cluster.create(openfga().name("other").version("v1.9.0").build());
    cluster.startOperator(MockCluster.config(Duration.ofSeconds(2), 1), "operator-a", registry);

    await().atMost(WAIT).until(() -> cluster.fakeCondition("openfga"), c -> c.equals("True"));
    await()
        .atMost(WAIT)
        .until(() -> value(scrape(), "openfga_operator_migrations_failed_total" + OPENFGA) == 1);
    String failing = scrape();
    assertThat(value(failing, "openfga_operator_deployments_waiting")).isEqualTo(1);
    assertThat(value(failing, "openfga_operator_retry_wait_seconds" + OPENFGA)).isBetween(0.0, 2.0);

    await()
        .atMost(WAIT)
        .until(() -> cluster.recordedVersion("openfga").orElse(""), v -> v.equals("v1.9.0"));
    await()
        .atMost(WAIT)
        .until(() -> value(scrape(), "openfga_operator_deployments{state=\"up_to_date\"}") == 1);
    String text = scrape();
    assertThat(value(text, "openfga_operator_migrations_started_total" + OPENFGA)).isEqualTo(2);
    assertThat(value(text, "openfga_operator_migrations_failed_total" + OPENFGA)).isEqualTo(1);
    assertThat(value(text, "openfga_operator_migrations_succeeded_total" + OPENFGA)).isEqualTo(1);
    assertThat(value(text, "openfga_operator_migration_duration_seconds_count" + OPENFGA))
        .isEqualTo(1);
    assertThat(value(text, "openfga_operator_last_success_timestamp_seconds" + OPENFGA))
        .isGreaterThan(1.7e9);
    assertThat(value(text, "openfga_operator_retry_wait_seconds" + OPENFGA)).isZero();
    assertThat(value(text, "openfga_operator_deployments{state=\"blocked\"}")).isEqualTo(1);
    assertThat(
            value(
                text,
                "openfga_operator_collisions_total{deployment=\"other\",kind=\"job\",namespace=\"openfga\"}"))
        .isEqualTo(1);
    assertThat(value(text, "openfga_operator_deployments_waiting")).isZero();
    // the framework's own reconcile metrics are there too, and no series carries a version
    assertThat(text).contains("operator_sdk_").doesNotContain("v1.9.0");
  }
}
