package dev.openfga.operator.ops;

import dev.openfga.operator.config.BindAddress;
import java.io.IOException;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * The probes: {@code GET /healthz} answers 200 {@code ok} while the operator is healthy, else 503;
 * {@code GET /readyz} answers 200 {@code ok} once it is ready, else 503.
 */
public final class HealthServer implements AutoCloseable {

  private final PlainHttpServer server;

  private HealthServer(PlainHttpServer server) {
    this.server = server;
  }

  /**
   * Binds {@code address} and starts answering on one thread.
   *
   * @throws IOException when the address cannot be bound
   */
  public static HealthServer start(
      BindAddress address, BooleanSupplier healthy, BooleanSupplier ready) throws IOException {
    return new HealthServer(
        PlainHttpServer.start(
            "health-probes",
            address,
            Map.of(
                "/healthz", exchange -> probe(healthy, "unhealthy"),
                "/readyz", exchange -> probe(ready, "not ready"))));
  }

  /** The bound port (the chosen one when the address asked for port 0). */
  public int port() {
    return server.port();
  }

  @Override
  public void close() {
    server.close();
  }

  private static PlainHttpServer.Response probe(BooleanSupplier check, String failure) {
    boolean passed;
    try {
      passed = check.getAsBoolean();
    } catch (RuntimeException e) {
      passed = false;
    }
    return passed
        ? PlainHttpServer.Response.text(200, "ok")
        : PlainHttpServer.Response.text(503, failure);
  }
}
