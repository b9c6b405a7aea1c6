package dev.openfga.operator.fga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** How an FGAStore's reconcile takes its credentials from the Secret and the process's cache. */
class StoreCredentialsTest {
  private final MockCluster cluster = new MockCluster();

  @AfterEach
  void stop() {
    cluster.close();
  }

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
                    .endMetadata()
                    .addToData(
                        "apiToken",
                        Base64.getEncoder()
                            .encodeToString("key-1".getBytes(StandardCharsets.UTF_8)))
                    .build())
            .create();
    FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
    ref.setCredentialsRef(new FGAStore.NameRef("creds"));
    Credentials.Cache cache = new Credentials.Cache();

    Credentials kept = StoreReconciler.credentials(cluster.client(), cache, MockCluster.NS, ref);
    assertThat(StoreReconciler.credentials(cluster.client(), cache, MockCluster.NS, ref))
        .isSameAs(kept);

    cluster.client().resource(secret).delete();
    assertThatThrownBy(
            () -> StoreReconciler.credentials(cluster.client(), cache, MockCluster.NS, ref))
        .isInstanceOf(Credentials.CredentialsException.class)
        .hasMessage(
            "Secret " + MockCluster.NS + "/creds (openfgaRef.credentialsRef) does not exist");
    // the same Secret offered again: nothing of it was kept
    assertThat(
            cache.get(
                MockCluster.NS + "/creds",
                secret.getMetadata().getUid(),
                secret.getMetadata().getResourceVersion(),
                secret.getData()))
        .isNotSameAs(kept);
  }
}
