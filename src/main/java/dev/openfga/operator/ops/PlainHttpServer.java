package dev.openfga.operator.ops;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.openfga.operator.config.BindAddress;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * The JDK's HTTP server on one thread, answering {@code GET} and {@code HEAD} on a few exact paths;
 * other paths get 404 and other methods 405. Shared by the health and the metrics endpoints.
 */
final class PlainHttpServer implements AutoCloseable {

  static final String TEXT = "text/plain; charset=utf-8";

  /** What a path answers. */
  record Response(int status, String contentType, byte[] body) {

    static Response text(int status, String body) {
      return new Response(status, TEXT, (body + "\n").getBytes(StandardCharsets.UTF_8));
    }
  }

  private final HttpServer server;
  private final ExecutorService executor;

  private PlainHttpServer(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /**
   * Binds and starts serving.
   *
   * @param name names the serving thread
   * @param routes exact path to what it answers, given the request
   * @throws IOException when the address cannot be bound
   */
  static PlainHttpServer start(
      String name, BindAddress address, Map<String, Function<HttpExchange, Response>> routes)
      throws IOException {
    HttpServer server = HttpServer.create(address.toSocketAddress(), 0);
    ExecutorService executor =
        Executors.newSingleThreadExecutor(
            task -> {
              Thread thread = new Thread(task, name);
              thread.setDaemon(true);
              return thread;
            });
    Map<String, Function<HttpExchange, Response>> copy = Map.copyOf(routes);
    server.createContext("/", exchange -> serve(exchange, copy));
    server.setExecutor(executor);
    server.start();
    return new PlainHttpServer(server, executor);
  }

  /** The bound port (the chosen one when the address asked for port 0). */
  int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }

  private static void serve(
      HttpExchange exchange, Map<String, Function<HttpExchange, Response>> routes)
      throws IOException {
    try (exchange;
        InputStream request = exchange.getRequestBody()) {
      request.transferTo(OutputStream.nullOutputStream());
      String method = exchange.getRequestMethod();
      Function<HttpExchange, Response> route = routes.get(exchange.getRequestURI().getPath());
      Response response;
      if (route == null) {
        response = Response.text(404, "not found");
      } else if (!method.equals("GET") && !method.equals("HEAD")) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        response = Response.text(405, "method not allowed");
      } else {
        try {
          response = route.apply(exchange);
        } catch (RuntimeException e) {
          response = Response.text(500, "internal error");
        }
      }
      exchange.getResponseHeaders().set("Content-Type", response.contentType());
      if (method.equals("HEAD")) {
        exchange.sendResponseHeaders(response.status(), -1);
      } else {
        exchange.sendResponseHeaders(response.status(), response.body().length);
        try (OutputStream body = exchange.getResponseBody()) {
          body.write(response.body());
        }
      }
    }
  }
}
