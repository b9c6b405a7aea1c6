package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The tier's real OpenFGA server: a Deployment whose pods ask for it ({@link TestKubelet#SERVE})
 * runs the real {@code openfga run} on PostgreSQL after the operator's migration, becomes available
 * once the server answers, and serves the OpenFGA API to the tests.
 */
class OpenFgaServerIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  @Test
  void aServingDeploymentRunsTheRealServerOnTheMigratedDatabase() throws Exception {
    Postgres.Database db = cluster.postgres().createDatabase("serving");
    cluster.startOperator(
        cluster.installOperator(cluster.namespace(), "leaderElection: {enabled: false}\n"),
        "operator-0");
    OpenFgaView openfga = new OpenFgaView(cluster.client(), cluster.namespace(), "openfga");
    String url = cluster.serveOpenFga("openfga", db, java.util.Map.of());
    // the server is ready only on a migrated schema; the operator records the migration
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.NEW_OPENFGA));

    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> created =
        http.send(
            HttpRequest.newBuilder(URI.create(url + "/stores"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"it-store\"}"))
                .header("Content-Type", "application/json")
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    HttpResponse<String> listed =
        http.send(
            HttpRequest.newBuilder(URI.create(url + "/stores")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(listed.statusCode()).isEqualTo(200);
    assertThat(listed.body()).contains("\"name\":\"it-store\"");
    // the store is in the PostgreSQL database the operator migrated
    assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(6);
  }
}
