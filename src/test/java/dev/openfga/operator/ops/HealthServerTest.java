package dev.openfga.operator.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.config.BindAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class HealthServerTest {

  private final HttpClient http = HttpClient.newHttpClient();
  private final AtomicBoolean healthy = new AtomicBoolean(true);
  private final AtomicBoolean ready = new AtomicBoolean(false);
  private HealthServer server;

  @BeforeEach
  void start() throws Exception {
    server = HealthServer.start(BindAddress.parse("127.0.0.1:0"), healthy::get, ready::get);
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private HttpResponse<String> send(String method, String path) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void bindsAnEphemeralPort() {
    assertThat(server.port()).isPositive();
  }

  @Test
  void healthzIsOkWhileHealthy() throws Exception {
    HttpResponse<String> response = send("GET", "/healthz");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("ok\n");
    assertThat(response.headers().firstValue("Content-Type")).contains("text/plain; charset=utf-8");
  }

  @Test
  void healthzIs503WhenUnhealthy() throws Exception {
    healthy.set(false);

    assertThat(send("GET", "/healthz").statusCode()).isEqualTo(503);
  }

  @Test
  void readyzFollowsReadiness() throws Exception {
    assertThat(send("GET", "/readyz").statusCode()).isEqualTo(503);

    ready.set(true);

    HttpResponse<String> response = send("GET", "/readyz");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("ok\n");
  }

  @Test
  void aFailingCheckCountsAsNotReady() throws Exception {
    try (HealthServer failing =
        HealthServer.start(
            BindAddress.parse("127.0.0.1:0"),
            () -> true,
            () -> {
              throw new IllegalStateException("informers gone");
            })) {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + failing.port() + "/readyz"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());

      assertThat(response.statusCode()).isEqualTo(503);
    }
  }

  @Test
  void unknownPathsAre404() throws Exception {
    assertThat(send("GET", "/").statusCode()).isEqualTo(404);
    assertThat(send("GET", "/healthzz").statusCode()).isEqualTo(404);
    assertThat(send("GET", "/healthz/x").statusCode()).isEqualTo(404);
  }

  @Test
  void onlyGetAndHeadAreAllowed() throws Exception {
    HttpResponse<String> post = send("POST", "/healthz");

    assertThat(post.statusCode()).isEqualTo(405);
    assertThat(post.headers().firstValue("Allow")).contains("GET, HEAD");
    assertThat(send("HEAD", "/healthz").statusCode()).isEqualTo(200);
  }
}
