package dev.openfga.operator.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.config.OperatorConfig;
import dev.openfga.operator.kube.ConditionedStatus;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.stores.StoreReason;
import dev.openfga.operator.testing.Edits;
import dev.openfga.operator.testing.FakeOpenFga;
import dev.openfga.operator.testing.InMemoryOpenFga;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A store belongs to one namespace: two watched namespaces whose FGAStores name one store, in the
 * real operator against the mock API server and a fake OpenFGA. The real-cluster counterpart is in
 * {@code StoreIT}.
 */
class StoreClaimScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final String TEAM_A = MockCluster.NS;
  private static final String TEAM_B = "team-b";

  @RegisterExtension final MockCluster cluster = new MockCluster();
  private FakeOpenFga openfga;
  private final InMemoryOpenFga api = new InMemoryOpenFga();

  @BeforeEach
  void start() throws IOException {
    openfga = new FakeOpenFga(api);
  }

  @AfterEach
  void stop() {
    openfga.close();
  }

  private void startOperator() {
    OperatorConfig base = MockCluster.config(Duration.ofSeconds(2), 1);
    cluster.startOperator(
        MockCluster.withStoresAndModels(
            new OperatorConfig(
                Set.of(TEAM_A, TEAM_B),
                false,
                Optional.of(TEAM_A),
                Optional.empty(),
                Optional.empty(),
                base.backoffLimit(),
                base.activeDeadlineSeconds(),
                base.ttlSecondsAfterFinished(),
                base.retryCooldown()),
            openfga.url()),
        "operator-a");
  }

  private FGAStore apply(String namespace, String storeName) {
    FGAStore store = new FGAStore();
    store.setMetadata(new ObjectMetaBuilder().withName("app").withNamespace(namespace).build());
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName(storeName);
    FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
    ref.setUrl(openfga.url());
    spec.setOpenfgaRef(ref);
    store.setSpec(spec);
    return cluster
        .client()
        .resources(FGAStore.class)
        .inNamespace(namespace)
        .resource(store)
        .create();
  }

  private void applyModel(String namespace) {
    FGAModel model = new FGAModel();
    model.setMetadata(new ObjectMetaBuilder().withName("app").withNamespace(namespace).build());
    FGAModel.Spec spec = new FGAModel.Spec();
    spec.setStoreRef(new FGAStore.NameRef("app"));
    spec.setModel("model\n  schema 1.1\ntype user\n");
    model.setSpec(spec);
    cluster.client().resources(FGAModel.class).inNamespace(namespace).resource(model).create();
  }

  private FGAStore get(String namespace) {
    return cluster.client().resources(FGAStore.class).inNamespace(namespace).withName("app").get();
  }

  private static Condition ready(Optional<? extends ConditionedStatus> status) {
    return status
        .flatMap(
            s -> s.getConditions().stream().filter(c -> "Ready".equals(c.getType())).findFirst())
        .orElse(null);
  }

  /** Waits until both FGAStores have a Ready condition; returns them as that look read them. */
  private Map<String, FGAStore> bothDecided() {
    return await()
        .atMost(WAIT)
        .until(
            () -> Map.of(TEAM_A, get(TEAM_A), TEAM_B, get(TEAM_B)),
            both ->
                both.values().stream()
                    .allMatch(s -> ready(Optional.ofNullable(s.getStatus())) != null));
  }

  @Test
  void twoNamespacesNamingOneStoreAtOnceMakeOneOwnerTheOlderAndTheOtherGetsNothing() {
    // both exist before the operator starts: reconciled at once, in no set order
    apply(TEAM_B, "shared");
    apply(TEAM_A, "shared");
    startOperator();

    Map<String, FGAStore> both = bothDecided();
    // the rule's winner: the older creationTimestamp, then the namespace
    String winner =
        both.values().stream()
            .min(
                Comparator.comparing(
                        (FGAStore s) ->
                            Timestamps.parse(s.getMetadata().getCreationTimestamp())
                                .orElse(Instant.MAX))
                    .thenComparing(s -> s.getMetadata().getNamespace()))
            .orElseThrow()
            .getMetadata()
            .getNamespace();
    String loser = winner.equals(TEAM_A) ? TEAM_B : TEAM_A;
    FGAStore won = both.get(winner);
    FGAStore lost = both.get(loser);
    assertThat(ready(Optional.of(won.getStatus())).getReason())
        .isEqualTo(StoreReason.StoreReady.name());
    Condition refused = ready(Optional.of(lost.getStatus()));
    assertThat(refused.getStatus()).isEqualTo("False");
    assertThat(refused.getReason()).isEqualTo(StoreReason.StoreClaimedElsewhere.name());
    assertThat(refused.getMessage())
        .contains("claimed by")
        .contains("in another namespace")
        .doesNotContain(winner + "/")
        .doesNotContain("namespace " + winner);
    assertThat(lost.getStatus().getStoreId()).isNull();
    assertThat(api.stores).hasSize(1).containsValue("shared");
    assertThat(won.getStatus().getStoreId()).isIn(api.stores.keySet());

    // the loser's model writes nothing into the winner's store; the winner's does
    applyModel(loser);
    FGAModel waiting =
        await()
            .atMost(WAIT)
            .until(
                () ->
                    cluster
                        .client()
                        .resources(FGAModel.class)
                        .inNamespace(loser)
                        .withName("app")
                        .get(),
                m -> ready(Optional.ofNullable(m.getStatus())) != null);
    assertThat(ready(Optional.of(waiting.getStatus())).getReason()).isEqualTo("StoreNotReady");
    assertThat(ready(Optional.of(waiting.getStatus())).getMessage())
        .contains(StoreReason.StoreClaimedElsewhere.name());
    assertThat(api.modelsWritten).hasValue(0);
    applyModel(winner);
    await().atMost(WAIT).until(() -> api.modelsWritten.get() == 1);

    // nor does pinning the id take it
    String id = won.getStatus().getStoreId();
    Edits.edit(
        cluster.client().resources(FGAStore.class).inNamespace(loser).withName("app"),
        s -> s.getSpec().setStoreId(id));
    Condition pinned =
        await()
            .atMost(WAIT)
            .until(
                () -> ready(Optional.ofNullable(get(loser).getStatus())),
                c -> c.getMessage().startsWith("store " + id));
    assertThat(pinned.getReason()).isEqualTo(StoreReason.StoreClaimedElsewhere.name());
    assertThat(api.modelsWritten).hasValue(1);

    // the owner gone (Retain keeps the store), the other namespace may take it over
    cluster.client().resources(FGAStore.class).inNamespace(winner).withName("app").delete();
    await().atMost(WAIT).until(() -> get(winner) == null);
    Edits.edit(
        cluster.client().resources(FGAStore.class).inNamespace(loser).withName("app"),
        s -> s.getMetadata().setAnnotations(Map.of("touched", "1")));
    FGAStore adopted =
        await()
            .atMost(WAIT)
            .until(() -> get(loser), s -> StoreReason.StoreReady.name().equals(reason(s)));
    assertThat(adopted.getStatus().getStoreId()).isEqualTo(id);
    assertThat(adopted.getStatus().getCreatedByOperator()).isFalse();
    assertThat(api.stores).hasSize(1);
  }

  private static String reason(FGAStore s) {
    Condition c = s == null ? null : ready(Optional.ofNullable(s.getStatus()));
    return c == null ? null : c.getReason();
  }

  @Test
  void aStoreInUseIsNotTakenByAnotherNamespaceCreatedLater() {
    startOperator();
    apply(TEAM_A, "in-use");
    FGAStore holder =
        await()
            .atMost(WAIT)
            .until(() -> get(TEAM_A), s -> StoreReason.StoreReady.name().equals(reason(s)));

    apply(TEAM_B, "in-use");
    FGAStore refused =
        await()
            .atMost(WAIT)
            .until(
                () -> get(TEAM_B), s -> StoreReason.StoreClaimedElsewhere.name().equals(reason(s)));
    assertThat(ready(Optional.of(refused.getStatus())).getMessage())
        .startsWith("store " + holder.getStatus().getStoreId() + " (\"in-use\")")
        .doesNotContain(TEAM_A);
    assertThat(api.stores).hasSize(1);
    assertThat(
            cluster.client().v1().events().inNamespace(TEAM_B).list().getItems().stream()
                .map(e -> e.getReason())
                .toList())
        .containsExactly(StoreReason.StoreClaimedElsewhere.name());
    // the holder stays ready
    assertThat(reason(get(TEAM_A))).isEqualTo(StoreReason.StoreReady.name());
  }
}
