package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.models.ModelAssertions;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.Model;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.openfga.Store;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.testing.Edits;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * FGAModel against the real OpenFGA server (the test kubelet's {@code openfga run} on PostgreSQL),
 * with the chart's CRDs and RBAC enforced by the real API server: a model is written once per
 * content, whatever its formatting; a revert and a lost status write nothing; a model written out
 * of band is reported and not fought; failing tests keep the previous id; the id is published in a
 * ConfigMap and rolls an opted-in Deployment exactly once per new id.
 */
class ModelIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();
  private static final Duration WAIT = Duration.ofMinutes(2);

  private static final String V1 =
      """
      model
        schema 1.1
      type user
      type document
        relations
          define owner: [user]
          define viewer: [user] or owner
      """;
  private static final String V2 = V1 + "    define editor: [user]\n";
  private static final String TESTS_PASS =
      """
      - name: owners can view
        tuples:
          - user: user:anne
            relation: owner
            object: document:1
        check:
          - user: user:anne
            object: document:1
            assertions:
              viewer: true
              owner: true
          - user: user:bob
            object: document:1
            assertions:
              viewer: false
        list_objects:
          - user: user:anne
            type: document
            assertions:
              viewer: [document:1]
      """;

  private static String url;
  private static FgaApi fga;

  @BeforeAll
  static void openfgaAndTheOperator() {
    Postgres.Database db = cluster.postgres().createDatabase("models");
    // the server's URL is the operator's list of servers, known before it runs
    int port = RealCluster.serverPort();
    cluster.startOperator(
        cluster.installOperator(
            cluster.namespace(),
            "leaderElection: {enabled: false}\nstoresAndModels:\n  enabled: true\n"
                + "  servers: [http://127.0.0.1:"
                + port
                + "]\n"),
        "operator-0");
    url = cluster.serveOpenFga("openfga", db, Map.of(), port);
    fga = new FgaApi(FgaApi.defaultHttpClient(), URI.create(url), Optional::empty);
  }

  private static MixedOperation<FGAModel, ?, Resource<FGAModel>> models() {
    return cluster.client().resources(FGAModel.class);
  }

  /** A ready FGAStore of its own; returns its store id. */
  private static String store(String name) {
    FGAStore store = new FGAStore();
    store.setMetadata(
        new ObjectMetaBuilder().withName(name).withNamespace(cluster.namespace()).build());
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName("it-" + name);
    FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
    ref.setUrl(url);
    spec.setOpenfgaRef(ref);
    store.setSpec(spec);
    cluster
        .client()
        .resources(FGAStore.class)
        .inNamespace(cluster.namespace())
        .resource(store)
        .create();
    return await()
        .atMost(WAIT)
        .until(
            () -> {
              FGAStore s =
                  cluster
                      .client()
                      .resources(FGAStore.class)
                      .inNamespace(cluster.namespace())
                      .withName(name)
                      .get();
              return s == null || s.getStatus() == null ? null : s.getStatus().getStoreId();
            },
            Objects::nonNull);
  }

  private static FGAModel model(
      String name, String store, String dsl, String tests, String publishTo) {
    FGAModel model = new FGAModel();
    model.setMetadata(
        new ObjectMetaBuilder().withName(name).withNamespace(cluster.namespace()).build());
    FGAModel.Spec spec = new FGAModel.Spec();
    spec.setStoreRef(new FGAStore.NameRef(store));
    spec.setModel(dsl);
    spec.setTests(tests);
    if (publishTo != null) {
      FGAModel.Publish publish = new FGAModel.Publish();
      publish.setConfigMapName(publishTo);
      spec.setPublish(publish);
    }
    model.setSpec(spec);
    return models().inNamespace(cluster.namespace()).resource(model).create();
  }

  private static FGAModel get(String name) {
    return models().inNamespace(cluster.namespace()).withName(name).get();
  }

  private static void edit(String name, UnaryOperator<FGAModel.Spec> change) {
    Edits.edit(
        models().inNamespace(cluster.namespace()).withName(name), m -> change.apply(m.getSpec()));
  }

  private static Condition condition(String name, String type) {
    return condition(get(name), type);
  }

  /** A condition of an FGAModel already read (or null: gone), or null. */
  private static Condition condition(FGAModel m, String type) {
    if (m == null || m.getStatus() == null || m.getStatus().getConditions() == null) {
      return null;
    }
    return m.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  private static void awaitReady(String name, String modelIdNot) {
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              FGAModel m = get(name);
              assertThat(condition(m, "Ready"))
                  .extracting(Condition::getReason)
                  .isEqualTo("ModelReady");
              assertThat(m.getStatus().getModelId()).isNotNull().isNotEqualTo(modelIdNot);
            });
  }

  private static int modelCount(String storeId) throws Exception {
    return fga.listModels(storeId).size();
  }

  private static List<String> events(String name, String reason) {
    return cluster
        .client()
        .v1()
        .events()
        .inNamespace(cluster.namespace())
        .list()
        .getItems()
        .stream()
        .filter(
            e ->
                name.equals(e.getInvolvedObject().getName())
                    && "FGAModel".equals(e.getInvolvedObject().getKind()))
        .filter(e -> reason.equals(e.getReason()))
        .map(e -> e.getMessage())
        .toList();
  }

  /**
   * Waits out a few reconciles (the controller reschedules and is triggered by each edit): only
   * before a negative assertion (nothing written, no roll, no second Event).
   */
  private static void settle() {
    ControlPlane.sleep(Duration.ofSeconds(3));
  }

  @Test
  void aModelIsWrittenOncePerContentRevertsAndLostStatusesWriteNothing() throws Exception {
    String storeId = store("history");
    model("app", "history", V1, null, "app-fga");
    awaitReady("app", null);
    FGAModel ready = get("app");
    String first = ready.getStatus().getModelId();
    assertThat(modelCount(storeId)).isEqualTo(1);
    assertThat(ready.getStatus().getLastWrittenHash()).isEqualTo(ModelJson.fromDsl(V1).hash());
    ConfigMap published =
        cluster.client().configMaps().inNamespace(cluster.namespace()).withName("app-fga").get();
    assertThat(published.getData())
        .containsEntry("FGA_API_URL", url)
        .containsEntry("FGA_STORE_ID", storeId)
        .containsEntry("FGA_MODEL_ID", first);

    // whitespace and comments only: the same model, nothing written
    edit(
        "app",
        s -> {
          s.setModel("# documents\n" + V1.replace("type document", "\n\ntype document  # docs"));
          return s;
        });
    settle();
    assertThat(modelCount(storeId)).isEqualTo(1);
    assertThat(get("app").getStatus().getModelId()).isEqualTo(first);

    // a real change: one write, published
    edit(
        "app",
        s -> {
          s.setModel(V2);
          return s;
        });
    awaitReady("app", first);
    String second = get("app").getStatus().getModelId();
    assertThat(modelCount(storeId)).isEqualTo(2);
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              ConfigMap now =
                  cluster
                      .client()
                      .configMaps()
                      .inNamespace(cluster.namespace())
                      .withName("app-fga")
                      .get();
              assertThat(now).isNotNull();
              assertThat(now.getData()).containsEntry("FGA_MODEL_ID", second);
            });

    // a revert: the first id again, nothing written
    edit(
        "app",
        s -> {
          s.setModel(V1);
          return s;
        });
    awaitReady("app", second);
    assertThat(get("app").getStatus().getModelId()).isEqualTo(first);
    assertThat(modelCount(storeId)).isEqualTo(2);
    assertThat(events("app", "ModelReverted")).hasSize(1);

    // the status lost (the resource deleted and applied again): adopted, nothing written; the
    // published ConfigMap went with the old resource (owner reference, the garbage collector)
    models().inNamespace(cluster.namespace()).withName("app").delete();
    await().atMost(WAIT).until(() -> get("app") == null);
    await()
        .atMost(WAIT)
        .until(
            () ->
                cluster
                        .client()
                        .configMaps()
                        .inNamespace(cluster.namespace())
                        .withName("app-fga")
                        .get()
                    == null);
    assertThat(modelCount(storeId)).as("models cannot be deleted in OpenFGA").isEqualTo(2);
    model("app", "history", V2, null, "app-fga");
    awaitReady("app", null);
    assertThat(get("app").getStatus().getModelId()).isEqualTo(second);
    assertThat(modelCount(storeId)).isEqualTo(2);
    assertThat(events("app", "ModelAdopted")).isNotEmpty();
  }

  /** A model with a condition as JSON written by hand: no generic_types where a type has none. */
  private static final String CONDITIONAL_JSON =
      """
      {"schema_version":"1.1",
       "type_definitions":[
        {"type":"user"},
        {"type":"document","relations":{"viewer":{"this":{}}},
         "metadata":{"relations":{"viewer":{"directly_related_user_types":[
           {"type":"user","condition":"in_hours"}]}}}}],
       "conditions":{"in_hours":{"name":"in_hours","expression":"hour < 17 && tags.size() > 0",
         "parameters":{"hour":{"type_name":"TYPE_NAME_INT"},
           "tags":{"type_name":"TYPE_NAME_LIST","generic_types":[{"type_name":"TYPE_NAME_STRING"}]}}}}}
      """;

  /** Creates the FGAModel {@code name} with {@code spec.modelJson}; waits until it is ready. */
  private static FGAModel readyModelJson(String name, String store, String json) {
    FGAModel model = new FGAModel();
    model.setMetadata(
        new ObjectMetaBuilder().withName(name).withNamespace(cluster.namespace()).build());
    FGAModel.Spec spec = new FGAModel.Spec();
    spec.setStoreRef(new FGAStore.NameRef(store));
    spec.setModelJson(json);
    model.setSpec(spec);
    models().inNamespace(cluster.namespace()).resource(model).create();
    return await()
        .atMost(WAIT)
        .until(
            () -> get(name),
            m -> {
              Condition ready = condition(m, "Ready");
              return ready != null && "ModelReady".equals(ready.getReason());
            });
  }

  @Test
  void aModelJsonWithAConditionIsNotWrittenAgainAfterALostStatus() throws Exception {
    String storeId = store("conditions");
    String first =
        readyModelJson("conditional", "conditions", CONDITIONAL_JSON).getStatus().getModelId();
    List<Model> written = fga.listModels(storeId);
    assertThat(written).extracting(Model::id).containsExactly(first);
    // the server answers with "generic_types": [] on every parameter type, which the JSON lacks
    assertThat(written.get(0).json().toString()).contains("\"generic_types\":[]");

    // the status lost (the resource deleted and applied again): the model is adopted, not written
    models().inNamespace(cluster.namespace()).withName("conditional").delete();
    await().atMost(WAIT).until(() -> get("conditional") == null);
    FGAModel again = readyModelJson("conditional", "conditions", CONDITIONAL_JSON);
    assertThat(again.getStatus().getModelId()).isEqualTo(first);
    assertThat(fga.listModels(storeId)).extracting(Model::id).containsExactly(first);
  }

  /**
   * A modular model (an {@code fga.mod} and its module files in one ConfigMap, one of them an
   * {@code extend}) combined by the operator is taken by the real OpenFGA (schema 1.2), once; the
   * same model applied again after a lost status is adopted, not written again.
   */
  @Test
  void aModularModelFromAConfigMapIsCombinedAndTakenByTheRealServer() throws Exception {
    String storeId = store("modules");
    cluster
        .client()
        .configMaps()
        .inNamespace(cluster.namespace())
        .resource(
            new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withNewMetadata()
                .withName("modules")
                .endMetadata()
                .addToData(
                    "fga.mod", "schema: '1.2'\ncontents:\n  - core.fga\n  - tracker/issues.fga\n")
                .addToData(
                    "core.fga",
                    "module core\n\ntype user\n\ntype organization\n  relations\n"
                        + "    define member: [user]\n    define admin: [user]\n")
                .addToData(
                    "tracker.issues.fga",
                    "module tracker\n\nextend type organization\n  relations\n"
                        + "    define can_create_issue: admin\n\ntype issue\n  relations\n"
                        + "    define org: [organization]\n    define viewer: member from org\n")
                .build())
        .create();
    FGAModel model = new FGAModel();
    model.setMetadata(
        new ObjectMetaBuilder().withName("modular").withNamespace(cluster.namespace()).build());
    FGAModel.Spec spec = new FGAModel.Spec();
    spec.setStoreRef(new FGAStore.NameRef("modules"));
    FGAModel.ModelFrom from = new FGAModel.ModelFrom();
    from.setConfigMapKeyRef(new FGAModel.KeyRef("modules", "fga.mod"));
    spec.setModelFrom(from);
    model.setSpec(spec);
    models().inNamespace(cluster.namespace()).resource(model).create();
    awaitReady("modular", null);

    List<Model> written = fga.listModels(storeId);
    assertThat(written).hasSize(1);
    JsonNode json = written.get(0).json();
    assertThat(json.path("schema_version").asText()).isEqualTo("1.2");
    List<String> types = new java.util.ArrayList<>();
    json.path("type_definitions").forEach(t -> types.add(t.path("type").asText()));
    assertThat(types).containsExactlyInAnyOrder("user", "organization", "issue");
    assertThat(
            java.util.stream.StreamSupport.stream(
                    json.path("type_definitions").spliterator(), false)
                .filter(t -> t.path("type").asText().equals("organization"))
                .findFirst()
                .orElseThrow()
                .path("relations")
                .has("can_create_issue"))
        .as("the extension's relation, merged into organization")
        .isTrue();

    models().inNamespace(cluster.namespace()).withName("modular").delete();
    await().atMost(WAIT).until(() -> get("modular") == null);
    model.getMetadata().setResourceVersion(null);
    model.getMetadata().setUid(null);
    models().inNamespace(cluster.namespace()).resource(model).create();
    awaitReady("modular", null);
    assertThat(fga.listModels(storeId)).hasSize(1);
  }

  @Test
  void aModelWrittenOutOfBandIsReportedAndNotFought() throws Exception {
    String storeId = store("oob");
    model("oob", "oob", V1, null, null);
    awaitReady("oob", null);
    String ours = get("oob").getStatus().getModelId();
    String foreign = fga.writeModel(storeId, ModelJson.fromDsl(V2).json());
    edit(
        "oob",
        s -> {
          s.setHistoryLimit(5);
          return s;
        }); // an event, so it looks again now
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(condition("oob", "InSync"))
                    .extracting(Condition::getReason)
                    .isEqualTo("NewerModelInStore"));
    assertThat(condition("oob", "InSync").getMessage()).contains(foreign).contains(ours);
    settle();
    assertThat(modelCount(storeId)).as("no fight: nothing written back").isEqualTo(2);
    assertThat(get("oob").getStatus().getModelId()).isEqualTo(ours);
    assertThat(events("oob", "NewerModelInStore")).hasSize(1);
  }

  @Test
  void failingTestsKeepThePreviousIdAndSayWhichAssertionFailed() throws Exception {
    String storeId = store("tested");
    model("tested", "tested", V1, TESTS_PASS, null);
    awaitReady("tested", null);
    FGAModel ready = get("tested");
    String good = ready.getStatus().getModelId();
    // what a crash during an earlier run of its tests would have left, and another FGAModel's
    String left = fga.createStore(ModelAssertions.scratchName(ready.getMetadata().getUid())).id();
    String others =
        fga.createStore(ModelAssertions.scratchName("00000000-0000-0000-0000-000000000001")).id();
    // V2 with owner no longer implying viewer: the test's first check fails
    String broken = V2.replace("define viewer: [user] or owner", "define viewer: [user]");
    edit(
        "tested",
        s -> {
          s.setModel(broken);
          return s;
        });
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(condition("tested", "Ready"))
                    .extracting(Condition::getReason)
                    .isEqualTo("TestsFailed"));
    FGAModel failed = get("tested");
    assertThat(condition(failed, "Ready").getMessage())
        .contains(
            "test \"owners can view\": check user:anne viewer document:1: expected true, got false")
        .contains(good + " stays published");
    assertThat(failed.getStatus().getModelId()).isEqualTo(good);
    assertThat(modelCount(storeId)).isEqualTo(1);
    // the pair of model and tests that failed is kept through the CRD's schema (pruned fields
    // would make every look test it again)
    assertThat(failed.getStatus().getTestedKey()).startsWith("sha256:");
    assertThat(failed.getStatus().getTestsFailure()).contains("owners can view");
    // its scratch stores are deleted, the one left earlier too; another FGAModel's is not
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(fga.listStores())
                    .extracting(Store::id)
                    .doesNotContain(left)
                    .contains(others));
    assertThat(fga.listStores())
        .filteredOn(s -> s.name().startsWith("fgamodel-test-"))
        .extracting(Store::id)
        .containsExactly(others);
    fga.deleteStore(others);
  }

  @Test
  void aCheckOfARelationTheModelLacksFailsTheTestsOnce() throws Exception {
    store("refused");
    // V1 has no editor: OpenFGA refuses the check itself (HTTP 400), it does not answer false
    String tests = TESTS_PASS.replace("owner: true", "editor: false");
    model("refused", "refused", V1, tests, null);
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(condition("refused", "Ready"))
                    .extracting(Condition::getReason)
                    .isEqualTo("TestsFailed"));
    FGAModel refused = get("refused");
    assertThat(condition(refused, "Ready").getMessage())
        .contains("test \"owners can view\": OpenFGA refused a check or list_objects (HTTP 400")
        .contains("nothing is published");
    String scratch = ModelAssertions.scratchName(refused.getMetadata().getUid());
    settle();
    settle();
    // tested once: one Warning, and its scratch store deleted (not a failed run starting the next
    // at once, with a new scratch store and a new Event)
    assertThat(events("refused", "TestsFailed")).hasSize(1);
    assertThat(fga.listStores()).extracting(Store::name).doesNotContain(scratch);
    assertThat(get("refused").getStatus().getModelId()).isNull();
  }

  @Test
  void anOptedInDeploymentRollsExactlyOncePerNewModelId() throws Exception {
    store("rolling");
    Deployment app =
        new DeploymentBuilder()
            .withNewMetadata()
            .withName("app")
            .withNamespace(cluster.namespace())
            .addToLabels("openfga.dev/model", "rolling")
            .endMetadata()
            .withNewSpec()
            .withReplicas(1)
            .withNewSelector()
            .addToMatchLabels("app", "demo")
            .endSelector()
            .withNewTemplate()
            .withNewMetadata()
            .addToLabels("app", "demo")
            .endMetadata()
            .withNewSpec()
            .addNewContainer()
            .withName("app")
            .withImage("example.com/demo-app:1")
            .endContainer()
            .endSpec()
            .endTemplate()
            .endSpec()
            .build();
    cluster.client().resource(app).create();
    model("rolling", "rolling", V1, null, null);
    awaitReady("rolling", null);
    String first = get("rolling").getStatus().getModelId();
    await().atMost(WAIT).until(() -> first.equals(podAnnotation()));
    long generation = generation();

    edit(
        "rolling",
        s -> {
          s.setModel(V1 + "\n\n");
          return s;
        });
    settle();
    assertThat(generation()).as("the same id: no roll").isEqualTo(generation);

    edit(
        "rolling",
        s -> {
          s.setModel(V2);
          return s;
        });
    awaitReady("rolling", first);
    String second = get("rolling").getStatus().getModelId();
    await().atMost(WAIT).until(() -> second.equals(podAnnotation()));
    settle();
    assertThat(generation()).as("one roll for the new id").isEqualTo(generation + 1);
  }

  @Test
  void aNameLongerThanALabelValueIsRefusedByTheCrd() {
    // Deployments name their model in the label openfga.dev/model: at most 63 characters
    String name = "m".repeat(64);
    assertThatThrownBy(() -> model(name, "rolling", V1, null, null))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("an FGAModel's name is at most 63 characters");
    assertThat(model("m".repeat(63), "none-such", V1, null, null)).isNotNull();
  }

  @Test
  void referencesToNamesNoObjectCanHaveAreRefusedByTheCrd() {
    FGAModel model = new FGAModel();
    model.setMetadata(
        new ObjectMetaBuilder().withName("bad-refs").withNamespace(cluster.namespace()).build());
    FGAModel.Spec spec = new FGAModel.Spec();
    spec.setStoreRef(new FGAStore.NameRef("Payments"));
    FGAModel.ModelFrom from = new FGAModel.ModelFrom();
    from.setConfigMapKeyRef(new FGAModel.KeyRef("models_v1", "models/payments.fga"));
    spec.setModelFrom(from);
    model.setSpec(spec);
    assertThatThrownBy(() -> models().inNamespace(cluster.namespace()).resource(model).create())
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("spec.storeRef.name in body should match")
        .hasMessageContaining("spec.modelFrom.configMapKeyRef.name in body should match")
        .hasMessageContaining("spec.modelFrom.configMapKeyRef.key in body should match");
    // what a Kubernetes object may be named is accepted
    spec.setStoreRef(new FGAStore.NameRef("payments.v1-2"));
    from.setConfigMapKeyRef(new FGAModel.KeyRef("models.v1", "Payments_v1.fga"));
    assertThat(models().inNamespace(cluster.namespace()).resource(model).create()).isNotNull();
  }

  private static String podAnnotation() {
    Map<String, String> a =
        cluster
            .client()
            .apps()
            .deployments()
            .inNamespace(cluster.namespace())
            .withName("app")
            .get()
            .getSpec()
            .getTemplate()
            .getMetadata()
            .getAnnotations();
    return a == null ? null : a.get("openfga.dev/model-id");
  }

  private static long generation() {
    return cluster
        .client()
        .apps()
        .deployments()
        .inNamespace(cluster.namespace())
        .withName("app")
        .get()
        .getMetadata()
        .getGeneration();
  }
}
