package dev.openfga.operator.models;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.models.ModelAnswer.Models;
import dev.openfga.operator.models.ModelAnswer.Published;
import dev.openfga.operator.models.ModelAnswer.TestsRan;
import dev.openfga.operator.models.ModelAnswer.Written;
import dev.openfga.operator.models.ModelObservation.Desired;
import dev.openfga.operator.openfga.CallFailure;
import dev.openfga.operator.openfga.Model;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.stores.FGAStore;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The FGAModel plan as a whole, one observation at a time: which calls it asks for, in which order,
 * and what it ends with (the status, the Events, the tests' wait, when to look again).
 */
class ModelPlanTest {
  private static final String URL = "http://openfga.openfga:8080";
  private static final String STORE = "01HVMMBCMGZNT3SED4Z17ECXCA";
  private static final Instant NOW = Instant.parse("2026-12-04T10:00:00Z");
  private static final String V1 =
      "model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n";
  private static final String V2 = V1 + "    define editor: [user]\n";
  private static final String TESTS =
      "- name: t\n  check:\n    - user: user:anne\n      object: doc:1\n"
          + "      assertions: {viewer: false}\n";
  private static final ModelPlanner PLANNER = new ModelPlanner(new Servers(List.of(URL)), 1000);

  /** The calls a plan asked for, and its end. */
  private record Run(List<ModelStep> calls, ModelPlan.Done done) {
    FGAModel.Status status() {
      return done.status().orElseThrow();
    }

    Condition condition(String type) {
      return Conditions.find(status().getConditions(), type).orElseThrow();
    }

    List<String> events() {
      return done.events().stream().map(e -> e.reason().name() + ": " + e.message()).toList();
    }
  }

  /** Plans, answering each call in turn with the next answer; every answer must be asked for. */
  private static Run drive(ModelObservation o, ModelAnswer... answers) {
    List<ModelStep> calls = new ArrayList<>();
    ModelPlan plan = PLANNER.plan(o);
    int next = 0;
    while (plan instanceof ModelPlan.Call call) {
      calls.add(call.step());
      assertThat(next).as("an answer to %s", call.step()).isLessThan(answers.length);
      o = o.with(answers[next++]);
      plan = PLANNER.plan(o);
    }
    assertThat(next).as("answers asked for").isEqualTo(answers.length);
    return new Run(calls, (ModelPlan.Done) plan);
  }

  private static FGAModel model(String dsl, String tests, Consumer<FGAModel> edit) {
    FGAModel model = new FGAModel();
    model.setMetadata(
        new ObjectMetaBuilder()
            .withNamespace("team-a")
            .withName("app")
            .withUid("uid-1")
            .withGeneration(2L)
            .build());
    FGAModel.Spec spec = new FGAModel.Spec();
    spec.setStoreRef(new FGAStore.NameRef("payments"));
    spec.setModel(dsl);
    spec.setTests(tests);
    FGAModel.Publish publish = new FGAModel.Publish();
    publish.setConfigMapName("app-fga");
    spec.setPublish(publish);
    model.setSpec(spec);
    edit.accept(model);
    return model;
  }

  private static FGAStore store(String url) {
    FGAStore store = new FGAStore();
    store.setMetadata(
        new ObjectMetaBuilder().withNamespace("team-a").withName("payments").withUid("s").build());
    store.setSpec(new FGAStore.Spec());
    store.getSpec().setOpenfgaRef(new FGAStore.OpenFgaRef());
    store.getSpec().getOpenfgaRef().setUrl(url);
    store.setStatus(new FGAStore.Status());
    store.getStatus().setStoreId(STORE);
    Conditions.set(store.getStatus(), Conditions.READY, true, "StoreReady", "ready", NOW);
    return store;
  }

  /** The observation of {@code model}: its FGAStore ready and confirmed, its tests not waiting. */
  private static ModelObservation observed(FGAModel model) {
    return new ModelObservation(
        model, NOW, desired(model), Optional.of(store(URL)), true, Optional.empty(), List.of());
  }

  private static Desired desired(FGAModel model) {
    try {
      ModelJson.Normalised normalised = ModelJson.fromDsl(model.getSpec().getModel(), "spec.model");
      String tests = model.getSpec().getTests();
      Optional<JsonNode> parsed =
          tests == null ? Optional.empty() : Optional.of(ModelAssertions.parse(tests));
      return new Desired.Valid(
          normalised, parsed, parsed.map(t -> ModelAssertions.key(normalised.hash(), tests)));
    } catch (Exception e) {
      return new Desired.Invalid(e.getMessage());
    }
  }

  private static String hash(String dsl) throws Exception {
    return ModelJson.fromDsl(dsl).hash();
  }

  /** A status that stands for {@code id} (model {@code dsl}) in the store. */
  private static Consumer<FGAModel> standingFor(String id, String dsl) {
    return m -> {
      try {
        FGAModel.Status status = new FGAModel.Status();
        status.setStoreId(STORE);
        status.setModelId(id);
        status.setLastWrittenHash(hash(dsl));
        m.setStatus(status);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    };
  }

  private static Model inStore(String id, String dsl) throws Exception {
    return new Model(id, ModelJson.fromDsl(dsl).json());
  }

  @Test
  void aNewModelIsWrittenThenPublishedThenReady() throws Exception {
    Run run =
        drive(
            observed(model(V1, null, m -> {})),
            new Models(List.of()),
            new Written("M1"),
            new Published());

    assertThat(run.calls())
        .map(step -> step.getClass().getSimpleName())
        .containsExactly("ListModels", "WriteModel", "Publish");
    assertThat(run.calls().get(2))
        .isEqualTo(
            new ModelStep.Publish(
                "M1",
                Optional.of("app-fga"),
                Map.of("FGA_API_URL", URL, "FGA_STORE_ID", STORE, "FGA_MODEL_ID", "M1")));
    assertThat(run.status().getModelId()).isEqualTo("M1");
    assertThat(run.status().getLastWrittenHash()).isEqualTo(hash(V1));
    assertThat(run.status().getStoreId()).isEqualTo(STORE);
    assertThat(run.status().getObservedGeneration()).isEqualTo(2L);
    assertThat(run.condition(Conditions.READY).getReason()).isEqualTo("ModelReady");
    assertThat(run.condition(Conditions.READY).getMessage())
        .isEqualTo("model M1 in store " + STORE + " at " + URL);
    assertThat(run.condition(Conditions.IN_SYNC).getReason()).isEqualTo("ModelInSync");
    assertThat(run.events()).containsExactly("ModelWritten: wrote model M1 to store " + STORE);
    assertThat(run.done().again()).isEqualTo(ModelPlanner.RECHECK);
  }

  @Test
  void anUnchangedModelIsOnlyPublishedAgainAndARevertWritesNothing() throws Exception {
    Run unchanged =
        drive(
            observed(model(V1, null, standingFor("M1", V1))),
            new Models(List.of(inStore("M1", V1))),
            new Published());
    assertThat(unchanged.calls()).noneMatch(step -> step instanceof ModelStep.WriteModel);
    assertThat(unchanged.done().events()).isEmpty();

    FGAModel reverting = model(V1, null, standingFor("M2", V2));
    reverting.getStatus().setHistory(List.of(new FGAModel.HistoryEntry(hash(V1), "M1")));
    Run revert =
        drive(
            observed(reverting),
            new Models(List.of(inStore("M2", V2), inStore("M1", V1))),
            new Published());
    assertThat(revert.status().getModelId()).isEqualTo("M1");
    assertThat(revert.status().getHistory())
        .extracting(FGAModel.HistoryEntry::getModelId)
        .containsExactly("M2");
    assertThat(revert.events()).singleElement().asString().startsWith("ModelReverted: reverted");
  }

  @Test
  void aNewerModelOutOfBandIsReportedOnceAndTheModelStaysReady() throws Exception {
    Run run =
        drive(
            observed(model(V1, null, standingFor("M1", V1))),
            new Models(List.of(inStore("M9", V2), inStore("M1", V1))),
            new Published());

    assertThat(run.condition(Conditions.IN_SYNC).getStatus()).isEqualTo("False");
    assertThat(run.condition(Conditions.IN_SYNC).getReason()).isEqualTo("NewerModelInStore");
    assertThat(run.condition(Conditions.READY).getStatus()).isEqualTo("True");
    assertThat(run.done().events())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.reason()).isEqualTo(ModelReason.NewerModelInStore);
              assertThat(e.key()).isEqualTo("M9");
            });

    FGAModel again = model(V1, null, m -> {});
    again.setStatus(run.status());
    Run next =
        drive(
            observed(again),
            new Models(List.of(inStore("M9", V2), inStore("M1", V1))),
            new Published());
    assertThat(next.done().events()).as("no news").isEmpty();
  }

  @Test
  void testsThatFailKeepTheCurrentIdPublishedAndAreRecordedOnce() throws Exception {
    FGAModel model = model(V2, TESTS, standingFor("M1", V1));
    Run run =
        drive(
            observed(model),
            new Models(List.of(inStore("M1", V1))),
            new TestsRan(Optional.of("test \"t\": check user:anne viewer doc:1: expected false")),
            new Published());

    assertThat(run.calls())
        .map(step -> step.getClass().getSimpleName())
        .containsExactly("ListModels", "RunTests", "Publish");
    assertThat(((ModelStep.Publish) run.calls().get(2)).modelId()).isEqualTo("M1");
    assertThat(run.condition(Conditions.READY).getReason()).isEqualTo("TestsFailed");
    assertThat(run.condition(Conditions.READY).getMessage()).endsWith("; model M1 stays published");
    assertThat(run.status().getModelId()).isEqualTo("M1");
    assertThat(run.status().getTestedKey())
        .isEqualTo(((Desired.Valid) desired(model)).testsKey().orElseThrow());
    assertThat(run.status().getTestsFailure()).startsWith("test \"t\"");

    // the same pair looked at again: not run again, still failed
    FGAModel again = model(V2, TESTS, m -> {});
    again.setStatus(run.status());
    Run next = drive(observed(again), new Models(List.of(inStore("M1", V1))), new Published());
    assertThat(next.calls()).noneMatch(step -> step instanceof ModelStep.RunTests);
    assertThat(next.condition(Conditions.READY).getReason()).isEqualTo("TestsFailed");
    assertThat(next.done().events()).isEmpty();
  }

  @Test
  void testsThatFailBeforeAnyIdPublishNothing() throws Exception {
    Run run =
        drive(
            observed(model(V1, TESTS, m -> {})),
            new Models(List.of()),
            new TestsRan(Optional.of("test \"t\" failed")));

    assertThat(run.calls()).noneMatch(step -> step instanceof ModelStep.Publish);
    assertThat(run.condition(Conditions.READY).getMessage())
        .isEqualTo("test \"t\" failed; nothing is published");
  }

  @Test
  void testsThatPassLetTheModelBeWritten() throws Exception {
    Run run =
        drive(
            observed(model(V1, TESTS, m -> {})),
            new Models(List.of()),
            new TestsRan(Optional.empty()),
            new Written("M1"),
            new Published());

    assertThat(run.calls())
        .map(step -> step.getClass().getSimpleName())
        .containsExactly("ListModels", "RunTests", "WriteModel", "Publish");
    assertThat(run.status().getTestsFailure()).isNull();
    assertThat(run.condition(Conditions.READY).getReason()).isEqualTo("ModelReady");
  }

  @Test
  void anIoErrorDuringTheTestsWaitsLongerEachTimeAndAYieldGoesOnSoon() throws Exception {
    Instant at = NOW.plusSeconds(3);
    Run erred =
        drive(
            observed(model(V1, TESTS, m -> {})),
            new Models(List.of()),
            new ModelAnswer.TestsErred("running the model's tests: HTTP 503", 2, at));
    assertThat(erred.condition(Conditions.READY).getReason()).isEqualTo("OpenFGARequestFailed");
    assertThat(erred.condition(Conditions.READY).getMessage())
        .isEqualTo("running the model's tests: HTTP 503; the tests run again in 20s");
    assertThat(erred.status().getTestedKey()).isNull();
    assertThat(erred.done().again()).isEqualTo(Duration.ofSeconds(20));
    assertThat(erred.done().testsNotBefore()).contains(at.plusSeconds(20));

    Run yielded =
        drive(
            observed(model(V1, TESTS, m -> {})),
            new Models(List.of()),
            new ModelAnswer.TestsYielded(40, at));
    assertThat(yielded.done().status()).as("nothing written").isEmpty();
    assertThat(yielded.done().again()).isEqualTo(TestsGate.YIELD_PAUSE);
    assertThat(yielded.done().testsNotBefore()).contains(at.plus(TestsGate.YIELD_PAUSE));

    // a look before then is only rescheduled
    ModelObservation waiting =
        new ModelObservation(
            model(V1, TESTS, m -> {}),
            NOW,
            desired(model(V1, TESTS, m -> {})),
            Optional.of(store(URL)),
            true,
            Optional.of(NOW.plusSeconds(7)),
            List.of());
    Run early = drive(waiting);
    assertThat(early.done().status()).isEmpty();
    assertThat(early.done().again()).isEqualTo(Duration.ofSeconds(7));
  }

  @Test
  void anIoErrorInARowWaitsTwiceAsLongUpToFiveMinutes() throws Exception {
    assertThat(
            List.of(1, 2, 3, 4, 5, 6, 7, 100).stream()
                .map(TestsGate::retryAfter)
                .map(Duration::getSeconds))
        .containsExactly(10L, 20L, 40L, 80L, 160L, 300L, 300L, 300L);
  }

  @Test
  void aModelOpenFgaRefusesIsInvalidUntilTheNextRegularLook() throws Exception {
    Run run =
        drive(
            observed(model(V1, null, m -> {})),
            new Models(List.of()),
            new ModelAnswer.WriteRefused("HTTP 400 validation_error: bad"));

    assertThat(run.condition(Conditions.READY).getReason()).isEqualTo("InvalidModel");
    assertThat(run.condition(Conditions.READY).getMessage())
        .isEqualTo(
            "OpenFGA refused the model (store "
                + STORE
                + " at "
                + URL
                + "): HTTP 400 validation_error: bad");
    assertThat(run.done().again()).isEqualTo(ModelPlanner.RECHECK);
  }

  @Test
  void aPublicationThatFailsStillRecordsTheModelWritten() throws Exception {
    Run conflict =
        drive(
            observed(model(V1, null, m -> {})),
            new Models(List.of()),
            new Written("M1"),
            new ModelAnswer.PublishConflict("app-fga"));
    assertThat(conflict.status().getModelId()).isEqualTo("M1");
    assertThat(conflict.condition(Conditions.READY).getReason()).isEqualTo("PublishConflict");
    assertThat(conflict.condition(Conditions.READY).getMessage())
        .isEqualTo(
            "ConfigMap team-a/app-fga (publish.configMapName) exists and is not this FGAModel's;"
                + " rename or delete it");
    assertThat(conflict.events())
        .containsExactly(
            "ModelWritten: wrote model M1 to store " + STORE,
            "PublishConflict: " + conflict.condition(Conditions.READY).getMessage());
    assertThat(conflict.done().again()).isEqualTo(ModelPlanner.RECHECK);

    Run refused =
        drive(
            observed(model(V1, null, m -> {})),
            new Models(List.of()),
            new Written("M1"),
            new ModelAnswer.PublishRefused(409, Optional.of("the object has been modified")));
    assertThat(refused.condition(Conditions.READY).getReason()).isEqualTo("PublishFailed");
    assertThat(refused.condition(Conditions.READY).getMessage())
        .isEqualTo(
            "could not publish model M1 to ConfigMap app-fga or the Deployments labelled"
                + " openfga.dev/model=app: HTTP 409 the object has been modified");
    assertThat(refused.done().again()).isEqualTo(ModelPlanner.WAIT);
  }

  @Test
  void nothingIsAskedBeforeTheModelReadsAndTheStoreIsReadyListedAndConfirmed() throws Exception {
    Run invalid = drive(observed(model("model\n  schema 1.1\ntype", null, m -> {})));
    assertThat(invalid.condition(Conditions.READY).getReason()).isEqualTo("InvalidModel");
    assertThat(invalid.events()).singleElement().asString().startsWith("InvalidModel: spec.model");

    ModelPlanner strict = new ModelPlanner(new Servers(List.of(URL)), 0);
    ModelPlan over = strict.plan(observed(model(V1, TESTS, m -> {})));
    assertThat(((ModelPlan.Done) over).status().orElseThrow().getConditions().get(0).getMessage())
        .startsWith("spec.tests expand to 1 checks");

    ModelObservation noStore =
        new ModelObservation(
            model(V1, null, m -> {}),
            NOW,
            desired(model(V1, null, m -> {})),
            Optional.empty(),
            false,
            Optional.empty(),
            List.of());
    Run missing = drive(noStore);
    assertThat(missing.condition(Conditions.READY).getReason()).isEqualTo("StoreNotReady");
    assertThat(missing.condition(Conditions.READY).getMessage())
        .isEqualTo("FGAStore team-a/payments does not exist");
    assertThat(missing.done().events()).as("the FGAStore says why").isEmpty();
    assertThat(missing.done().again()).isEqualTo(ModelPlanner.WAIT);

    ModelObservation unlisted =
        new ModelObservation(
            model(V1, null, m -> {}),
            NOW,
            desired(model(V1, null, m -> {})),
            Optional.of(store("http://elsewhere:8080")),
            true,
            Optional.empty(),
            List.of());
    assertThat(drive(unlisted).condition(Conditions.READY).getMessage())
        .endsWith("(ServerNotAllowed)");

    ModelObservation unconfirmed =
        new ModelObservation(
            model(V1, null, m -> {}),
            NOW,
            desired(model(V1, null, m -> {})),
            Optional.of(store(URL)),
            false,
            Optional.empty(),
            List.of());
    Run waiting = drive(unconfirmed);
    assertThat(waiting.done().status()).isEmpty();
    assertThat(waiting.done().again()).isEqualTo(OpenFgaCallLimit.BUSY_AGAIN);
  }

  @Test
  void aFailedCallIsItsReason() throws Exception {
    Run credentials =
        drive(
            observed(model(V1, null, m -> {})),
            new ModelAnswer.Failed(new CallFailure(true, false, "Secret team-a/x has no key")));
    assertThat(credentials.condition(Conditions.READY).getReason()).isEqualTo("CredentialsError");
    assertThat(credentials.done().again()).isEqualTo(ModelPlanner.WAIT);
  }
}
