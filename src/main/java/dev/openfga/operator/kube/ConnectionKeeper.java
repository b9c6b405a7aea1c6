package dev.openfga.operator.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Without leader election: a {@code GET /version} every {@link #PERIOD} on the client's connection,
 * so that it never idles long enough to be closed (docs/performance.md, "The first reaction after a
 * long idle").
 *
 * <p>fabric8 runs each watch as a WebSocket on a connection of its own; every other request shares
 * one HTTP/2 connection, which the JDK client closes after 30 s with nothing in flight. The first
 * write of the next migration then opens a new connection and waits for a TLS handshake, on the
 * reaction after a quiet week, the one that matters most. With leader election (the chart's
 * default) the Lease is renewed every 2 s on that connection and this is not needed. A connection
 * that a load balancer or connection tracking drops silently after some idle time is kept too.
 * {@code /version} is readable by every authenticated client (the built-in {@code
 * system:public-info-viewer} role) and small; its answer is not decoded. The first answer is logged
 * (info); a failure is logged as a warning once until the next success, and changes nothing else.
 *
 * <p>Test-only system property: {@code -Dopenfga.operator.test.connectionKeeperMillis=n} sets the
 * period (the real-cluster tier does not wait 20 s).
 */
public final class ConnectionKeeper implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionKeeper.class);

  /** Below the JDK client's 30 s idle timeout, with room for a late timer. */
  public static final Duration PERIOD =
      Duration.ofMillis(Long.getLong("openfga.operator.test.connectionKeeperMillis", 20_000));

  private final ScheduledExecutorService timer;

  /** Whether the last request failed (a failure is logged once until the next success). */
  private final AtomicBoolean failing = new AtomicBoolean();

  /** Whether an answer has been logged yet (only the first is). */
  private final AtomicBoolean firstAnswerLogged = new AtomicBoolean();

  private ConnectionKeeper(ScheduledExecutorService timer) {
    this.timer = timer;
  }

  /** Starts sending {@code GET /version} through {@code client} every {@code period}. */
  public static ConnectionKeeper start(KubernetesClient client, Duration period) {
    ScheduledExecutorService timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "connection-keeper");
              t.setDaemon(true);
              return t;
            });
    String url = client.getMasterUrl().toString().replaceAll("/$", "") + "/version";
    HttpRequest request =
        client
            .getHttpClient()
            .newHttpRequestBuilder()
            .uri(url)
            .timeout(5, TimeUnit.SECONDS)
            .build();
    ConnectionKeeper keeper = new ConnectionKeeper(timer);
    long millis = period.toMillis();
    timer.scheduleAtFixedRate(
        () ->
            client
                .getHttpClient()
                .sendAsync(request, String.class)
                .whenComplete(
                    (response, failure) -> keeper.answered(problem(response, failure), period)),
        millis,
        millis,
        TimeUnit.MILLISECONDS);
    return keeper;
  }

  /** Why the request failed, or {@code null} when it was answered. */
  private static String problem(HttpResponse<String> response, Throwable failure) {
    if (failure != null) {
      return failure.toString();
    }
    return response.isSuccessful() ? null : "HTTP " + response.code();
  }

  /** {@code problem}: why the request failed, or {@code null} when it was answered. */
  private void answered(String problem, Duration period) {
    if (problem == null) {
      failing.set(false);
      if (!firstAnswerLogged.getAndSet(true)) {
        LOG.info(
            "GET /version answered: sent every {} to keep the connection to the API server in use"
                + " (no leader election)",
            period.toMillis() % 1000 == 0 ? period.toSeconds() + " s" : period.toMillis() + " ms");
      }
    } else if (!failing.getAndSet(true)) {
      LOG.warn(
          "GET /version failed ({}): the connection to the API server may be closed while idle,"
              + " and the next migration waits for a new one",
          problem);
    } else {
      LOG.debug("GET /version failed ({})", problem);
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
