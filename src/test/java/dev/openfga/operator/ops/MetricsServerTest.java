package dev.openfga.operator.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.config.BindAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class MetricsServerTest {

  private final HttpClient http = HttpClient.newHttpClient();
  private Metrics metrics;
  private MetricsServer server;

  @BeforeEach
  void start() throws Exception {
    metrics = Metrics.create();
    server = MetricsServer.start(BindAddress.parse("127.0.0.1:0"), metrics.registry());
  }

  @AfterEach
  void stop() {
    server.close();
    metrics.close();
  }

  private HttpResponse<String> get(String path, String accept) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path));
    if (accept != null) {
      request.header("Accept", accept);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void servesJvmMetricsInPrometheusTextFormat() throws Exception {
    HttpResponse<String> response = get("/metrics", null);

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("text/plain; version=0.0.4"));
    assertThat(response.body())
        .contains("jvm_memory_used_bytes")
        .contains("jvm_threads_live_threads")
        .contains("jvm_classes_loaded_classes")
        .contains("jvm_gc_")
        .contains("system_cpu_count")
        .contains("process_uptime_seconds")
        .contains("# TYPE ");
  }

  @Test
  void servesOpenMetricsWhenTheScraperAsksForIt() throws Exception {
    HttpResponse<String> response =
        get(
            "/metrics",
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/openmetrics-text"));
    assertThat(response.body()).contains("jvm_").endsWith("# EOF\n");
  }

  @Test
  void servesTextEvenWhenProtobufIsPreferred() throws Exception {
    HttpResponse<String> response =
        get(
            "/metrics",
            "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
                + "encoding=delimited,text/plain;version=0.0.4;q=0.5");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).contains("jvm_memory_used_bytes");
  }

  @Test
  void metersRegisteredLaterAreServed() throws Exception {
    metrics.registry().counter("openfga_migrations_started").increment();

    assertThat(get("/metrics", null).body()).contains("openfga_migrations_started_total 1.0");
  }

  @Test
  void otherPathsAre404() throws Exception {
    assertThat(get("/", null).statusCode()).isEqualTo(404);
  }
}
