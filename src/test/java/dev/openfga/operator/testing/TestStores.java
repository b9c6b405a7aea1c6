package dev.openfga.operator.testing;

import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.stores.FGAStore;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;

/** FGAStores and FGAModels for the mock-server tests. */
public final class TestStores {
  private TestStores() {}

  /**
   * Creates the FGAStore {@code name} in {@link MockCluster#NS} for the OpenFGA store {@code
   * storeName} at {@code url} (null: no {@code openfgaRef}).
   */
  public static FGAStore create(MockCluster cluster, String name, String storeName, String url) {
    return create(cluster, name, storeName, url, spec -> {});
  }

  /** The same, with the spec changed by {@code edit} before the FGAStore is created. */
  public static FGAStore create(
      MockCluster cluster,
      String name,
      String storeName,
      String url,
      java.util.function.Consumer<FGAStore.Spec> edit) {
    FGAStore store = new FGAStore();
    store.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(MockCluster.NS).build());
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName(storeName);
    if (url != null) {
      FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
      ref.setUrl(url);
      spec.setOpenfgaRef(ref);
    }
    edit.accept(spec);
    store.setSpec(spec);
    return cluster
        .client()
        .resources(FGAStore.class)
        .inNamespace(MockCluster.NS)
        .resource(store)
        .create();
  }

  /** The FGAStore {@code name} as the API server has it now, or null. */
  public static FGAStore get(MockCluster cluster, String name) {
    return cluster
        .client()
        .resources(FGAStore.class)
        .inNamespace(MockCluster.NS)
        .withName(name)
        .get();
  }

  /** The FGAModel {@code name} as the API server has it now, or null. */
  public static FGAModel getModel(MockCluster cluster, String name) {
    return cluster
        .client()
        .resources(FGAModel.class)
        .inNamespace(MockCluster.NS)
        .withName(name)
        .get();
  }

  /** Changes the FGAStore {@code name} on the API server (again after a 409). */
  public static void edit(
      MockCluster cluster, String name, java.util.function.Consumer<FGAStore> change) {
    Edits.edit(
        cluster.client().resources(FGAStore.class).inNamespace(MockCluster.NS).withName(name),
        change);
  }

  /** Changes the FGAModel {@code name} on the API server (again after a 409). */
  public static void editModel(
      MockCluster cluster, String name, java.util.function.Consumer<FGAModel> change) {
    Edits.edit(
        cluster.client().resources(FGAModel.class).inNamespace(MockCluster.NS).withName(name),
        change);
  }
}
