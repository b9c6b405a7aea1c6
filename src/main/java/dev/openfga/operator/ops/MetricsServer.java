package dev.openfga.operator.ops;

import com.sun.net.httpserver.HttpExchange;
import dev.openfga.operator.config.BindAddress;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.expositionformats.OpenMetricsTextFormatWriter;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /metrics} in the Prometheus text format (OpenMetrics when the scraper asks for it),
 * plain HTTP without authentication, as upstream's metrics endpoint.
 */
public final class MetricsServer implements AutoCloseable {

  private final PlainHttpServer server;

  private MetricsServer(PlainHttpServer server) {
    this.server = server;
  }

  /**
   * Binds {@code address} and starts serving the registry's meters on one thread.
   *
   * @throws IOException when the address cannot be bound
   */
  public static MetricsServer start(BindAddress address, PrometheusMeterRegistry registry)
      throws IOException {
    return new MetricsServer(
        PlainHttpServer.start(
            "metrics", address, Map.of("/metrics", exchange -> scrape(exchange, registry))));
  }

  /** The bound port (the chosen one when the address asked for port 0). */
  public int port() {
    return server.port();
  }

  @Override
  public void close() {
    server.close();
  }

  private static PlainHttpServer.Response scrape(
      HttpExchange exchange, PrometheusMeterRegistry registry) {
    List<String> accept = exchange.getRequestHeaders().getOrDefault("Accept", List.of());
    String contentType =
        accept.stream().anyMatch(value -> value.contains("application/openmetrics-text"))
            ? OpenMetricsTextFormatWriter.CONTENT_TYPE
            : PrometheusTextFormatWriter.CONTENT_TYPE;
    byte[] body = registry.scrape(contentType).getBytes(StandardCharsets.UTF_8);
    return new PlainHttpServer.Response(200, contentType, body);
  }
}
