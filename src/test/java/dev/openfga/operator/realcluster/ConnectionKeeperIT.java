package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Without leader election the operator keeps its connection to the API server in use with {@code
 * GET /version}: the chart's ServiceAccount may read it (the API server's built-in {@code
 * system:public-info-viewer} role; the chart grants nothing for it), and the operator's own
 * requests are answered.
 */
class ConnectionKeeperIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  @Test
  void theChartsServiceAccountReadsTheVersionAndTheOperatorsKeepAliveIsAnswered() throws Exception {
    OperatorInstall install =
        cluster.installOperator(cluster.namespace(), "leaderElection: {enabled: false}\n");
    try (KubernetesClient asOperator = install.client()) {
      HttpRequest request =
          asOperator
              .getHttpClient()
              .newHttpRequestBuilder()
              .uri(asOperator.getMasterUrl().toString().replaceAll("/$", "") + "/version")
              .build();
      HttpResponse<String> response =
          asOperator.getHttpClient().sendAsync(request, String.class).get(30, TimeUnit.SECONDS);
      assertThat(response.code()).isEqualTo(200);
      assertThat(response.body()).contains("\"gitVersion\"");
      // a resource the chart grants nothing on is refused: the token is the ServiceAccount's
      assertThat(
              asOperator
                  .getHttpClient()
                  .sendAsync(
                      asOperator
                          .getHttpClient()
                          .newHttpRequestBuilder()
                          .uri(
                              asOperator.getMasterUrl().toString().replaceAll("/$", "")
                                  + "/api/v1/secrets")
                          .build(),
                      String.class)
                  .get(30, TimeUnit.SECONDS)
                  .code())
          .isEqualTo(403);
    }
    OperatorInstall.OperatorProcess operator =
        cluster.startOperator(
            install, "operator-0", "-Dopenfga.operator.test.connectionKeeperMillis=300");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(operator.log())
                    .contains("GET /version answered: sent every 300 ms")
                    .doesNotContain("GET /version failed"));
    // a negative assertion: five more periods, and still no failed GET /version
    Thread.sleep(1500);
    assertThat(operator.log()).doesNotContain("GET /version failed");
    assertThat(operator.isAlive()).isTrue();
  }
}
