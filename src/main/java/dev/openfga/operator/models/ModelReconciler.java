package dev.openfga.operator.models;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.config.GoDuration;
import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.kube.EventRecorder;
import dev.openfga.operator.kube.JsonPatch;
import dev.openfga.operator.kube.StatusWrites;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.models.ModelPlanner.Entry;
import dev.openfga.operator.models.ModelPlanner.Known;
import dev.openfga.operator.models.ModelPlanner.Plan;
import dev.openfga.operator.openfga.ApiException;
import dev.openfga.operator.openfga.Connector;
import dev.openfga.operator.openfga.Credentials;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.Model;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.stores.Claims;
import dev.openfga.operator.stores.FGAStore;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles an {@link FGAModel}: its model normalised ({@link ModelJson}), its store (a ready
 * {@link FGAStore}), the {@link ModelPlanner}'s decision, the tests gate ({@link ModelAssertions}),
 * then at most one model write, the status, and the publication: the ConfigMap {@code
 * publish.configMapName} and the pod-template annotation {@value #MODEL_ID} of the Deployments that
 * opt in with the label {@value #MODEL}. Models cannot be deleted in OpenFGA: deleting the resource
 * only ends the publication (the ConfigMap is owned by it; the annotations stay).
 */
public final class ModelReconciler implements Reconciler<FGAModel> {
  private static final Logger LOG = LoggerFactory.getLogger(ModelReconciler.class);

  /**
   * Deployment label: the name of the FGAModel (same namespace) whose id it runs with. A label, not
   * an annotation, so that the API server selects the Deployments.
   */
  public static final String MODEL = "openfga.dev/model";

  /** Pod-template annotation the operator sets: the model id (a new id rolls the pods once). */
  public static final String MODEL_ID = "openfga.dev/model-id";

  /** Deployments listed per request when looking for those labelled {@value #MODEL}. */
  static final long PAGE = 100;

  private static final int MAX_LABEL_VALUE = 63;

  private static final PatchContext JSON_PATCH = PatchContext.of(PatchType.JSON);
  static final int DEFAULT_HISTORY = 10;
  static final Duration RECHECK = Duration.ofMinutes(5);
  static final Duration WAIT = Duration.ofSeconds(10);
  static final Duration SOURCE_RECHECK = Duration.ofSeconds(30);

  /**
   * An I/O error during the tests: they run again after this, doubled at each such error in a row,
   * at most {@link #TESTS_RETRY_MAX} apart (a suite that fails half way through is not run again
   * every 10 s).
   */
  static final Duration TESTS_RETRY_FIRST = Duration.ofSeconds(10);

  static final Duration TESTS_RETRY_MAX = Duration.ofMinutes(5);

  /**
   * A suite holds its slot at least this long before it yields it to a reconcile that found none
   * free ({@link OpenFgaCallLimit#turnedAway}); shorter than {@link OpenFgaCallLimit#BUSY_AGAIN},
   * so that the slot is free when that reconcile comes back.
   */
  static final Duration SLICE = Duration.ofSeconds(1);

  /**
   * A suite that yielded its slot goes on after this: longer than {@link
   * OpenFgaCallLimit#BUSY_AGAIN}, so that the reconcile it yielded to finds the slot free.
   */
  static final Duration YIELD_PAUSE = OpenFgaCallLimit.BUSY_AGAIN.multipliedBy(2);

  /** A run of tests not looked at for this long is forgotten (its FGAModel was deleted). */
  static final Duration FORGOTTEN = Duration.ofMinutes(15);

  private final KubernetesClient client;
  private final Connector connector;
  private final EventRecorder events;
  private final Clock clock;
  private final OpenFgaCallLimit slots;
  private final ModelMetrics metrics;
  private final int maxChecks;

  /**
   * The FGAModels' tests between reconciles, by FGAModel uid: a suite that yielded its slot, or
   * waits to run again after an I/O error. In memory only: after a restart a suite runs again from
   * its start (deleting the scratch store the earlier run left).
   */
  private final Map<String, TestRun> runs = new ConcurrentHashMap<>();

  /** One FGAModel's tests for one key (model and tests): where they stand, and when to go on. */
  private static final class TestRun {
    final String key;
    ModelAssertions.Progress progress = new ModelAssertions.Progress();
    int errors;
    Instant notBefore = Instant.MIN;
    Instant touched;

    TestRun(String key, Instant now) {
      this.key = key;
      this.touched = now;
    }
  }

  private final Servers servers;
  private final Claims claims;

  /**
   * Why the model id was not published: {@link #ModelReason.PublishConflict} (a ConfigMap of that
   * name the operator does not own) or {@link #ModelReason.PublishFailed} (a write the API server
   * refused); the message names the object.
   */
  record Unpublished(ModelReason reason, String message) {}

  public ModelReconciler(
      KubernetesClient client,
      Connector connector,
      OpenFgaCallLimit slots,
      Servers servers,
      Claims claims,
      EventRecorder events,
      Clock clock,
      ModelMetrics metrics,
      int maxChecks) {
    this.slots = slots;
    this.metrics = metrics;
    this.maxChecks = maxChecks;
    this.servers = servers;
    this.claims = claims;
    this.client = client;
    this.connector = connector;
    this.events = events;
    this.clock = clock;
  }

  @Override
  public UpdateControl<FGAModel> reconcile(FGAModel model, Context<FGAModel> context) {
    metrics.counting(context.getPrimaryCache());
    // read before the slot is taken: a reconcile turned away from then on waits for this one
    long turnedAway = slots.turnedAway();
    return slots.inSlot(
        () -> reconcileNow(model, turnedAway, System.nanoTime()),
        () -> UpdateControl.<FGAModel>noUpdate().rescheduleAfter(OpenFgaCallLimit.BUSY_AGAIN));
  }

  private UpdateControl<FGAModel> reconcileNow(FGAModel model, long turnedAway, long started) {
    FGAModel.Spec spec = model.getSpec();
    FGAModel.Status old = model.getStatus();
    FGAModel.Status next = Conditions.copy(old, FGAModel.Status::new);
    next.setObservedGeneration(model.getMetadata().getGeneration());
    String ns = model.getMetadata().getNamespace();
    Duration again = spec.getModelFrom() != null ? SOURCE_RECHECK : RECHECK;

    ModelJson.Normalised desired;
    JsonNode tests;
    try {
      desired = source(ns, spec);
      tests =
          spec.getTests() == null || spec.getTests().isBlank()
              ? null
              : ModelAssertions.parse(spec.getTests());
      if (tests != null) {
        ModelAssertions.withinBudget(tests, maxChecks);
      }
    } catch (ModelJson.InvalidModel e) {
      return blocked(model, next, ModelReason.InvalidModel, e.getMessage(), again);
    } catch (ModelAssertions.InvalidTests e) {
      return blocked(model, next, ModelReason.InvalidModel, e.getMessage(), again);
    }

    String storeName = spec.getStoreRef() == null ? null : spec.getStoreRef().getName();
    FGAStore store =
        storeName == null
            ? null
            : client.resources(FGAStore.class).inNamespace(ns).withName(storeName).get();
    Optional<String> notReady = storeNotReady(ns, storeName, store);
    if (notReady.isPresent()) {
      return blocked(model, next, ModelReason.StoreNotReady, notReady.get(), WAIT);
    }

    // a suite that yielded its slot, or that waits after an I/O error, for these model and tests
    String uid = model.getMetadata().getUid();
    String key = tests == null ? null : ModelAssertions.key(desired.hash(), spec.getTests());
    Instant looked = clock.instant();
    runs.values().removeIf(r -> r.touched.isBefore(looked.minus(FORGOTTEN)));
    TestRun run = runs.get(uid);
    if (run != null && !run.key.equals(key)) {
      // the model or the tests changed: run anew (a run starts by deleting the scratch store an
      // earlier one left)
      runs.remove(uid);
      run = null;
    }
    if (run != null && looked.isBefore(run.notBefore)) {
      run.touched = looked;
      return UpdateControl.<FGAModel>noUpdate()
          .rescheduleAfter(Duration.between(looked, run.notBefore));
    }

    String storeId = store.getStatus().getStoreId();
    String url = store.getSpec().getOpenfgaRef().getUrl();
    if (!servers.allows(url)) {
      // the FGAStore's status may still say Ready (the list changed at a restart): no request
      return blocked(
          model,
          next,
          ModelReason.StoreNotReady,
          "FGAStore "
              + ns
              + "/"
              + storeName
              + " names "
              + url
              + ", which is not one of the OpenFGA servers this operator is installed for"
              + " (ServerNotAllowed)",
          WAIT);
    }
    if (!claims.confirmed(store.getMetadata().getUid(), url, storeId)) {
      // not yet looked at by this process's FGAStore controller (after a start), or claimed by
      // another namespace a moment ago: only a store confirmed for this FGAStore is used
      LOG.atDebug()
          .addKeyValue("fgamodel", ns + "/" + model.getMetadata().getName())
          .log("FGAStore {}/{} not confirmed for store {} yet", ns, storeName, storeId);
      return UpdateControl.<FGAModel>noUpdate().rescheduleAfter(OpenFgaCallLimit.BUSY_AGAIN);
    }
    Known known = known(old, storeId);
    try {
      FGAStore.OpenFgaRef ref = store.getSpec().getOpenfgaRef();
      FgaApi api =
          connector.connect(
              ns, url, ref.getCredentialsRef() == null ? null : ref.getCredentialsRef().getName());
      List<Model> models = api.listModels(storeId);
      Plan plan = ModelPlanner.plan(desired, known, models);
      Optional<String> current = known.current().map(Entry::modelId);
      if (tests == null) {
        next.setTestedKey(null);
        next.setTestsFailure(null);
      } else {
        // run once per model and tests: a failing pair is not run again at every look (each run
        // is a scratch store), and a change to the tests alone runs them against the model
        Optional<String> failed;
        if (old != null && key.equals(old.getTestedKey())) {
          failed = Optional.ofNullable(old.getTestsFailure()).filter(f -> !f.isBlank());
        } else {
          TestRun suite = run != null ? run : new TestRun(key, looked);
          runs.put(uid, suite);
          ModelAssertions.Outcome outcome;
          try {
            // the slot is this reconcile's for a slice at least, then until someone waits for one
            outcome =
                ModelAssertions.resume(
                    api,
                    ModelAssertions.scratchName(uid),
                    desired.json(),
                    tests,
                    suite.progress,
                    () ->
                        System.nanoTime() - started >= SLICE.toNanos()
                            && slots.turnedAway() != turnedAway);
          } catch (Credentials.CredentialsException e) {
            throw e;
          } catch (IOException e) {
            // from the start again, not at once: a server that fails half way through a long
            // suite is not sent it every 10 s
            suite.errors++;
            suite.progress = new ModelAssertions.Progress();
            Duration after = testsRetryAfter(suite.errors);
            suite.touched = clock.instant();
            suite.notBefore = suite.touched.plus(after);
            return blocked(
                model,
                next,
                ModelReason.OpenFGARequestFailed,
                e.getMessage() + "; the tests run again in " + GoDuration.format(after),
                after);
          }
          suite.touched = clock.instant();
          if (outcome.state() == ModelAssertions.State.YIELDED) {
            suite.notBefore = suite.touched.plus(YIELD_PAUSE);
            LOG.atDebug()
                .addKeyValue("fgamodel", ns + "/" + model.getMetadata().getName())
                .log(
                    "the model's tests yield their slot to a reconcile waiting for one after {}"
                        + " requests; they go on in {}",
                    suite.progress.requestsMade(),
                    GoDuration.format(YIELD_PAUSE));
            return UpdateControl.<FGAModel>noUpdate().rescheduleAfter(YIELD_PAUSE);
          }
          runs.remove(uid);
          failed = Optional.ofNullable(outcome.failure());
          next.setTestedKey(key);
          next.setTestsFailure(failed.orElse(null));
        }
        if (failed.isPresent()) {
          String publishing = "";
          if (current.isPresent()) {
            // the id this FGAModel stands for in this store (after a new store: none yet, and the
            // ConfigMap keeps its earlier, matching pair of ids)
            publishing =
                publishOrWhyNot(model, next, url, storeId).map(u -> "; " + u.message()).orElse("");
          }
          return blocked(
              model,
              next,
              ModelReason.TestsFailed,
              failed.get()
                  + current
                      .map(id -> "; model " + id + " stays published")
                      .orElse("; nothing is published")
                  + publishing,
              again);
        }
      }
      String modelId;
      Optional<String> newer = Optional.empty();
      if (plan instanceof Plan.Use use) {
        modelId = use.modelId();
        newer = use.newerInStore();
        if (!use.how().equals("unchanged")) {
          ModelReason reason =
              use.how().equals("revert") ? ModelReason.ModelReverted : ModelReason.ModelAdopted;
          emit(
              model,
              reason,
              (reason == ModelReason.ModelReverted ? "reverted to model " : "adopted model ")
                  + modelId
                  + " already in store "
                  + storeId
                  + " (same content, nothing written)",
              modelId,
              clock.instant());
        }
      } else {
        try {
          modelId = api.writeModel(storeId, desired.json());
        } catch (ApiException e) {
          if (!e.refused()) {
            throw e;
          }
          // the same model gets the same answer: written again when the spec changes or at the
          // next regular look, not every few seconds
          return blocked(
              model,
              next,
              ModelReason.InvalidModel,
              "OpenFGA refused the model (store " + storeId + " at " + url + "): " + e.detail(),
              again);
        }
        LOG.atInfo()
            .addKeyValue("fgamodel", ns + "/" + model.getMetadata().getName())
            .addKeyValue("modelId", modelId)
            .log("wrote authorization model to store {} at {}", storeId, url);
        emit(
            model,
            ModelReason.ModelWritten,
            "wrote model " + modelId + " to store " + storeId,
            modelId,
            clock.instant());
      }
      Entry now = new Entry(desired.hash(), modelId);
      int limit = spec.getHistoryLimit() == null ? DEFAULT_HISTORY : spec.getHistoryLimit();
      next.setStoreId(storeId);
      next.setModelId(modelId);
      next.setLastWrittenHash(desired.hash());
      next.setHistory(
          ModelPlanner.history(known, now, limit).stream()
              .map(e -> new FGAModel.HistoryEntry(e.hash(), e.modelId()))
              .toList());
      if (newer.isPresent()) {
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
            next,
            Conditions.IN_SYNC,
            false,
            ModelReason.NewerModelInStore.name(),
            message,
            clock.instant())) {
          emit(model, ModelReason.NewerModelInStore, message, newer.get(), clock.instant());
        }
      } else {
        Conditions.set(
            next,
            Conditions.IN_SYNC,
            true,
            ModelReason.ModelInSync.name(),
            "the store's newest model is this FGAModel's",
            clock.instant());
      }
      Optional<Unpublished> unpublished = publishOrWhyNot(model, next, url, storeId);
      if (unpublished.isPresent()) {
        Unpublished u = unpublished.get();
        return blocked(
            model,
            next,
            u.reason(),
            u.message(),
            u.reason().equals(ModelReason.PublishFailed) ? WAIT : again);
      }
      Conditions.set(
          next,
          Conditions.READY,
          true,
          ModelReason.ModelReady.name(),
          "model " + modelId + " in store " + storeId + " at " + url,
          clock.instant());
      return update(model, old, next, again);
    } catch (Credentials.CredentialsException e) {
      return blocked(model, next, ModelReason.CredentialsError, e.getMessage(), WAIT);
    } catch (IOException e) {
      return blocked(model, next, ModelReason.OpenFGARequestFailed, e.getMessage(), WAIT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return UpdateControl.noUpdate();
    }
  }

  /**
   * How long after the {@code errors}-th I/O error in a row the tests run again: {@link
   * #TESTS_RETRY_FIRST}, doubled at each further one, at most {@link #TESTS_RETRY_MAX}.
   */
  static Duration testsRetryAfter(int errors) {
    int doublings = Math.min(Math.max(errors, 1) - 1, 30);
    Duration after = TESTS_RETRY_FIRST.multipliedBy(1L << doublings);
    return after.compareTo(TESTS_RETRY_MAX) > 0 ? TESTS_RETRY_MAX : after;
  }

  /** The model the spec declares, normalised; exactly one source. */
  private ModelJson.Normalised source(String ns, FGAModel.Spec spec) throws ModelJson.InvalidModel {
    int sources =
        (spec.getModel() != null ? 1 : 0)
            + (spec.getModelJson() != null ? 1 : 0)
            + (spec.getModelFrom() != null ? 1 : 0);
    if (sources != 1) {
      throw new ModelJson.InvalidModel(
          "exactly one of spec.model, spec.modelJson, spec.modelFrom must be set");
    }
    if (spec.getModel() != null) {
      return ModelJson.fromDsl(spec.getModel(), "spec.model");
    }
    if (spec.getModelJson() != null) {
      return ModelJson.fromJson(spec.getModelJson(), "spec.modelJson");
    }
    FGAModel.KeyRef ref = spec.getModelFrom().getConfigMapKeyRef();
    if (ref == null || ref.getName() == null || ref.getKey() == null) {
      throw new ModelJson.InvalidModel("spec.modelFrom.configMapKeyRef needs name and key");
    }
    ConfigMap source = client.configMaps().inNamespace(ns).withName(ref.getName()).get();
    String text =
        source == null || source.getData() == null ? null : source.getData().get(ref.getKey());
    if (text == null) {
      throw new ModelJson.InvalidModel(
          "ConfigMap "
              + ns
              + "/"
              + ref.getName()
              + (source == null ? " does not exist" : " has no key " + ref.getKey()));
    }
    String where = "ConfigMap " + ns + "/" + ref.getName() + " key " + ref.getKey();
    return ref.getKey().endsWith(".json")
        ? ModelJson.fromJson(text, where)
        : ModelJson.fromDsl(text, where);
  }

  /** Why the store cannot be used yet, or empty. */
  static Optional<String> storeNotReady(String ns, String name, FGAStore store) {
    if (name == null) {
      return Optional.of("spec.storeRef.name must name an FGAStore");
    }
    if (store == null) {
      return Optional.of("FGAStore " + ns + "/" + name + " does not exist");
    }
    FGAStore.Status s = store.getStatus();
    boolean ready =
        s != null
            && s.getStoreId() != null
            && Conditions.isTrue(s.getConditions(), Conditions.READY);
    if (!ready) {
      String why =
          s == null
              ? "not reconciled yet"
              : Conditions.find(s.getConditions(), Conditions.READY)
                  .map(c -> c.getReason() + ": " + c.getMessage())
                  .orElse("not reconciled yet");
      return Optional.of("FGAStore " + ns + "/" + name + " is not ready (" + why + ")");
    }
    return Optional.empty();
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

  /**
   * {@link #publish}, with a write the API server refuses (e.g. a forbidden or invalid one) turned
   * into a failed publication that names it, so that the status (the model written) is still
   * recorded and the model is not written or tested again at the next reconcile.
   */
  private Optional<Unpublished> publishOrWhyNot(
      FGAModel model, FGAModel.Status status, String url, String storeId) {
    for (int attempt = 1; ; attempt++) {
      try {
        return publish(model, status, url, storeId);
      } catch (KubernetesClientException e) {
        if (e.getCode() == 409 && attempt < PUBLISH_ATTEMPTS) {
          // the ConfigMap or a Deployment changed (or the ConfigMap was created) since it was
          // read: publish reads and lists them again, and skips what already has the id
          continue;
        }
        return Optional.of(unpublished(model, status, e));
      }
    }
  }

  /** Publications tried at once when a ConfigMap or Deployment changed between read and write. */
  static final int PUBLISH_ATTEMPTS = 3;

  private static Unpublished unpublished(
      FGAModel model, FGAModel.Status status, KubernetesClientException e) {
    String publishTo =
        model.getSpec().getPublish() == null
            ? null
            : model.getSpec().getPublish().getConfigMapName();
    return new Unpublished(
        ModelReason.PublishFailed,
        "could not publish model "
            + status.getModelId()
            + (publishTo == null ? "" : " to ConfigMap " + publishTo)
            + " or the Deployments labelled "
            + MODEL
            + "="
            + model.getMetadata().getName()
            + ": HTTP "
            + e.getCode()
            + (e.getStatus() == null || e.getStatus().getMessage() == null
                ? ""
                : " " + e.getStatus().getMessage()));
  }

  /**
   * Publishes the status's model id, if any: the ConfigMap, then the opted-in Deployments. A
   * ConfigMap of that name the operator does not own is a conflict.
   */
  private Optional<Unpublished> publish(
      FGAModel model, FGAModel.Status status, String url, String storeId) {
    String modelId = status.getModelId();
    if (modelId == null) {
      return Optional.empty();
    }
    String ns = model.getMetadata().getNamespace();
    FGAModel.Publish publish = model.getSpec().getPublish();
    if (publish != null && publish.getConfigMapName() != null) {
      Map<String, String> data = new LinkedHashMap<>();
      data.put("FGA_API_URL", url);
      data.put("FGA_STORE_ID", storeId);
      data.put("FGA_MODEL_ID", modelId);
      String name = publish.getConfigMapName();
      ConfigMap existing = client.configMaps().inNamespace(ns).withName(name).get();
      if (existing == null) {
        client
            .configMaps()
            .inNamespace(ns)
            .resource(
                new ConfigMapBuilder()
                    .withNewMetadata()
                    .withName(name)
                    .withNamespace(ns)
                    .addToLabels(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR)
                    .withOwnerReferences(owner(model))
                    .endMetadata()
                    .withData(data)
                    .build())
            .create();
      } else if (!ownedBy(existing, model)) {
        return Optional.of(
            new Unpublished(
                ModelReason.PublishConflict,
                "ConfigMap "
                    + ns
                    + "/"
                    + name
                    + " (publish.configMapName) exists and is not this FGAModel's; rename or delete it"));
      } else if (!data.equals(existing.getData())) {
        client
            .resource(existing)
            .patch(JSON_PATCH, JsonPatch.guardedBy(existing).add("/data", data).json());
      }
    }
    // the Deployments labelled with the model's name: the API server selects them, a page at a
    // time, so a namespace's other Deployments are neither sent nor held (a name longer than a
    // label value may be cannot be on any; the CRD refuses such names)
    String name = model.getMetadata().getName();
    String next = null;
    while (name.length() <= MAX_LABEL_VALUE) {
      DeploymentList page =
          client
              .apps()
              .deployments()
              .inNamespace(ns)
              .withLabel(MODEL, name)
              .list(new ListOptionsBuilder().withLimit(PAGE).withContinue(next).build());
      for (Deployment d : page.getItems()) {
        publishTo(d, model, modelId);
      }
      next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
      if (next == null || next.isEmpty()) {
        break;
      }
    }
    return Optional.empty();
  }

  /**
   * Sets the pod-template annotation {@value #MODEL_ID} of {@code d} to {@code modelId} unless it
   * has it, by a patch guarded by its resourceVersion; one changed since it was listed (its
   * controller writes its status all the time) throws the conflict, and {@link #publishOrWhyNot}
   * publishes again from a new list.
   */
  private void publishTo(Deployment d, FGAModel model, String modelId) {
    Map<String, String> pod =
        d.getSpec().getTemplate().getMetadata() == null
            ? null
            : d.getSpec().getTemplate().getMetadata().getAnnotations();
    if (pod != null && modelId.equals(pod.get(MODEL_ID))) {
      return;
    }
    if (pod != null && pod.isEmpty()) {
      pod = null; // the client reads an absent map as an empty one; the patch must create it
    }
    JsonPatch patch = JsonPatch.guardedBy(d);
    if (d.getSpec().getTemplate().getMetadata() == null) {
      patch.add("/spec/template/metadata", Map.of("annotations", Map.of(MODEL_ID, modelId)));
    } else {
      patch.put("/spec/template/metadata/annotations", pod, MODEL_ID, modelId);
    }
    client.resource(d).patch(JSON_PATCH, patch.json());
    LOG.atInfo()
        .addKeyValue(
            "fgamodel", d.getMetadata().getNamespace() + "/" + model.getMetadata().getName())
        .addKeyValue("deployment", d.getMetadata().getName())
        .log("published model {} to the pod template: its pods roll", modelId);
  }

  private static OwnerReference owner(FGAModel model) {
    return new OwnerReferenceBuilder()
        .withApiVersion(model.getApiVersion())
        .withKind(model.getKind())
        .withName(model.getMetadata().getName())
        .withUid(model.getMetadata().getUid())
        .withController(true)
        .build();
  }

  private static boolean ownedBy(ConfigMap cm, FGAModel model) {
    Map<String, String> labels = cm.getMetadata().getLabels();
    return labels != null
        && Keys.MANAGED_BY_OPERATOR.equals(labels.get(Keys.MANAGED_BY))
        && cm.getMetadata().getOwnerReferences().stream()
            .anyMatch(o -> model.getMetadata().getUid().equals(o.getUid()));
  }

  private UpdateControl<FGAModel> blocked(
      FGAModel model, FGAModel.Status next, ModelReason reason, String message, Duration again) {
    Instant now = clock.instant();
    Optional<String> news = Conditions.block(next, reason.name(), message, now);
    if (news.isPresent()) {
      LOG.atWarn()
          .addKeyValue(
              "fgamodel", model.getMetadata().getNamespace() + "/" + model.getMetadata().getName())
          .addKeyValue("reason", reason.name())
          .log(message);
      if (reason.warning()) {
        events.emit(model, reason.name(), true, message, news.get(), now);
      }
    }
    return update(model, model.getStatus(), next, again);
  }

  private void emit(FGAModel model, ModelReason reason, String message, String key, Instant now) {
    events.emit(model, reason.name(), reason.warning(), message, key, now);
  }

  private UpdateControl<FGAModel> update(
      FGAModel model, FGAModel.Status old, FGAModel.Status next, Duration again) {
    return StatusWrites.update(client, model, old, next, again);
  }
}
