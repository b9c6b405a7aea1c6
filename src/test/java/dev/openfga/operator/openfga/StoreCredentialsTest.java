package dev.openfga.operator.openfga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** How an FGAStore's reconcile takes its credentials from the Secret and the process's cache. */
class StoreCredentialsTest {
  private static final java.time.Instant NOW = java.time.Instant.parse("2026-12-03T10:00:00Z");

  private static final String URL = "http://openfga.fga:8080";

  @RegisterExtension final MockCluster cluster = new MockCluster();

  @Test
  void aSecretFoundGoneIsRefusedByNameAndDroppedFromTheCache() throws Exception {
    Secret secret =
        cluster
            .client()
            .resource(
                new SecretBuilder()
                    .withNewMetadata()
                    .withName("creds")
                    .withNamespace(MockCluster.NS)
                    .addToAnnotations(Credentials.SERVERS, URL)
                    .endMetadata()
                    .addToData(
                        "apiToken",
                        Base64.getEncoder()
                            .encodeToString("key-1".getBytes(StandardCharsets.UTF_8)))
                    .build())
            .create();
    Credentials.Cache cache = new Credentials.Cache();

    Connector connector =
        new Connector(
            cluster.client(),
            FgaApi.defaultHttpClient(),
            cache,
            java.time.Clock.fixed(NOW, java.time.ZoneOffset.UTC));
    Credentials kept = connector.credentials(MockCluster.NS, "creds");
    assertThat(connector.credentials(MockCluster.NS, "creds")).isSameAs(kept);

    cluster.client().resource(secret).delete();
    assertThatThrownBy(() -> connector.credentials(MockCluster.NS, "creds"))
        .isInstanceOf(Credentials.CredentialsException.class)
        .hasMessage(
            "Secret " + MockCluster.NS + "/creds (openfgaRef.credentialsRef) does not exist");
    // kept a while only for the deletion of a store that used it (its FGAStore deleted with it)
    assertThat(cache.kept(MockCluster.NS + "/creds", NOW.plusSeconds(60))).containsSame(kept);
    assertThat(cache.kept(MockCluster.NS + "/creds", NOW.plus(Credentials.Cache.KEPT_AFTER_GONE)))
        .isEmpty();
    // the same Secret offered again: nothing of it was kept
    assertThat(
            cache.get(
                MockCluster.NS + "/creds",
                secret.getMetadata().getUid(),
                secret.getMetadata().getResourceVersion(),
                URL,
                secret.getData()))
        .isNotSameAs(kept);
  }

  @Test
  void aSecretsCredentialsAreSentOnlyToTheServersItsAnnotationNames() throws Exception {
    java.net.http.HttpClient http = FgaApi.defaultHttpClient();
    java.time.Clock clock = java.time.Clock.fixed(NOW, java.time.ZoneOffset.UTC);
    Credentials.Cache cache = new Credentials.Cache();
    Connector connector = new Connector(cluster.client(), http, cache, clock);
    Secret secret =
        new SecretBuilder()
            .withNewMetadata()
            .withName("creds")
            .withNamespace(MockCluster.NS)
            .endMetadata()
            .addToData("apiToken", "a2V5")
            .build();
    cluster.client().resource(secret).create();

    assertThatThrownBy(() -> connector.connect(MockCluster.NS, URL, "creds"))
        .isInstanceOf(Credentials.CredentialsException.class)
        .hasMessage(
            "Secret "
                + MockCluster.NS
                + "/creds has no annotation openfga.dev/openfga-url: its credentials go only to"
                + " the OpenFGA servers it names; annotate it with openfga.dev/openfga-url="
                + URL
                + " if they are meant for that server");

    cluster
        .client()
        .secrets()
        .inNamespace(MockCluster.NS)
        .withName("creds")
        .edit(
            s -> {
              s.getMetadata()
                  .setAnnotations(
                      java.util.Map.of(Credentials.SERVERS, " http://other:8080, " + URL + "/ "));
              return s;
            });
    // a server it names, written with or without a trailing '/'
    assertThat(connector.connect(MockCluster.NS, URL, "creds")).isNotNull();
    assertThat(connector.connect(MockCluster.NS, URL + "/", "creds")).isNotNull();
    assertThatThrownBy(() -> connector.connect(MockCluster.NS, "http://elsewhere:8080", "creds"))
        .hasMessageStartingWith(
            "Secret "
                + MockCluster.NS
                + "/creds's annotation openfga.dev/openfga-url does not name"
                + " http://elsewhere:8080: ");
    // nor do the credentials kept for a deletion go anywhere else
    assertThatThrownBy(
            () ->
                cache
                    .kept(MockCluster.NS + "/creds", NOW)
                    .get()
                    .checkServer("http://elsewhere:8080"))
        .isInstanceOf(Credentials.CredentialsException.class);
  }
}
