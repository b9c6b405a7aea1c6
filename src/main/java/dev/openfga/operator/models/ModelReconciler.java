package dev.openfga.operator.models;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.kube.EventRecorder;
import dev.openfga.operator.kube.StatusWrites;
import dev.openfga.operator.models.ModelObservation.Desired;
import dev.openfga.operator.openfga.Connector;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.stores.Claims;
import dev.openfga.operator.stores.FGAStore;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles an {@link FGAModel}: observe (the FGAModel, its model normalised and its tests parsed,
 * its FGAStore, whether that is confirmed for its store, whether its tests wait) → decide ({@link
 * ModelPlanner}, pure) → make the call it asks for ({@link ModelCalls}: list the store's models,
 * run the tests, write the model, publish it) and decide again with the answer, until it is done →
 * the Events, the status written once. Models cannot be deleted in OpenFGA: deleting the resource
 * only ends the publication (the ConfigMap is owned by it; the annotations stay).
 */
public final class ModelReconciler implements Reconciler<FGAModel> {
  private static final Logger LOG = LoggerFactory.getLogger(ModelReconciler.class);

  /** The calls one reconcile may make: a plan that asks for more is a bug, not a wait. */
  private static final int MAX_CALLS = 8;

  private final KubernetesClient client;
  private final Connector connector;
  private final EventRecorder events;
  private final Clock clock;
  private final OpenFgaCallLimit limit;
  private final ModelMetrics metrics;
  private final Claims claims;
  private final ModelPlanner planner;
  private final Publication publication;
  private final TestRuns runs = new TestRuns();

  public ModelReconciler(
      KubernetesClient client,
      Connector connector,
      OpenFgaCallLimit limit,
      Servers servers,
      Claims claims,
      EventRecorder events,
      Clock clock,
      ModelMetrics metrics,
      int maxChecks) {
    this.client = client;
    this.connector = connector;
    this.limit = limit;
    this.claims = claims;
    this.events = events;
    this.clock = clock;
    this.metrics = metrics;
    this.planner = new ModelPlanner(servers, maxChecks);
    this.publication = new Publication(client);
  }

  @Override
  public UpdateControl<FGAModel> reconcile(FGAModel model, Context<FGAModel> context) {
    metrics.counting(context.getPrimaryCache());
    // read before the slot is taken: a reconcile turned away from then on waits for this one
    long turnedAway = limit.turnedAway();
    return limit.inSlot(
        () -> reconcileNow(model, turnedAway, System.nanoTime()),
        () -> UpdateControl.<FGAModel>noUpdate().rescheduleAfter(OpenFgaCallLimit.BUSY_AGAIN));
  }

  private UpdateControl<FGAModel> reconcileNow(FGAModel model, long turnedAway, long started) {
    ModelObservation o = observe(model);
    ModelCalls calls =
        new ModelCalls(connector, publication, runs, limit, clock, turnedAway, started);
    ModelPlan plan;
    try {
      for (plan = planner.plan(o); plan instanceof ModelPlan.Call call; plan = planner.plan(o)) {
        if (o.answers().size() >= MAX_CALLS) {
          throw new IllegalStateException(
              "an FGAModel plan asked for more than " + MAX_CALLS + " calls");
        }
        o = o.with(calls.run(call.step(), o));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return UpdateControl.noUpdate();
    }
    return finish(o, (ModelPlan.Done) plan);
  }

  /** The Events, the log line, the tests' wait and the status of the end of a plan. */
  private UpdateControl<FGAModel> finish(ModelObservation o, ModelPlan.Done done) {
    FGAModel model = o.model();
    String uid = model.getMetadata().getUid();
    done.testsNotBefore().ifPresent(until -> runs.holdUntil(uid, until));
    done.note()
        .ifPresent(
            n -> {
              var line = n.reason().isPresent() ? LOG.atWarn() : LOG.atDebug();
              line.addKeyValue("fgamodel", ModelCalls.ref(model));
              n.reason().ifPresent(r -> line.addKeyValue("reason", r.name()));
              line.log(n.message());
            });
    for (ModelPlan.Emit e : done.events()) {
      events.emit(
          model, e.reason().name(), e.reason().warning(), e.message(), e.key(), clock.instant());
    }
    if (done.status().isEmpty()) {
      return UpdateControl.<FGAModel>noUpdate().rescheduleAfter(done.again());
    }
    return StatusWrites.update(client, model, model.getStatus(), done.status().get(), done.again());
  }

  /**
   * What the decision looks at: the FGAStore, its claim and the tests' wait only for a model and
   * tests that read (the first thing decided).
   */
  private ModelObservation observe(FGAModel model) {
    Instant now = clock.instant();
    String ns = model.getMetadata().getNamespace();
    Desired desired = desired(ns, model.getSpec());
    if (!(desired instanceof Desired.Valid valid)) {
      return new ModelObservation(
          model, now, desired, Optional.empty(), false, Optional.empty(), List.of());
    }
    FGAStore.NameRef ref = model.getSpec().getStoreRef();
    Optional<FGAStore> store =
        ref == null || ref.getName() == null
            ? Optional.empty()
            : Optional.ofNullable(
                client.resources(FGAStore.class).inNamespace(ns).withName(ref.getName()).get());
    Optional<Instant> notBefore =
        runs.look(model.getMetadata().getUid(), valid.testsKey().orElse(null), now);
    return new ModelObservation(
        model, now, desired, store, store.map(this::confirmed).orElse(false), notBefore, List.of());
  }

  /** Whether this process's FGAStore controller confirmed the FGAStore for its store. */
  private boolean confirmed(FGAStore store) {
    String url =
        store.getSpec() == null || store.getSpec().getOpenfgaRef() == null
            ? null
            : store.getSpec().getOpenfgaRef().getUrl();
    return url != null
        && store.getStatus() != null
        && claims.confirmed(store.getMetadata().getUid(), url, store.getStatus().getStoreId());
  }

  /** The model the spec declares, normalised, and its tests parsed; or why they cannot be. */
  private Desired desired(String ns, FGAModel.Spec spec) {
    try {
      ModelJson.Normalised model = source(ns, spec);
      Optional<JsonNode> tests =
          spec.getTests() == null || spec.getTests().isBlank()
              ? Optional.empty()
              : Optional.of(ModelAssertions.parse(spec.getTests()));
      return new Desired.Valid(
          model, tests, tests.map(t -> ModelAssertions.key(model.hash(), spec.getTests())));
    } catch (ModelJson.InvalidModel | ModelAssertions.InvalidTests e) {
      return new Desired.Invalid(e.getMessage());
    }
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
    if (ref.getKey().endsWith(".mod")) {
      return ModelJson.fromModFile(text, source.getData(), where);
    }
    return ref.getKey().endsWith(".json")
        ? ModelJson.fromJson(text, where)
        : ModelJson.fromDsl(text, where);
  }
}
