package dev.openfga.operator.controller;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Without leader election: a {@code GET /version} every {@link #PERIOD} on the client's connection,
 * so that it never idles long enough to be closed (docs/performance.md, "The first reaction after a
 * long idle").
 *
 * <p>fabric8 runs each watch as a WebSocket on a connection of its own; every other request shares
 * one HTTP/2 connection, which the JDK client closes after 30 s with nothing in flight. The first
 * write of the next migration then opens a new connection and waits for a TLS handshake (about 20
 * ms of a reaction after a quiet week). With leader election (the chart's default) the Lease is
 * renewed every 2 s on that connection and this is not needed. A connection that a load balancer
 * or connection tracking drops silently after some idle time is kept too. {@code /version} is
 * readable by every authenticated client (the built-in {@code system:public-info-viewer} role)
 * and small; its answer is not decoded. A failure is logged at debug and changes nothing.
 */
final class ConnectionKeeper implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionKeeper.class);

  /** Below the JDK client's 30 s idle timeout, with room for a late timer. */
  static final Duration PERIOD = Duration.ofSeconds(20);

  private final ScheduledExecutorService timer;

  private ConnectionKeeper(ScheduledExecutorService timer) {
    this.timer = timer;
  }

  /** Starts sending {@code GET /version} through {@code client} every {@code period}. */
  static ConnectionKeeper start(KubernetesClient client, Duration period) {
    ScheduledExecutorService timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "connection-keeper");
              t.setDaemon(true);
              return t;
            });
    String url = client.getMasterUrl().toString().replaceAll("/$", "") + "/version";
    HttpRequest request =
        client.getHttpClient().newHttpRequestBuilder().uri(url).timeout(5, TimeUnit.SECONDS).build();
    long millis = period.toMillis();
    timer.scheduleAtFixedRate(
        () ->
            client
                .getHttpClient()
                .sendAsync(request, String.class)
                .whenComplete(
                    (response, failure) -> {
                      if (failure != null || !response.isSuccessful()) {
                        LOG.debug(
                            "GET /version: {}",
                            failure != null ? failure.toString() : "HTTP " + response.code());
                      }
                    }),
        millis,
        millis,
        TimeUnit.MILLISECONDS);
    return new ConnectionKeeper(timer);
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
