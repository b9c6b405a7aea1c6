package dev.openfga.operator.testing;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A stand-in OpenFGA HTTP API on loopback for the mock-server scenarios of the FGAStore and
 * FGAModel controllers, beside an operator started with {@code --stores-and-models}.
 */
public final class FakeOpenFga implements AutoCloseable {
  private final HttpServer server;

  /** Serves {@code /stores...} with {@code handler}. */
  public FakeOpenFga(HttpHandler handler) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/stores", handler);
    // each request on a thread of its own, as a real server answers several clients at once
    server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    server.start();
  }

  /**
   * Serves {@code /stores...} with {@code handler}, and starts the operator on {@code cluster} with
   * this server ({@link #url}) and {@code moreServers} as the servers FGAStores may name.
   */
  public FakeOpenFga(MockCluster cluster, HttpHandler handler, String... moreServers)
      throws IOException {
    this(cluster, handler, null, moreServers);
  }

  /** The same, with the operator's metrics in {@code registry} ({@code null}: none). */
  public FakeOpenFga(
      MockCluster cluster, HttpHandler handler, MeterRegistry registry, String... moreServers)
      throws IOException {
    this(handler);
    String[] servers = new String[moreServers.length + 1];
    servers[0] = url();
    System.arraycopy(moreServers, 0, servers, 1, moreServers.length);
    cluster.startOperator(
        MockCluster.withStoresAndModels(MockCluster.config(Duration.ofSeconds(2), 1), servers),
        "operator-a",
        registry);
  }

  /** The API's base URL, {@code http://127.0.0.1:<port>}. */
  public String url() {
    return "http://127.0.0.1:" + port();
  }

  /** The port the API listens on. */
  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
