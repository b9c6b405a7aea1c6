package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.openfga.Credentials;
import dev.openfga.operator.stores.FGAStore;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §10, "Logs hold no credentials at any level": the packaged operator at {@code logLevel:
 * trace}, with the JDK HTTP client's wire log asked for too, migrates two Deployments whose
 * datastore URI carries its password inline and reconciles an FGAStore with a pre-shared key and
 * one with OIDC client credentials against the real OpenFGA server; then its whole output (standard
 * output and error) is searched for every credential it handled.
 */
class LogSecrecyIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();
  private static final Duration WAIT = Duration.ofMinutes(3);
  private static final String KEY = "log-psk-5e1f0c77";
  private static final String CLIENT_SECRET = "log-oidc-secret-8a3d41";
  private static final String AUDIENCE = "https://api.openfga.example";
  private static final String JDK_WIRE_LOG = "jdk.httpclient.HttpClient.log";

  @Test
  void atTraceTheOperatorsOutputHoldsNoCredentialItHandled() throws Exception {
    String ns = cluster.namespace();
    // the servers' ports are chosen first: their URLs are the chart's storesAndModels.servers
    int pskPort = RealCluster.serverPort();
    int oidcPort = RealCluster.serverPort();
    OperatorInstall install =
        cluster.installOperator(
            ns,
            "leaderElection: {enabled: false}\n"
                + "storesAndModels: {enabled: true, servers: [http://127.0.0.1:"
                + pskPort
                + ", http://127.0.0.1:"
                + oidcPort
                + "]}\n"
                + "logLevel: trace\n");
    OperatorInstall.OperatorProcess operator =
        cluster.startOperator(install, "operator-0", "-D" + JDK_WIRE_LOG + "=all");
    try (OidcIssuer issuer = new OidcIssuer("log-client", CLIENT_SECRET, AUDIENCE)) {
      Postgres.Database pskDb = cluster.postgres().createDatabase("logpsk");
      String pskUrl =
          cluster.serveOpenFga(
              "openfga-psk",
              pskDb,
              Map.of(
                  "OPENFGA_DATASTORE_URI",
                  pskDb.ownerUri(),
                  "OPENFGA_AUTHN_METHOD",
                  "preshared",
                  "OPENFGA_AUTHN_PRESHARED_KEYS",
                  KEY),
              pskPort);
      Postgres.Database oidcDb = cluster.postgres().createDatabase("logoidc");
      String oidcUrl =
          cluster.serveOpenFga(
              "openfga-oidc",
              oidcDb,
              Map.of(
                  "OPENFGA_DATASTORE_URI",
                  oidcDb.ownerUri(),
                  "OPENFGA_AUTHN_METHOD",
                  "oidc",
                  "OPENFGA_AUTHN_OIDC_ISSUER",
                  issuer.url(),
                  "OPENFGA_AUTHN_OIDC_AUDIENCE",
                  AUDIENCE),
              oidcPort);
      secret("psk-key", pskUrl, Map.of("apiToken", KEY));
      secret(
          "oidc-client",
          oidcUrl,
          Map.of(
              "clientId",
              "log-client",
              "clientSecret",
              CLIENT_SECRET,
              "apiTokenIssuer",
              issuer.url() + "/oauth/token",
              "apiAudience",
              AUDIENCE));
      store("psk", pskUrl, "psk-key");
      store("oidc", oidcUrl, "oidc-client");

      // both servers refuse a request without their credentials: Ready means they were sent
      awaitStoreReady("psk");
      awaitStoreReady("oidc");
      for (String name : new String[] {"openfga-psk", "openfga-oidc"}) {
        OpenFgaView openfga = new OpenFgaView(cluster.client(), ns, name);
        await().atMost(WAIT).until(() -> Binaries.NEW_OPENFGA.equals(openfga.recordedVersion()));
      }
      assertThat(issuer.issuedTokens()).as("the operator fetched an access token").isNotEmpty();

      String log = operator.log();

      assertThat(log)
          .as("written at trace, the libraries at debug")
          .contains(" DEBUG io.javaoperatorsdk.")
          .contains(" DEBUG io.fabric8.");
      Map<String, String> credentials = new LinkedHashMap<>();
      credentials.put("the operator's ServiceAccount token", install.serviceAccountToken());
      credentials.put("the pre-shared key", KEY);
      credentials.put("the pre-shared key as Secret data", base64(KEY));
      credentials.put("the OIDC client secret", CLIENT_SECRET);
      credentials.put("the OIDC client secret as Secret data", base64(CLIENT_SECRET));
      credentials.put("a datastore password", pskDb.password());
      credentials.put("another datastore password", oidcDb.password());
      for (int i = 0; i < issuer.issuedTokens().size(); i++) {
        credentials.put("OIDC access token " + (i + 1), issuer.issuedTokens().get(i));
      }
      credentials.forEach((what, value) -> assertThat(log).as(what).doesNotContain(value));
      assertThat(log)
          .as("no JWT, no unmasked bearer token or Authorization value")
          .doesNotContainPattern("eyJ[A-Za-z0-9_-]+\\.eyJ")
          .doesNotContainPattern("(?i)\\bbearer\\s+(?!\\*\\*\\*)[A-Za-z0-9._~+/-]")
          .doesNotContainPattern("(?i)\\bauthorization[\"']?\\s*[:=]\\s*\\[?(?!\\*\\*\\*)\\w");
      assertThat(log).as("the JDK's wire log refused").contains("Ignoring -D" + JDK_WIRE_LOG);
    }
  }

  private static void secret(String name, String server, Map<String, String> data) {
    cluster
        .client()
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(cluster.namespace())
                .addToAnnotations(Credentials.SERVERS, server)
                .endMetadata()
                .withStringData(data)
                .build())
        .create();
  }

  private static void store(String name, String serverUrl, String credentials) {
    FGAStore store = new FGAStore();
    store.setMetadata(
        new ObjectMetaBuilder().withName(name).withNamespace(cluster.namespace()).build());
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName("it-log-" + name);
    FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
    ref.setUrl(serverUrl);
    ref.setCredentialsRef(new FGAStore.NameRef(credentials));
    spec.setOpenfgaRef(ref);
    store.setSpec(spec);
    cluster
        .client()
        .resources(FGAStore.class)
        .inNamespace(cluster.namespace())
        .resource(store)
        .create();
  }

  /** Waits until the FGAStore's Ready condition is True, reading it once per look. */
  private static void awaitStoreReady(String name) {
    await()
        .atMost(WAIT)
        .until(
            () ->
                cluster
                    .client()
                    .resources(FGAStore.class)
                    .inNamespace(cluster.namespace())
                    .withName(name)
                    .get(),
            store -> {
              if (store == null
                  || store.getStatus() == null
                  || store.getStatus().getConditions() == null) {
                return false;
              }
              return store.getStatus().getConditions().stream()
                  .filter(c -> "Ready".equals(c.getType()))
                  .map(Condition::getStatus)
                  .anyMatch("True"::equals);
            });
  }

  private static String base64(String value) {
    return Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
  }
}
