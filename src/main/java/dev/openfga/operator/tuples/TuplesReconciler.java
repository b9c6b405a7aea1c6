package dev.openfga.operator.tuples;

import dev.openfga.operator.kube.EventRecorder;
import dev.openfga.operator.kube.StatusWrites;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.openfga.Connector;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.stores.Claims;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.tuples.TuplesObservation.Desired;
import dev.openfga.operator.tuples.TuplesObservation.Record;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles an {@link FGATuples}: observe (the FGATuples and the tuples it declares, its FGAStore
 * and whether this process confirmed it, the FGAModel of {@code spec.modelRef}, its ownership
 * record, the tuples other FGATuples of the same FGAStore declare) → decide ({@link TuplesPlanner},
 * pure) → make the call it asks for ({@link TuplesCalls}: read the model, read the store, write the
 * record, delete, create) and decide again with the answer, until it is done → the Events, the
 * status written once. Deleting the resource ({@link Cleaner}) deletes its own tuples only with
 * {@code deletionPolicy: Delete}.
 */
public final class TuplesReconciler implements Reconciler<FGATuples>, Cleaner<FGATuples> {
  private static final Logger LOG = LoggerFactory.getLogger(TuplesReconciler.class);

  /** The calls one reconcile may make: a plan that asks for more is a bug, not a wait. */
  static final int MAX_CALLS = 3 * TuplesPlanner.MAX_TUPLES + 20;

  private final KubernetesClient client;
  private final Connector connector;
  private final EventRecorder events;
  private final Clock clock;
  private final OpenFgaCallLimit limit;
  private final Claims claims;
  private final TuplesPlanner planner;
  private final OwnershipRecord record;
  private final int perWrite;
  private final TuplesMetrics metrics;

  /**
   * @param perWrite the most tuples one Write carries ({@code --tuples-per-write})
   * @param metrics the FGATuples gauges, counted from this controller's cache
   */
  public TuplesReconciler(
      KubernetesClient client,
      Connector connector,
      OpenFgaCallLimit limit,
      Servers servers,
      Claims claims,
      EventRecorder events,
      Clock clock,
      int perWrite,
      TuplesMetrics metrics) {
    this.client = client;
    this.connector = connector;
    this.limit = limit;
    this.claims = claims;
    this.events = events;
    this.clock = clock;
    this.perWrite = perWrite;
    this.metrics = metrics;
    this.planner = new TuplesPlanner(servers);
    this.record = new OwnershipRecord(client);
  }

  @Override
  public UpdateControl<FGATuples> reconcile(FGATuples tuples, Context<FGATuples> context) {
    metrics.counting(context.getPrimaryCache());
    // observed outside the slot: the slots are for calls to OpenFGA, and an unchanged set,
    // or one that waits, makes none and needs no slot
    TuplesObservation o = observe(tuples, context, false);
    Supplier<UpdateControl<FGATuples>> busy =
        () -> UpdateControl.<FGATuples>noUpdate().rescheduleAfter(OpenFgaCallLimit.BUSY_AGAIN);
    return needsNoCall(o)
        ? status(tuples, run(o))
        : limit.inSlot(() -> status(tuples, run(o)), busy);
  }

  private UpdateControl<FGATuples> status(FGATuples tuples, TuplesPlan.Done done) {
    if (done.status().isEmpty()) {
      return UpdateControl.<FGATuples>noUpdate().rescheduleAfter(done.again());
    }
    return StatusWrites.update(
        client, tuples, tuples.getStatus(), done.status().get(), done.again());
  }

  @Override
  public DeleteControl cleanup(FGATuples tuples, Context<FGATuples> context) {
    TuplesObservation o = observe(tuples, context, true);
    Supplier<DeleteControl> busy =
        () -> DeleteControl.noFinalizerRemoval().rescheduleAfter(OpenFgaCallLimit.BUSY_AGAIN);
    Supplier<DeleteControl> clean =
        () -> {
          TuplesPlan.Done done = run(o);
          return done.removeFinalizer()
              ? DeleteControl.defaultDelete()
              : DeleteControl.noFinalizerRemoval().rescheduleAfter(done.again());
        };
    return needsNoCall(o) ? clean.get() : limit.inSlot(clean, busy);
  }

  /** Whether the plan ends without a call (nothing to ask OpenFGA, no slot needed). */
  private boolean needsNoCall(TuplesObservation o) {
    return planner.plan(o) instanceof TuplesPlan.Done;
  }

  /** Plans and makes the calls until the plan is done; its Events and log line sent. */
  private TuplesPlan.Done run(TuplesObservation o) {
    TuplesCalls calls = new TuplesCalls(connector, record);
    TuplesPlan plan;
    try {
      for (plan = planner.plan(o); plan instanceof TuplesPlan.Call call; plan = planner.plan(o)) {
        for (TuplesStep step : call.steps()) {
          if (o.answers().size() >= MAX_CALLS) {
            throw new IllegalStateException(
                "an FGATuples plan asked for more than " + MAX_CALLS + " calls");
          }
          TuplesAnswer answer = calls.run(step, o);
          o = o.with(answer);
          if (!(answer instanceof TuplesAnswer.Created || answer instanceof TuplesAnswer.Deleted)) {
            break;
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new TuplesPlan.Done(
          Optional.empty(), List.of(), Optional.empty(), OpenFgaCallLimit.BUSY_AGAIN, false);
    }
    TuplesPlan.Done done = (TuplesPlan.Done) plan;
    FGATuples t = o.tuples();
    done.note()
        .ifPresent(
            n -> {
              var line = n.reason().isPresent() ? LOG.atWarn() : LOG.atDebug();
              line.addKeyValue("fgatuples", ref(t));
              n.reason().ifPresent(r -> line.addKeyValue("reason", r.name()));
              line.log(n.message());
            });
    for (TuplesPlan.Emit e : done.events()) {
      events.emit(
          t, e.reason().name(), e.reason().warning(), e.message(), e.key(), clock.instant());
    }
    return done;
  }

  /** What the decision looks at. */
  private TuplesObservation observe(FGATuples t, Context<FGATuples> context, boolean deleting) {
    Instant now = clock.instant();
    String ns = t.getMetadata().getNamespace();
    Desired desired = deleting ? new Desired.Valid(new TreeMap<>(), "") : declared(ns, t.getSpec());
    String storeName =
        t.getSpec().getStoreRef() == null ? null : t.getSpec().getStoreRef().getName();
    Optional<FGAStore> store =
        storeName == null
            ? Optional.empty()
            : Optional.ofNullable(
                client.resources(FGAStore.class).inNamespace(ns).withName(storeName).get());
    Optional<FGAModel> model =
        t.getSpec().getModelRef() == null || t.getSpec().getModelRef().getName() == null
            ? Optional.empty()
            : Optional.ofNullable(
                client
                    .resources(FGAModel.class)
                    .inNamespace(ns)
                    .withName(t.getSpec().getModelRef().getName())
                    .get());
    Record own = record.read(t);
    return new TuplesObservation(
        t,
        now,
        desired,
        store,
        store.map(this::confirmed).orElse(false),
        model,
        own,
        declaredElsewhere(t, desired, store, own, context),
        perWrite,
        deleting,
        List.of());
  }

  /**
   * The tuples the other FGATuples of the same store declare (not those being deleted), each with
   * the name of the first of them (by name) that declares it, read only when this one owns tuples
   * it no longer declares (the only ones they protect). Same store: the store id of their FGAStore,
   * which two FGAStores of the namespace may share. When one of them cannot be read, every tuple
   * this one owns counts as declared elsewhere, by nobody known ({@code ""}): nothing is deleted
   * until it reads.
   */
  private Map<TupleKey, String> declaredElsewhere(
      FGATuples t, Desired desired, Optional<FGAStore> store, Record own, Context<FGATuples> c) {
    Map<TupleKey, String> keys = new HashMap<>();
    String storeId = store.map(FGAStore::getStatus).map(FGAStore.Status::getStoreId).orElse(null);
    if (!(own instanceof Record.Own o)
        || storeId == null
        || !(desired instanceof Desired.Valid valid)
        || valid.tuples().keySet().containsAll(o.owned())) {
      return keys;
    }
    String ns = t.getMetadata().getNamespace();
    // the FGAStore of this one is read already: siblings naming it need no GET
    Map<String, Optional<String>> storeIds = new HashMap<>();
    storeIds.put(t.getSpec().getStoreRef().getName(), Optional.of(storeId));
    boolean unread = false;
    List<FGATuples> siblings =
        c.getPrimaryCache()
            .list()
            .filter(s -> isSibling(t, s))
            .sorted(java.util.Comparator.comparing(s -> s.getMetadata().getName()))
            .toList();
    for (FGATuples s : siblings) {
      String name = s.getSpec().getStoreRef().getName();
      Optional<String> id =
          storeIds.computeIfAbsent(
              name,
              n ->
                  Optional.ofNullable(
                          client.resources(FGAStore.class).inNamespace(ns).withName(n).get())
                      .map(FGAStore::getStatus)
                      .map(FGAStore.Status::getStoreId));
      if (id.isEmpty() || !id.get().equals(storeId)) {
        continue;
      }
      if (declared(ns, s.getSpec()) instanceof Desired.Valid sibling) {
        sibling.tuples().keySet().forEach(k -> keys.putIfAbsent(k, s.getMetadata().getName()));
      } else {
        unread = true;
      }
    }
    if (unread) {
      o.owned().forEach(k -> keys.putIfAbsent(k, ""));
    }
    return keys;
  }

  private static boolean isSibling(FGATuples t, FGATuples s) {
    return s.getMetadata().getNamespace().equals(t.getMetadata().getNamespace())
        && !s.getMetadata().getUid().equals(t.getMetadata().getUid())
        && s.getMetadata().getDeletionTimestamp() == null
        && s.getSpec() != null
        && s.getSpec().getStoreRef() != null
        && s.getSpec().getStoreRef().getName() != null;
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

  /** The tuples the spec declares; or why they cannot be read. */
  private Desired declared(String ns, FGATuples.Spec spec) {
    boolean inline = spec.getTuples() != null;
    boolean from = spec.getTuplesFrom() != null;
    if (inline == from) {
      return new Desired.Invalid(
          TuplesReason.InvalidSource, "exactly one of spec.tuples, spec.tuplesFrom must be set");
    }
    if (inline) {
      return DeclaredTuples.fromSpec(spec.getTuples());
    }
    FGAModel.KeyRef ref = spec.getTuplesFrom().getConfigMapKeyRef();
    if (ref == null || ref.getName() == null || ref.getKey() == null) {
      return new Desired.Invalid(
          TuplesReason.InvalidSource, "spec.tuplesFrom.configMapKeyRef needs name and key");
    }
    ConfigMap source = client.configMaps().inNamespace(ns).withName(ref.getName()).get();
    String text =
        source == null || source.getData() == null ? null : source.getData().get(ref.getKey());
    if (text == null) {
      return new Desired.Invalid(
          TuplesReason.SourceNotFound,
          "ConfigMap "
              + ns
              + "/"
              + ref.getName()
              + (source == null ? " does not exist" : " has no key " + ref.getKey()));
    }
    return DeclaredTuples.fromText(
        text,
        ref.getKey().endsWith(".json"),
        "ConfigMap " + ns + "/" + ref.getName() + " key " + ref.getKey());
  }

  static String ref(FGATuples t) {
    return t.getMetadata().getNamespace() + "/" + t.getMetadata().getName();
  }
}
