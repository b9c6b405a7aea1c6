package dev.openfga.operator.fga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.testing.FakeOpenFga;
import dev.openfga.operator.testing.InMemoryOpenFga;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An FGAModel's tests in the real operator against the mock API server and an in-memory OpenFGA
 * whose checks all answer "allowed": each pair of model and tests runs once (a scratch store each
 * time), whatever the number of looks.
 */
class ModelTestsScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final String DSL =
      "model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n";
  private static final String TESTS =
      """
      - name: anne views doc 1
        tuples:
          - {user: "user:anne", relation: viewer, object: "doc:1"}
        check:
          - user: user:anne
            object: doc:1
            assertions: {viewer: EXPECTED}
      """;

  private MockCluster cluster;
  private final InMemoryOpenFga api = new InMemoryOpenFga();
  private FakeOpenFga openfga;

  @BeforeEach
  void start() throws IOException {
    cluster = new MockCluster();
    openfga = new FakeOpenFga(cluster, api);
  }

  @AfterEach
  void stop() {
    cluster.close();
    openfga.close();
  }

  private Condition ready() {
    FGAModel m = TestStores.getModel(cluster, "app");
    return m == null || m.getStatus() == null
        ? null
        : m.getStatus().getConditions().stream()
            .filter(c -> c.getType().equals("Ready"))
            .findFirst()
            .orElse(null);
  }

  private void edit(java.util.function.Consumer<FGAModel> change) {
    TestStores.editModel(cluster, "app", change);
  }

  private void editTests(String tests) {
    edit(m -> m.getSpec().setTests(tests));
  }

  /** The FGAStore "app" (its store created), then the FGAModel "app" of it with these tests. */
  private FGAModel createModel(String tests) {
    TestStores.create(cluster, "app", "app", "http://127.0.0.1:" + openfga.port());
    await().atMost(WAIT).until(() -> api.created.get() == 1);
    FGAModel model = new FGAModel();
    model.setMetadata(
        new ObjectMetaBuilder().withName("app").withNamespace(MockCluster.NS).build());
    FGAModel.Spec spec = new FGAModel.Spec();
    spec.setStoreRef(new FGAStore.NameRef("app"));
    spec.setModel(DSL);
    spec.setTests(tests);
    model.setSpec(spec);
    return cluster
        .client()
        .resources(FGAModel.class)
        .inNamespace(MockCluster.NS)
        .resource(model)
        .create();
  }

  @Test
  void failingTestsRunOnceAndAChangeToTheTestsAloneRunsThemAgain() throws Exception {
    // every check answers allowed: expecting false fails
    createModel(TESTS.replace("EXPECTED", "false"));

    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(ready()).extracting(Condition::getReason).isEqualTo("TestsFailed"));
    assertThat(ready().getMessage()).contains("anne views doc 1").contains("nothing is published");
    // the store and one scratch store; looks after the failure (its own status write, a label)
    // run nothing again
    assertThat(api.created).hasValue(2);
    edit(m -> m.getMetadata().setLabels(java.util.Map.of("looked-at", "again")));
    Thread.sleep(3000);
    assertThat(api.created).hasValue(2);
    assertThat(ready().getReason()).isEqualTo("TestsFailed");

    // the tests alone change: they run against the same model, pass, and the model is written
    editTests(TESTS.replace("EXPECTED", "true"));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(ready()).extracting(Condition::getStatus).isEqualTo("True"));
    assertThat(api.created).hasValue(3);
    FGAModel.Status status = TestStores.getModel(cluster, "app").getStatus();
    assertThat(status.getTestedKey()).startsWith("sha256:");
    assertThat(status.getTestsFailure()).isNull();

    // tests that fail for the model already published: it stays published, the FGAModel says so
    editTests(TESTS.replace("EXPECTED", "false").replace("anne views", "anne still views"));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(ready()).extracting(Condition::getReason).isEqualTo("TestsFailed"));
    assertThat(ready().getMessage())
        .contains("anne still views")
        .contains("model " + status.getModelId() + " stays published");
    assertThat(api.created).hasValue(4);
  }

  private void awaitReason(String reason) {
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(ready()).extracting(Condition::getReason).isEqualTo(reason));
  }

  /** Once the reconcile its own status write brings is over: no scratch store for 5 s. */
  private void assertNoScratchStoreForAWhile() throws InterruptedException {
    Thread.sleep(1000);
    int stores = api.created.get();
    Thread.sleep(5000);
    assertThat(api.created).hasValue(stores);
  }

  @Test
  void aCheckOpenFgaRefusesFailsTheTestsOnceWithTheSameMessage() throws Exception {
    // a relation the model no longer defines: OpenFGA answers the check with 400
    api.refused = "check";
    createModel(TESTS.replace("EXPECTED", "true"));

    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(ready()).extracting(Condition::getReason).isEqualTo("TestsFailed"));
    assertThat(ready().getMessage())
        .contains("anne views doc 1")
        .contains("OpenFGA refused a check or list_objects")
        .contains("HTTP 400 validation_error");
    // one scratch store, not one per look (each failed run made a new one and a new message, and
    // each status write started the next run at once)
    Thread.sleep(3000);
    assertThat(api.created).hasValue(2);
    assertThat(
            cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems().stream()
                .filter(e -> "TestsFailed".equals(e.getReason())))
        .hasSize(1);
  }

  @Test
  void aCheckWithoutAnAnswerReadsTheSameAtEveryRunAndRunsAgainOnlyAfterTheWait() throws Exception {
    api.unanswered = "check";
    createModel(TESTS.replace("EXPECTED", "true"));

    awaitReason("OpenFGARequestFailed");
    String uid = TestStores.getModel(cluster, "app").getMetadata().getUid();
    // the scratch store by its name: the message is the same at every run (a new scratch id each
    // time would rewrite the status, and each status write would start the next run at once)
    assertThat(ready().getMessage()).contains(ModelTests.scratchName(uid));
    // none within the 10 s wait (a run started by its own status write makes several a second)
    assertNoScratchStoreForAWhile();
  }

  @Test
  void aModelNotYetOnAReadReplicaIsNoTestFailureAndNoLoop() throws Exception {
    api.modelNotYetReplicated = true;
    createModel(TESTS.replace("EXPECTED", "true"));

    awaitReason("OpenFGARequestFailed");
    // the scratch model's id (new at every run) is not in the message
    assertThat(ready().getMessage()).contains("(the tests' model)");
    assertNoScratchStoreForAWhile();

    // caught up: the tests run again after the wait and pass
    api.modelNotYetReplicated = false;
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(ready()).extracting(Condition::getStatus).isEqualTo("True"));
  }

  @Test
  void aModelOpenFgaRefusesIsInvalidAndNotWrittenAgainAtOnce() throws Exception {
    // no tests: the model goes straight to the store, which refuses it
    api.refused = "authorization-models";
    createModel(null);

    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(ready()).extracting(Condition::getReason).isEqualTo("InvalidModel"));
    assertThat(ready().getMessage())
        .startsWith("OpenFGA refused the model (store ")
        .contains("HTTP 400 validation_error: refused by the test");
    // the look its own status write brings may send it once more; then not before the next
    // regular look (5 min), nor after the 10 s the operator waits for a server that failed
    Thread.sleep(1000);
    int refusals = api.refusals.get();
    Thread.sleep(11_000);
    assertThat(api.refusals).hasValue(refusals);
    assertThat(api.modelsWritten).hasValue(0);

    // the spec changes: written at once, and accepted
    api.refused = null;
    edit(m -> m.getSpec().setModel(DSL + "    define editor: [user]\n"));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(ready()).extracting(Condition::getStatus).isEqualTo("True"));
    assertThat(api.modelsWritten).hasValue(1);
  }

  @Test
  void aScratchStoreAnEarlierRunLeftIsDeletedAndNoOtherStore() throws Exception {
    // the FGAModel is made without its tests first, to learn its uid
    String uid = createModel(null).getMetadata().getUid();
    assertThat(uid).isNotBlank();
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(ready()).extracting(Condition::getStatus).isEqualTo("True"));
    // what a crash during an earlier run of its tests left, another FGAModel's, a user's store
    api.stores.put("left-1", ModelTests.scratchName(uid));
    api.stores.put("other-1", ModelTests.scratchName("00000000-0000-0000-0000-000000000001"));
    api.stores.put("user-1", "fgamodel-test-");

    editTests(TESTS.replace("EXPECTED", "true"));
    await().atMost(WAIT).untilAsserted(() -> assertThat(api.stores).doesNotContainKey("left-1"));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(TestStores.getModel(cluster, "app").getStatus().getTestedKey())
                    .startsWith("sha256:"));
    assertThat(ready().getStatus()).isEqualTo("True");
    // its own scratch store was created and deleted; nothing else was touched
    assertThat(api.created).hasValue(2);
    assertThat(api.stores.values())
        .containsExactlyInAnyOrder(
            "app",
            ModelTests.scratchName("00000000-0000-0000-0000-000000000001"),
            "fgamodel-test-");
  }
}
