package dev.openfga.operator.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An HTTP proxy on 127.0.0.1 in front of an OpenFGA server's HTTP API that counts every request by
 * kind ({@code POST /stores/{id}/write 200}: method, path with ids replaced, status) and, for
 * Writes, the tuple keys they carried: what the operator asked of OpenFGA, counted where it
 * arrives. Requests are forwarded one to one (HTTP/1.1), bodies buffered.
 */
final class CountingProxy implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The OpenFGA ids in a path: ULIDs (26 characters of Crockford base32). */
  private static final java.util.regex.Pattern ID =
      java.util.regex.Pattern.compile("/[0-9A-HJKMNP-TV-Z]{26}(?=/|$)");

  private static final List<String> FORWARDED =
      List.of("Content-Type", "Accept", "Authorization", "Grpc-Metadata-Authorization");

  private final HttpServer server;
  private final ExecutorService pool = Executors.newFixedThreadPool(8);
  private final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  private final URI target;
  private final Map<String, AtomicLong> counts = new java.util.concurrent.ConcurrentHashMap<>();
  private final AtomicLong tuplesWritten = new AtomicLong();
  private final AtomicLong tuplesDeleted = new AtomicLong();

  private CountingProxy(HttpServer server, URI target) {
    this.server = server;
    this.target = target;
  }

  static CountingProxy start(String targetUrl) throws IOException {
    HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    CountingProxy proxy = new CountingProxy(s, URI.create(targetUrl));
    s.createContext("/", proxy::forward);
    s.setExecutor(proxy.pool);
    s.start();
    return proxy;
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private void forward(HttpExchange ex) throws IOException {
    try (ex) {
      byte[] body = ex.getRequestBody().readAllBytes();
      String path = ex.getRequestURI().getRawPath();
      String query = ex.getRequestURI().getRawQuery();
      HttpRequest.Builder req =
          HttpRequest.newBuilder(target.resolve(path + (query == null ? "" : "?" + query)))
              .timeout(Duration.ofSeconds(60))
              .method(
                  ex.getRequestMethod(),
                  body.length == 0
                      ? HttpRequest.BodyPublishers.noBody()
                      : HttpRequest.BodyPublishers.ofByteArray(body));
      for (String h : FORWARDED) {
        String v = ex.getRequestHeaders().getFirst(h);
        if (v != null) {
          req.header(h, v);
        }
      }
      HttpResponse<byte[]> res;
      try {
        res = client.send(req.build(), HttpResponse.BodyHandlers.ofByteArray());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException(e);
      } catch (IOException e) {
        count(ex.getRequestMethod() + " " + ID.matcher(path).replaceAll("/{id}") + " 502", body);
        ex.sendResponseHeaders(502, -1);
        return;
      }
      String kind =
          ex.getRequestMethod()
              + " "
              + ID.matcher(path).replaceAll("/{id}")
              + " "
              + res.statusCode();
      count(kind, res.statusCode() == 200 ? body : new byte[0]);
      res.headers()
          .firstValue("Content-Type")
          .ifPresent(v -> ex.getResponseHeaders().add("Content-Type", v));
      byte[] out = res.body();
      ex.sendResponseHeaders(res.statusCode(), out.length == 0 ? -1 : out.length);
      if (out.length > 0) {
        ex.getResponseBody().write(out);
      }
    }
  }

  /** Counts a request; a Write's tuple keys when it succeeded. */
  private void count(String kind, byte[] body) {
    counts.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
    if (kind.contains("/write ") && body.length > 0) {
      try {
        JsonNode w = JSON.readTree(body);
        tuplesWritten.addAndGet(w.path("writes").path("tuple_keys").size());
        tuplesDeleted.addAndGet(w.path("deletes").path("tuple_keys").size());
      } catch (IOException e) {
        // not JSON: counted as a request only
      }
    }
  }

  /** The counts so far by kind, sorted, and resets them. */
  Snapshot take() {
    Map<String, Long> c = new TreeMap<>();
    counts.forEach((k, v) -> c.put(k, v.getAndSet(0)));
    c.values().removeIf(v -> v == 0);
    return new Snapshot(c, tuplesWritten.getAndSet(0), tuplesDeleted.getAndSet(0));
  }

  /** Requests by kind, and the tuple keys the successful Writes created and deleted. */
  record Snapshot(Map<String, Long> byKind, long tuplesWritten, long tuplesDeleted) {
    long total() {
      return byKind.values().stream().mapToLong(Long::longValue).sum();
    }

    long of(String prefix) {
      return byKind.entrySet().stream()
          .filter(e -> e.getKey().startsWith(prefix) || e.getKey().contains(prefix))
          .mapToLong(Map.Entry::getValue)
          .sum();
    }

    String summary() {
      if (byKind.isEmpty()) {
        return "none";
      }
      StringBuilder s = new StringBuilder();
      byKind.forEach((k, v) -> s.append(s.length() == 0 ? "" : ", ").append(v).append(" ").append(k));
      return s.toString();
    }
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
  }
}
