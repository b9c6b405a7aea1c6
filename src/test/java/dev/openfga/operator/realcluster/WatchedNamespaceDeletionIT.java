package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.fga.Credentials;
import dev.openfga.operator.fga.FGAStore;
import dev.openfga.operator.fga.FgaApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A watched namespace deleted whole, with an FGAStore ({@code deletionPolicy: Delete}), its
 * credentials Secret and the chart's Role and RoleBinding for one watched namespace in it: the
 * namespace controller deletes them all at once, in no set order. The namespace must not stay
 * Terminating for good, as it does when the FGAStore's finalizer cannot be removed once the
 * RoleBinding is gone.
 */
class WatchedNamespaceDeletionIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  @Test
  void aWatchedNamespaceDeletedWholeGoesAndItsStoreWithIt() throws Exception {
    // OpenFGA in the class's namespace, migrated by an operator that watches it
    Postgres.Database db = cluster.postgres().createDatabase("nsdelete");
    cluster.startOperator(
        cluster.installOperator(cluster.namespace(), "leaderElection: {enabled: false}\n"),
        "operator-serving");
    String url = cluster.serveOpenFga("openfga", db, Map.of());
    FgaApi fga = new FgaApi(FgaApi.defaultHttpClient(), URI.create(url), Optional::empty);

    // a team's namespace, watched by an operator of its own: the chart's Role is in it
    String team = cluster.newNamespace(cluster.namespace() + "-team", Map.of());
    cluster.startOperator(
        cluster.installOperator(
            team,
            "leaderElection: {enabled: false}\nstoresAndModels: {enabled: true, servers: ["
                + url
                + "]}\n"),
        "operator-team");
    // credentials the store is reached with (this OpenFGA asks for none, and ignores them): the
    // Secret goes with the namespace, and the operator's right to read it with it
    cluster
        .client()
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("openfga-key")
                .withNamespace(team)
                .addToAnnotations(Credentials.SERVERS, url)
                .endMetadata()
                .addToStringData("apiToken", "unused-key")
                .build())
        .create();
    FGAStore store = new FGAStore();
    store.setMetadata(new ObjectMetaBuilder().withName("team").withNamespace(team).build());
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName("it-team");
    spec.setDeletionPolicy(FGAStore.DeletionPolicy.Delete);
    FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
    ref.setUrl(url);
    ref.setCredentialsRef(new FGAStore.NameRef("openfga-key"));
    spec.setOpenfgaRef(ref);
    store.setSpec(spec);
    cluster.client().resource(store).create();
    await()
        .atMost(Duration.ofMinutes(1))
        .until(
            () -> {
              FGAStore read =
                  cluster
                      .client()
                      .resources(FGAStore.class)
                      .inNamespace(team)
                      .withName("team")
                      .get();
              return read != null
                  && read.getStatus() != null
                  && read.getStatus().getStoreId() != null;
            });
    assertThat(fga.storesNamed("it-team")).hasSize(1);

    cluster.client().namespaces().withName(team).delete();

    await()
        .atMost(Duration.ofMinutes(3))
        .until(() -> cluster.client().namespaces().withName(team).get() == null);
    assertThat(fga.storesNamed("it-team")).isEmpty();
  }
}
