package dev.openfga.operator.models;

import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.models.ModelAnswer.Failed;
import dev.openfga.operator.models.ModelChoice.Choice;
import dev.openfga.operator.models.ModelChoice.Entry;
import dev.openfga.operator.models.ModelChoice.Known;
import dev.openfga.operator.models.ModelObservation.Desired;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.stores.StoreReadiness;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What to do about an {@link FGAModel}: pure, a function of a {@link ModelObservation}, so every
 * rule is tested directly ({@code ModelPlanTest}). In order: the model and its tests must read
 * ({@code InvalidModel}, the tests' budget included), its FGAStore must be ready, on a listed
 * server and confirmed for its store by this process ({@code StoreNotReady}, or a wait); then the
 * store's models are listed, {@link ModelChoice} says which id to stand for, the tests gate runs
 * the tests once per pair of model and tests ({@link TestsGate}), at most one model is written, the
 * status records it, {@code InSync} says whether the store's newest model is its own, and the id is
 * published ({@link ModelStep.Publish}); only then {@code Ready=True}. The calls it asks for are
 * made by the reconciler, which asks it again with each answer.
 */
public final class ModelPlanner {
  /** How many earlier model ids the status remembers without {@code spec.historyLimit}. */
  static final int DEFAULT_HISTORY = 10;

  /** How often a model is looked at again (a newer model written out of band is found then). */
  static final Duration RECHECK = Duration.ofMinutes(5);

  /** How soon a model that waits (its store, the credentials, the API) is looked at again. */
  static final Duration WAIT = Duration.ofSeconds(10);

  /** How often a model from {@code spec.modelFrom} (a ConfigMap not watched) is read again. */
  static final Duration SOURCE_RECHECK = Duration.ofSeconds(30);

  private final Servers servers;
  private final int maxChecks;

  /**
   * @param servers the OpenFGA servers the operator is installed for
   * @param maxChecks the most checks one FGAModel's tests may expand to
   */
  public ModelPlanner(Servers servers, int maxChecks) {
    this.servers = servers;
    this.maxChecks = maxChecks;
  }

  /** The next call to make for the FGAModel of {@code o}, or the end of its reconcile. */
  public ModelPlan plan(ModelObservation o) {
    ModelDraft d =
        new ModelDraft(o, o.model().getSpec().getModelFrom() != null ? SOURCE_RECHECK : RECHECK);
    if (o.desired() instanceof Desired.Invalid invalid) {
      return d.blocked(ModelReason.InvalidModel, invalid.message(), d.again);
    }
    Desired.Valid desired = (Desired.Valid) o.desired();
    Optional<String> over = desired.tests().flatMap(t -> ModelAssertions.overBudget(t, maxChecks));
    if (over.isPresent()) {
      return d.blocked(ModelReason.InvalidModel, over.get(), d.again);
    }
    String ns = o.model().getMetadata().getNamespace();
    String storeName = storeName(o.model());
    Optional<String> notReady = StoreReadiness.notReady(ns, storeName, o.store().orElse(null));
    if (notReady.isPresent()) {
      return d.blocked(ModelReason.StoreNotReady, notReady.get(), WAIT);
    }
    // a suite that yielded its slot, or that waits after an I/O error, for these model and tests
    Optional<Instant> notBefore = o.testsNotBefore().filter(o.now()::isBefore);
    if (notBefore.isPresent()) {
      return d.waitOnly(Duration.between(o.now(), notBefore.get()), null);
    }
    FGAStore store = o.store().orElseThrow();
    String storeId = store.getStatus().getStoreId();
    String url = store.getSpec().getOpenfgaRef().getUrl();
    Optional<String> notAllowed = StoreReadiness.notAllowed(ns, storeName, store, servers);
    if (notAllowed.isPresent()) {
      // the FGAStore's status may still say Ready (the list changed at a restart): no request
      return d.blocked(ModelReason.StoreNotReady, notAllowed.get(), WAIT);
    }
    if (!o.confirmed()) {
      // not yet looked at by this process's FGAStore controller (after a start), or claimed by
      // another namespace a moment ago: only a store confirmed for this FGAStore is used
      return d.waitOnly(
          OpenFgaCallLimit.BUSY_AGAIN,
          "FGAStore " + ns + "/" + storeName + " not confirmed for store " + storeId + " yet");
    }
    return inStore(d, desired, storeId, url);
  }

  /** The model in its store: listed, tested, written, published. */
  private static ModelPlan inStore(
      ModelDraft d, Desired.Valid desired, String storeId, String url) {
    Optional<Failed> failed = d.o.answer(Failed.class);
    if (failed.isPresent()) {
      ModelReason reason =
          failed.get().failure().credentials()
              ? ModelReason.CredentialsError
              : ModelReason.OpenFGARequestFailed;
      return d.blocked(reason, failed.get().failure().message(), WAIT);
    }
    Optional<ModelAnswer.Models> models = d.o.answer(ModelAnswer.Models.class);
    if (models.isEmpty()) {
      return call(new ModelStep.ListModels(storeId));
    }
    Known known = known(d.o.model().getStatus(), storeId);
    Choice choice = ModelChoice.choose(desired.model(), known, models.get().models());
    Optional<ModelPlan> gate = TestsGate.of(d, desired, known, storeId, url);
    return gate.isPresent() ? gate.get() : standFor(d, desired, known, choice, storeId, url);
  }

  /** Stand for the model chosen, written first when it is new. */
  private static ModelPlan standFor(
      ModelDraft d, Desired.Valid desired, Known known, Choice choice, String storeId, String url) {
    if (choice instanceof Choice.Use use) {
      if (!use.how().equals("unchanged")) {
        boolean revert = use.how().equals("revert");
        d.emit(
            revert ? ModelReason.ModelReverted : ModelReason.ModelAdopted,
            (revert ? "reverted to model " : "adopted model ")
                + use.modelId()
                + " already in store "
                + storeId
                + " (same content, nothing written)",
            use.modelId());
      }
      return publish(d, desired, known, use.modelId(), use.newerInStore(), storeId, url);
    }
    Optional<ModelAnswer.WriteRefused> refused = d.o.answer(ModelAnswer.WriteRefused.class);
    if (refused.isPresent()) {
      // the same model gets the same answer: written again when the spec changes or at the next
      // regular look, not every few seconds
      return d.blocked(
          ModelReason.InvalidModel,
          "OpenFGA refused the model (store "
              + storeId
              + " at "
              + url
              + "): "
              + refused.get().detail(),
          d.again);
    }
    Optional<ModelAnswer.Written> written = d.o.answer(ModelAnswer.Written.class);
    if (written.isEmpty()) {
      return call(new ModelStep.WriteModel(storeId, desired.model().json()));
    }
    String modelId = written.get().modelId();
    d.emit(ModelReason.ModelWritten, "wrote model " + modelId + " to store " + storeId, modelId);
    return publish(d, desired, known, modelId, Optional.empty(), storeId, url);
  }

  /** Record {@code modelId} in the status, publish it; {@code Ready=True} once it is. */
  private static ModelPlan publish(
      ModelDraft d,
      Desired.Valid desired,
      Known known,
      String modelId,
      Optional<String> newer,
      String storeId,
      String url) {
    record(d, known, new Entry(desired.model().hash(), modelId), storeId);
    inSync(d, newer, storeId, modelId);
    Optional<ModelAnswer> published = ModelPublication.answer(d.o);
    if (published.isEmpty()) {
      return call(ModelPublication.step(d.o, modelId, storeId, url));
    }
    Optional<ModelPublication.Unpublished> unpublished =
        ModelPublication.unpublished(d.o, published.get(), modelId);
    if (unpublished.isPresent()) {
      ModelReason reason = unpublished.get().reason();
      return d.blocked(
          reason,
          unpublished.get().message(),
          reason == ModelReason.PublishFailed ? WAIT : d.again);
    }
    Conditions.set(
        d.next,
        Conditions.READY,
        true,
        ModelReason.ModelReady.name(),
        "model " + modelId + " in store " + storeId + " at " + url,
        d.o.now());
    return d.done();
  }

  /** The status stands for {@code now} in the store; the history keeps what it stood for. */
  private static void record(ModelDraft d, Known known, Entry now, String storeId) {
    Integer limit = d.o.model().getSpec().getHistoryLimit();
    d.next.setStoreId(storeId);
    d.next.setModelId(now.modelId());
    d.next.setLastWrittenHash(now.hash());
    d.next.setHistory(
        ModelChoice.history(known, now, limit == null ? DEFAULT_HISTORY : limit).stream()
            .map(e -> new FGAModel.HistoryEntry(e.hash(), e.modelId()))
            .toList());
  }

  /** {@code InSync}: False with one Warning Event when a model written out of band is newer. */
  private static void inSync(ModelDraft d, Optional<String> newer, String storeId, String modelId) {
    if (newer.isEmpty()) {
      Conditions.set(
          d.next,
          Conditions.IN_SYNC,
          true,
          ModelReason.ModelInSync.name(),
          "the store's newest model is this FGAModel's",
          d.o.now());
      return;
    }
    String message =
        "store "
            + storeId
            + " has a newer model "
            + newer.get()
            + " that this FGAModel did not write; apps that do not pin a model id use it."
            + " Model "
            + modelId
            + " stays published";
    if (Conditions.set(
        d.next,
        Conditions.IN_SYNC,
        false,
        ModelReason.NewerModelInStore.name(),
        message,
        d.o.now())) {
      d.emit(ModelReason.NewerModelInStore, message, newer.get());
    }
  }

  static ModelPlan call(ModelStep step) {
    return new ModelPlan.Call(step);
  }

  private static String storeName(FGAModel model) {
    FGAStore.NameRef ref = model.getSpec().getStoreRef();
    return ref == null ? null : ref.getName();
  }

  /** What the status knows, for this store only (another store's ids mean nothing here). */
  static Known known(FGAModel.Status status, String storeId) {
    if (status == null || !storeId.equals(status.getStoreId())) {
      return new Known(Optional.empty(), List.of());
    }
    Optional<Entry> current =
        status.getModelId() == null || status.getLastWrittenHash() == null
            ? Optional.empty()
            : Optional.of(new Entry(status.getLastWrittenHash(), status.getModelId()));
    List<Entry> history = new ArrayList<>();
    for (FGAModel.HistoryEntry e : status.getHistory()) {
      if (e.getHash() != null && e.getModelId() != null) {
        history.add(new Entry(e.getHash(), e.getModelId()));
      }
    }
    return new Known(current, history);
  }
}
