package dev.openfga.operator.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.testing.FakeOpenFga;
import dev.openfga.operator.testing.MockCluster;
import dev.openfga.operator.testing.TestStores;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The FGAModel controller in the real operator against the mock API server and a fake OpenFGA (one
 * store, its models in a list): the fast tier; the rules against the real server are {@code
 * ModelIT}.
 */
class ModelScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String STORE_ID = "01HVMMBCMGZNT3SED4Z17E0001";
  private static final String DSL =
      "model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n";

  @RegisterExtension final MockCluster cluster = new MockCluster();
  private FakeOpenFga openfga;
  private PrometheusMeterRegistry registry;

  /** The store's models, newest first, as the API lists them. */
  private final List<ObjectNode> models = new CopyOnWriteArrayList<>();

  private final AtomicInteger writes = new AtomicInteger();

  @BeforeEach
  void start() throws IOException {
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    openfga = new FakeOpenFga(cluster, this::serve, registry);
  }

  @AfterEach
  void stop() {
    openfga.close();
  }

  private void serve(HttpExchange exchange) throws IOException {
    String path = exchange.getRequestURI().getPath();
    String method = exchange.getRequestMethod();
    int status = 200;
    ObjectNode body = JSON.createObjectNode();
    if (path.equals("/stores") && method.equals("GET")) {
      body.putArray("stores").addObject().put("id", STORE_ID).put("name", "app");
    } else if (path.equals("/stores/" + STORE_ID) && method.equals("GET")) {
      body.put("id", STORE_ID).put("name", "app");
    } else if (path.endsWith("/authorization-models") && method.equals("GET")) {
      ArrayNode list = body.putArray("authorization_models");
      models.forEach(list::add);
    } else if (path.endsWith("/authorization-models") && method.equals("POST")) {
      ObjectNode model = (ObjectNode) JSON.readTree(exchange.getRequestBody());
      String id = String.format("01HVMMBCMGZNT3SED4Z17EM%03d", writes.incrementAndGet());
      model.put("id", id);
      models.add(0, model);
      body.put("authorization_model_id", id);
      status = 201;
    } else {
      status = 404;
    }
    byte[] out = body.toString().getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(status, out.length);
    try (OutputStream o = exchange.getResponseBody()) {
      o.write(out);
    }
  }

  private void applyStoreAndModel(String dsl) {
    TestStores.create(cluster, "app", "app", "http://127.0.0.1:" + openfga.port());

    FGAModel model = new FGAModel();
    model.setMetadata(
        new ObjectMetaBuilder().withName("app").withNamespace(MockCluster.NS).build());
    FGAModel.Spec m = new FGAModel.Spec();
    m.setStoreRef(new FGAStore.NameRef("app"));
    m.setModel(dsl);
    FGAModel.Publish publish = new FGAModel.Publish();
    publish.setConfigMapName("app-fga");
    m.setPublish(publish);
    model.setSpec(m);
    cluster.client().resources(FGAModel.class).inNamespace(MockCluster.NS).resource(model).create();
  }

  private FGAModel.Status status() {
    FGAModel m = TestStores.getModel(cluster, "app");
    return m == null ? null : m.getStatus();
  }

  @Test
  void aModelIsWrittenOnceAndPublished() {
    applyStoreAndModel(DSL);
    await().atMost(WAIT).until(() -> status() != null && status().getModelId() != null);
    assertThat(writes).hasValue(1);
    assertThat(status().getLastWrittenHash()).startsWith("sha256:");
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              ConfigMap cm =
                  cluster
                      .client()
                      .configMaps()
                      .inNamespace(MockCluster.NS)
                      .withName("app-fga")
                      .get();
              assertThat(cm).isNotNull();
              assertThat(cm.getData()).containsEntry("FGA_MODEL_ID", status().getModelId());
              assertThat(cm.getMetadata().getOwnerReferences())
                  .extracting("kind")
                  .containsExactly("FGAModel");
            });
  }

  /** The store and the model applied; waits until the model id is on {@code uses-app}'s pods. */
  private void publishedToUsesApp() {
    applyStoreAndModel(DSL);
    await().atMost(WAIT).until(() -> status() != null && status().getModelId() != null);
    String id = status().getModelId();
    await().atMost(WAIT).until(() -> id.equals(podAnnotations("uses-app").get(FGAModel.MODEL_ID)));
  }

  @Test
  void aDeploymentChangedWhileTheIdIsPublishedGetsItAtOnceNotAtTheNextLook() {
    deployment("uses-app", Map.of(FGAModel.MODEL, "app"), Map.of());
    // the Deployment controller wrote its status between the operator's read and its patch, twice
    // (the reconcile its own status write brings would otherwise cover for the first)
    cluster.failNextAt("PATCH", "/deployments/uses-app", 409, 2);
    // well before the next regular look (5 minutes)
    publishedToUsesApp();
    assertThat(
            TestStores.getModel(cluster, "app").getStatus().getConditions().stream()
                .filter(c -> c.getType().equals("Ready"))
                .findFirst()
                .orElseThrow()
                .getReason())
        .isEqualTo("ModelReady");
    // read again by a list (the chart grants Deployments list, not get)
    assertThat(cluster.requests())
        .filteredOn(r -> MockCluster.OPERATOR_AGENT.equals(r.userAgent()))
        .noneMatch(r -> r.method().equals("GET") && r.path().contains("/deployments/uses-app"));
  }

  @Test
  void theModelIdGoesToTheDeploymentsLabelledWithTheModelsNameOnly() {
    deployment("uses-app", Map.of(FGAModel.MODEL, "app"), Map.of());
    deployment("uses-other", Map.of(FGAModel.MODEL, "other"), Map.of());
    deployment("annotated", Map.of(), Map.of(FGAModel.MODEL, "app"));
    publishedToUsesApp();
    // the others are not in the labelled list the publication went through
    assertThat(podAnnotations("uses-other")).doesNotContainKey(FGAModel.MODEL_ID);
    assertThat(podAnnotations("annotated")).doesNotContainKey(FGAModel.MODEL_ID);
    // every list the operator sent, its informers' first lists and the labelled Deployments, paged
    List<String> lists =
        cluster.requests().stream()
            .filter(r -> MockCluster.OPERATOR_AGENT.equals(r.userAgent()))
            .filter(r -> r.method().equals("GET") && !r.path().contains("watch=true"))
            .map(MockCluster.ApiRequest::path)
            .filter(
                p -> p.matches(".*/(deployments|jobs|configmaps|pods|fgastores|fgamodels)(\\?.*)?"))
            .toList();
    assertThat(lists)
        .anyMatch(p -> p.contains("/fgastores?"))
        .anyMatch(p -> p.contains("/fgamodels?"))
        .anyMatch(p -> p.contains("labelSelector=openfga.dev%2Fmodel%3Dapp"))
        .allMatch(p -> p.contains("limit=100"));
  }

  private void deployment(
      String name, Map<String, String> labels, Map<String, String> annotations) {
    cluster
        .client()
        .resource(
            new DeploymentBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(MockCluster.NS)
                .withLabels(labels)
                .withAnnotations(annotations)
                .endMetadata()
                .withNewSpec()
                .withNewSelector()
                .addToMatchLabels("app", name)
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .addToLabels("app", name)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("app")
                .withImage("example.com/" + name + ":1")
                .endContainer()
                .endSpec()
                .endTemplate()
                .endSpec()
                .build())
        .create();
  }

  private Map<String, String> podAnnotations(String deployment) {
    Deployment d =
        cluster
            .client()
            .apps()
            .deployments()
            .inNamespace(MockCluster.NS)
            .withName(deployment)
            .get();
    Map<String, String> a = d.getSpec().getTemplate().getMetadata().getAnnotations();
    return a == null ? Map.of() : a;
  }

  @Test
  void aModelAlreadyInTheStoreIsAdoptedNotWrittenAgain() throws Exception {
    JsonNode existing = ModelJson.fromDsl(DSL).json();
    ObjectNode stored = ((ObjectNode) existing.deepCopy()).put("id", "01HVMMBCMGZNT3SED4Z17EM900");
    models.add(stored);
    applyStoreAndModel(DSL.replace("type doc", "\n# documents\ntype doc"));
    await().atMost(WAIT).until(() -> status() != null && status().getModelId() != null);
    assertThat(status().getModelId()).isEqualTo("01HVMMBCMGZNT3SED4Z17EM900");
    assertThat(writes).hasValue(0);
  }

  @Test
  void aModelFromAConfigMapKeyIsReadAndWritten() {
    cluster
        .client()
        .configMaps()
        .inNamespace(MockCluster.NS)
        .resource(
            new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withNewMetadata()
                .withName("authz")
                .withNamespace(MockCluster.NS)
                .endMetadata()
                .addToData("model.fga", DSL)
                .build())
        .create();
    applyStoreAndModel(null);
    TestStores.editModel(
        cluster,
        "app",
        m -> {
          FGAModel.ModelFrom from = new FGAModel.ModelFrom();
          from.setConfigMapKeyRef(new FGAModel.KeyRef("authz", "model.fga"));
          m.getSpec().setModelFrom(from);
        });
    await().atMost(WAIT).until(() -> status() != null && status().getModelId() != null);
    assertThat(writes).hasValue(1);
    assertThat(models.get(0).path("type_definitions").size()).isEqualTo(2);
  }

  @Test
  void aModularModelFromAnFgaModKeyIsCombinedAndWritten() {
    cluster
        .client()
        .configMaps()
        .inNamespace(MockCluster.NS)
        .resource(
            new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withNewMetadata()
                .withName("authz")
                .withNamespace(MockCluster.NS)
                .endMetadata()
                .addToData("fga.mod", "schema: '1.2'\ncontents:\n  - core.fga\n  - docs/docs.fga\n")
                .addToData("core.fga", "module core\n\ntype user\n\ntype team\n")
                // by its base name, as kubectl create configmap --from-file names it
                .addToData(
                    "docs.fga",
                    "module docs\n\nextend type team\n  relations\n    define member: [user]\n\n"
                        + "type doc\n  relations\n    define viewer: [user, team#member]\n")
                .build())
        .create();
    applyStoreAndModel(null);
    TestStores.editModel(
        cluster,
        "app",
        m -> {
          FGAModel.ModelFrom from = new FGAModel.ModelFrom();
          from.setConfigMapKeyRef(new FGAModel.KeyRef("authz", "fga.mod"));
          m.getSpec().setModelFrom(from);
        });
    await().atMost(WAIT).until(() -> status() != null && status().getModelId() != null);
    assertThat(writes).hasValue(1);
    JsonNode written = models.get(0);
    assertThat(written.path("schema_version").asText()).isEqualTo("1.2");
    assertThat(written.path("type_definitions"))
        .extracting(t -> t.path("type").asText())
        .containsExactlyInAnyOrder("user", "team", "doc");
    JsonNode team =
        java.util.stream.StreamSupport.stream(written.path("type_definitions").spliterator(), false)
            .filter(t -> t.path("type").asText().equals("team"))
            .findFirst()
            .orElseThrow();
    assertThat(team.path("relations").has("member")).isTrue();
    assertThat(
            team.path("metadata")
                .path("relations")
                .path("member")
                .path("directly_related_user_types")
                .get(0)
                .path("type")
                .asText())
        .isEqualTo("user");
  }

  @Test
  void aModularModelMissingAFileIsInvalidAndNamesIt() {
    cluster
        .client()
        .configMaps()
        .inNamespace(MockCluster.NS)
        .resource(
            new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withNewMetadata()
                .withName("authz")
                .withNamespace(MockCluster.NS)
                .endMetadata()
                .addToData("fga.mod", "schema: '1.2'\ncontents:\n  - core.fga\n  - team.fga\n")
                .addToData("core.fga", "module core\n\ntype user\n")
                .build())
        .create();
    applyStoreAndModel(null);
    TestStores.editModel(
        cluster,
        "app",
        m -> {
          FGAModel.ModelFrom from = new FGAModel.ModelFrom();
          from.setConfigMapKeyRef(new FGAModel.KeyRef("authz", "fga.mod"));
          m.getSpec().setModelFrom(from);
        });
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(
                        status() == null
                            ? List.<io.fabric8.kubernetes.api.model.Condition>of()
                            : status().getConditions())
                    .anySatisfy(
                        c -> {
                          assertThat(c.getReason()).isEqualTo("InvalidModel");
                          assertThat(c.getMessage())
                              .contains("key fga.mod")
                              .contains("no key team.fga for the file team.fga");
                        }));
    assertThat(writes).hasValue(0);
  }

  @Test
  void theMetricsCountTheModelsByTheStateTheirStatusSays() throws Exception {
    applyStoreAndModel(DSL);
    await()
        .atMost(WAIT)
        .until(
            this::fgamodels,
            n -> n.equals(Map.of("in_sync", 1, "newer_model_in_store", 0, "not_ready", 0)));

    // a newer model written out of band, seen at the next look
    ObjectNode foreign = (ObjectNode) ModelJson.fromDsl(DSL + "type folder\n").json().deepCopy();
    models.add(0, foreign.put("id", "01HVMMBCMGZNT3SED4Z17EM900"));
    TestStores.editModel(
        cluster, "app", m -> m.getMetadata().setAnnotations(Map.of("example.com/look", "again")));
    await()
        .atMost(WAIT)
        .until(
            this::fgamodels,
            n -> n.equals(Map.of("in_sync", 0, "newer_model_in_store", 1, "not_ready", 0)));

    TestStores.editModel(cluster, "app", m -> m.getSpec().setModel("model\n  schema 1.1\ntype"));
    await()
        .atMost(WAIT)
        .until(
            this::fgamodels,
            n -> n.equals(Map.of("in_sync", 0, "newer_model_in_store", 0, "not_ready", 1)));

    cluster.client().resources(FGAModel.class).inNamespace(MockCluster.NS).withName("app").delete();
    await()
        .atMost(WAIT)
        .until(
            this::fgamodels,
            n -> n.equals(Map.of("in_sync", 0, "newer_model_in_store", 0, "not_ready", 0)));
  }

  /** {@code openfga_operator_fgamodels} by state, from one scrape. */
  private Map<String, Integer> fgamodels() {
    Matcher m =
        Pattern.compile("(?m)^openfga_operator_fgamodels\\{state=\"([a-z_]+)\"} ([0-9.]+)$")
            .matcher(registry.scrape());
    Map<String, Integer> byState = new java.util.HashMap<>();
    while (m.find()) {
      byState.put(m.group(1), (int) Double.parseDouble(m.group(2)));
    }
    return byState;
  }
}
