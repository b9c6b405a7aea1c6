package dev.openfga.operator.stores;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.kube.StatusWrites;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.openfga.CallFailure;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.openfga.Store;
import dev.openfga.operator.stores.StoreAnswer.Claimed;
import dev.openfga.operator.stores.StoreAnswer.Connected;
import dev.openfga.operator.stores.StoreAnswer.Created;
import dev.openfga.operator.stores.StoreAnswer.Failed;
import dev.openfga.operator.stores.StoreAnswer.Found;
import dev.openfga.operator.stores.StoreAnswer.IntentConflict;
import dev.openfga.operator.stores.StoreAnswer.IntentRecorded;
import dev.openfga.operator.stores.StoreAnswer.NameBusy;
import dev.openfga.operator.stores.StoreAnswer.Named;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The FGAStore plan as a whole, one observation at a time: which calls it asks for, in which order,
 * and what it ends with (the status, the Events, the claim, when to look again) for each answer.
 */
class StorePlanTest {
  private static final String URL = "http://openfga.openfga:8080";
  private static final String ID = "01HVMMBCMGZNT3SED4Z17ECXCA";
  private static final Instant NOW = Instant.parse("2026-12-04T10:00:00Z");
  private static final StorePlanner PLANNER = new StorePlanner(new Servers(List.of(URL)));

  /** The calls a plan asked for, and its end. */
  private record Run(List<StoreStep> calls, StorePlan end) {
    StorePlan.Done done() {
      return (StorePlan.Done) end;
    }

    StorePlan.Deletion deletion() {
      return (StorePlan.Deletion) end;
    }

    Condition ready() {
      return Conditions.find(done().status().orElseThrow().getConditions(), Conditions.READY)
          .orElseThrow();
    }

    List<String> events() {
      return done().events().stream().map(e -> e.reason().name() + ": " + e.message()).toList();
    }
  }

  /** Plans, answering each call in turn with the next answer; every answer must be asked for. */
  private static Run drive(StoreObservation o, boolean deletion, StoreAnswer... answers) {
    List<StoreStep> calls = new ArrayList<>();
    StorePlan plan = deletion ? PLANNER.deletion(o) : PLANNER.plan(o);
    int next = 0;
    while (plan instanceof StorePlan.Call call) {
      calls.add(call.step());
      assertThat(next).as("an answer to %s", call.step()).isLessThan(answers.length);
      o = o.with(answers[next++]);
      plan = deletion ? PLANNER.deletion(o) : PLANNER.plan(o);
    }
    assertThat(next).as("answers asked for").isEqualTo(answers.length);
    return new Run(calls, plan);
  }

  private static Run reconcile(FGAStore store, StoreAnswer... answers) {
    return drive(new StoreObservation(store, List.of(store), List.of(), NOW), false, answers);
  }

  private static FGAStore store(String namespace, String name, Consumer<FGAStore.Spec> edit) {
    FGAStore store = new FGAStore();
    store.setMetadata(
        new ObjectMetaBuilder()
            .withNamespace(namespace)
            .withName(name)
            .withUid(namespace + "/" + name)
            .withGeneration(3L)
            .withCreationTimestamp("2026-01-01T00:00:00Z")
            .build());
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName("payments");
    spec.setOpenfgaRef(new FGAStore.OpenFgaRef());
    spec.getOpenfgaRef().setUrl(URL);
    edit.accept(spec);
    store.setSpec(spec);
    return store;
  }

  private static FGAStore store() {
    return store("team-a", "app", spec -> {});
  }

  private static Store openfgaStore(String id) {
    return new Store(id, "payments", "2026-12-04T10:00:01Z");
  }

  @Test
  void aNewNameIsCreatedAfterItsIntentIsRecordedThenClaimedAndReady() {
    FGAStore store = store();
    FGAStore recorded = store();
    recorded.setStatus(new FGAStore.Status());
    recorded.getStatus().setCreating(new FGAStore.Creating("payments", Timestamps.format(NOW)));

    Run run =
        reconcile(
            store,
            new Connected(),
            new Named(List.of()),
            new IntentRecorded(recorded),
            new Created(openfgaStore(ID)),
            new Claimed(Optional.empty()));

    assertThat(run.calls())
        .map(step -> step.getClass().getSimpleName())
        .containsExactly("Connect", "LookUpByName", "RecordIntent", "Create", "Claim");
    assertThat(run.calls())
        .contains(
            new StoreStep.LookUpByName("payments"),
            new StoreStep.Create("payments"),
            new StoreStep.Claim(ID));
    FGAStore.Status intent = ((StoreStep.RecordIntent) run.calls().get(2)).status();
    assertThat(Conditions.sameStatus(intent, recorded.getStatus())).isTrue();
    FGAStore.Status status = run.done().status().orElseThrow();
    assertThat(status.getStoreId()).isEqualTo(ID);
    assertThat(status.getCreatedByOperator()).isTrue();
    assertThat(status.getCreating()).isNull();
    assertThat(status.getObservedGeneration()).isEqualTo(3L);
    assertThat(run.ready().getStatus()).isEqualTo("True");
    assertThat(run.ready().getReason()).isEqualTo("StoreReady");
    assertThat(run.events())
        .containsExactly("StoreCreated: created store \"payments\" (" + ID + ") at " + URL);
    assertThat(run.done().events().get(0).key()).isEqualTo(ID);
    assertThat(run.done().release()).isFalse();
    assertThat(run.done().again()).contains(StorePlanner.RECHECK);
  }

  @Test
  void theOneStoreOfTheNameIsClaimedThenAdopted() {
    Run run =
        reconcile(
            store(),
            new Connected(),
            new Named(List.of(openfgaStore(ID))),
            new Claimed(Optional.empty()));

    assertThat(run.calls()).endsWith(new StoreStep.Claim(ID));
    assertThat(run.done().status().orElseThrow().getCreatedByOperator()).isFalse();
    assertThat(run.events()).singleElement().asString().startsWith("StoreAdopted: adopted store");
  }

  @Test
  void aClaimRefusedAMomentAgoBlocksTheStoreAndLetsGoOfTheClaim() {
    StoreChoice.Blocked refused =
        new StoreChoice.Blocked(StoreReason.StoreClaimedElsewhere, "claimed elsewhere");

    Run run =
        reconcile(
            store(),
            new Connected(),
            new Named(List.of(openfgaStore(ID))),
            new Claimed(Optional.of(refused)));

    assertThat(run.ready().getStatus()).isEqualTo("False");
    assertThat(run.ready().getReason()).isEqualTo("StoreClaimedElsewhere");
    assertThat(run.done().status().orElseThrow().getStoreId()).isNull();
    assertThat(run.events()).containsExactly("StoreClaimedElsewhere: claimed elsewhere");
    assertThat(run.done().note()).isPresent();
    assertThat(run.done().release()).isTrue();
    assertThat(run.done().again()).contains(StorePlanner.RECHECK);
  }

  @Test
  void aBusyNameOrARefusedIntentWaitsWithoutWritingAnything() {
    Run busy = reconcile(store(), new Connected(), new NameBusy());
    assertThat(busy.done().status()).isEmpty();
    assertThat(busy.done().release()).isFalse();
    assertThat(busy.done().again()).contains(OpenFgaCallLimit.BUSY_AGAIN);

    Run conflict = reconcile(store(), new Connected(), new Named(List.of()), new IntentConflict());
    assertThat(conflict.done().status()).isEmpty();
    assertThat(conflict.done().events()).isEmpty();
    assertThat(conflict.done().again()).contains(StatusWrites.CONFLICT_AGAIN);
    assertThat(StorePlanner.CONFLICT_AGAIN).isEqualTo(StatusWrites.CONFLICT_AGAIN);
  }

  @Test
  void aKnownIdIsLookedUpAndAGoneStoreIsMissing() {
    FGAStore store = store("team-a", "app", spec -> spec.setStoreId(ID));

    Run run = reconcile(store, new Connected(), new Found(Optional.empty()));

    assertThat(run.calls()).containsExactly(new StoreStep.Connect(), new StoreStep.LookUp(ID));
    assertThat(run.ready().getReason()).isEqualTo("StoreMissing");
    assertThat(run.events()).singleElement().asString().startsWith("StoreMissing: store " + ID);
  }

  @Test
  void anotherNamespacesStoreIsNotEvenLookedUp() {
    FGAStore mine = store("team-b", "app", spec -> spec.setStoreId(ID));
    FGAStore holder = store("team-a", "app", spec -> {});
    holder.setStatus(new FGAStore.Status());
    holder.getStatus().setStoreId(ID);

    Run run =
        drive(
            new StoreObservation(mine, List.of(mine, holder), List.of(), NOW),
            false,
            new Connected());

    assertThat(run.calls()).containsExactly(new StoreStep.Connect());
    assertThat(run.ready().getReason()).isEqualTo("StoreClaimedElsewhere");
  }

  @Test
  void nothingIsAskedOfAServerNotListedOrForAnInvalidSpec() {
    Run elsewhere =
        reconcile(store("team-a", "app", spec -> spec.getOpenfgaRef().setUrl("http://evil:8080")));
    assertThat(elsewhere.calls()).isEmpty();
    assertThat(elsewhere.ready().getReason()).isEqualTo("ServerNotAllowed");
    assertThat(elsewhere.done().again()).as("at the next event only").isEmpty();

    Run invalid = reconcile(store("team-a", "app", spec -> spec.setName(" ")));
    assertThat(invalid.calls()).isEmpty();
    assertThat(invalid.ready().getReason()).isEqualTo("InvalidSpec");
    assertThat(invalid.done().again()).isEmpty();
  }

  @Test
  void aDeploymentRefIsReadFirstAndItsWaitIsNoEvent() {
    FGAStore store =
        store(
            "team-a",
            "app",
            spec -> spec.getOpenfgaRef().setDeploymentRef(new FGAStore.NameRef("openfga")));

    Run run = reconcile(store, new StoreAnswer.Migration(Optional.empty(), Optional.empty()));

    assertThat(run.calls()).containsExactly(new StoreStep.ReadMigration("openfga"));
    assertThat(run.ready().getReason()).isEqualTo("WaitingForMigration");
    assertThat(run.ready().getMessage())
        .isEqualTo("Deployment team-a/openfga (openfgaRef.deploymentRef) does not exist");
    assertThat(run.done().events()).as("a wait is no Warning").isEmpty();
    assertThat(run.done().note()).as("but logged when it is news").isPresent();
    assertThat(run.done().again()).contains(StorePlanner.WAIT);
  }

  @Test
  void aFailedCallIsItsReasonAndTheSameFailureAgainIsNoNews() {
    Run credentials =
        reconcile(store(), new Failed(new CallFailure(true, true, "Secret team-a/x gone")));
    assertThat(credentials.ready().getReason()).isEqualTo("CredentialsError");
    assertThat(credentials.done().again()).contains(StorePlanner.WAIT);

    FGAStore again = store();
    again.setStatus(credentials.done().status().orElseThrow());
    Run same = reconcile(again, new Failed(new CallFailure(true, true, "Secret team-a/x gone")));
    assertThat(same.done().events()).isEmpty();
    assertThat(same.done().note()).isEmpty();
    assertThat(Conditions.sameStatus(same.done().status().orElseThrow(), again.getStatus()))
        .as("nothing to write")
        .isTrue();

    Run request =
        reconcile(store(), new Connected(), new Failed(new CallFailure(false, false, "HTTP 503")));
    assertThat(request.ready().getReason()).isEqualTo("OpenFGARequestFailed");
    assertThat(request.events()).containsExactly("OpenFGARequestFailed: HTTP 503");
  }

  private static FGAStore deleted(Consumer<FGAStore> edit) {
    FGAStore store =
        store("team-a", "app", spec -> spec.setDeletionPolicy(FGAStore.DeletionPolicy.Delete));
    store.setStatus(new FGAStore.Status());
    store.getStatus().setStoreId(ID);
    store.getStatus().setCreatedByOperator(true);
    store.getMetadata().setDeletionTimestamp(Timestamps.format(NOW.minusSeconds(60)));
    edit.accept(store);
    return store;
  }

  private static Run delete(FGAStore store, Instant now, StoreAnswer... answers) {
    return drive(new StoreObservation(store, List.of(store), List.of(), now), true, answers);
  }

  @Test
  void theStoreTheOperatorCreatedIsDeletedAndTheFinalizerGoes() {
    Run run = delete(deleted(s -> {}), NOW, new StoreAnswer.Deleted());

    assertThat(run.calls()).containsExactly(new StoreStep.Delete(ID));
    assertThat(run.deletion().removeFinalizer()).isTrue();
    assertThat(run.deletion().events()).isEmpty();
  }

  @Test
  void aStoreToKeepIsNeverAskedToBeDeleted() {
    Run retained =
        delete(deleted(s -> s.getSpec().setDeletionPolicy(FGAStore.DeletionPolicy.Retain)), NOW);
    assertThat(retained.calls()).isEmpty();
    assertThat(retained.deletion().removeFinalizer()).isTrue();
    assertThat(retained.deletion().events()).isEmpty();

    Run unlisted =
        delete(deleted(s -> s.getSpec().getOpenfgaRef().setUrl("http://gone:8080")), NOW);
    assertThat(unlisted.calls()).isEmpty();
    assertThat(unlisted.deletion().removeFinalizer()).isTrue();
    assertThat(unlisted.deletion().events())
        .singleElement()
        .satisfies(e -> assertThat(e.reason()).isEqualTo(StoreReason.StoreNotDeleted));
  }

  @Test
  void aFailedDeleteIsTriedAgainThenGivenUpAfterTenMinutes() {
    StoreAnswer down = new Failed(new CallFailure(false, false, "HTTP 503"));

    Run retry = delete(deleted(s -> {}), NOW, down);
    assertThat(retry.deletion().removeFinalizer()).isFalse();
    assertThat(retry.deletion().again()).contains(StorePlanner.WAIT);
    assertThat(retry.deletion().events())
        .singleElement()
        .satisfies(e -> assertThat(e.reason()).isEqualTo(StoreReason.OpenFGARequestFailed));

    Run late = delete(deleted(s -> {}), NOW.plus(Duration.ofMinutes(10)), down);
    assertThat(late.deletion().removeFinalizer()).isTrue();
    assertThat(late.deletion().events())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.reason()).isEqualTo(StoreReason.StoreNotDeleted);
              assertThat(e.message()).startsWith("gave up deleting store " + ID);
            });

    Run noSecret =
        delete(deleted(s -> {}), NOW, new Failed(new CallFailure(true, true, "Secret gone")));
    assertThat(noSecret.deletion().removeFinalizer()).as("nothing to delete it with").isTrue();
  }
}
