package dev.openfga.operator.stores;

import dev.openfga.operator.kube.EventRecorder;
import dev.openfga.operator.kube.StatusWrites;
import dev.openfga.operator.openfga.Connector;
import dev.openfga.operator.openfga.Credentials;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.openfga.Servers;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles an {@link FGAStore}: observe (the FGAStore, the cache of FGAStores, the claims, the
 * time) → decide ({@link StorePlanner}, pure) → make the call it asks for ({@link StoreCalls}) and
 * decide again with the answer, until it is done → the claim, the Events, the status written once.
 * Deletion ({@link Cleaner}, decided by {@link StoreDeletion}) deletes only a store the operator
 * created, and only with {@code deletionPolicy: Delete}.
 */
public final class StoreReconciler implements Reconciler<FGAStore>, Cleaner<FGAStore> {
  private static final Logger LOG = LoggerFactory.getLogger(StoreReconciler.class);

  /** The calls one reconcile may make: a plan that asks for more is a bug, not a wait. */
  private static final int MAX_CALLS = 16;

  private final KubernetesClient client;
  private final Connector connector;
  private final EventRecorder events;
  private final Clock clock;
  private final OpenFgaCallLimit limit;
  private final Servers servers;
  private final Claims claims;
  private final StorePlanner planner;

  /** The credentials a deletion started with, by FGAStore uid, while it is tried again. */
  private final Map<String, Credentials> deletingWith = new ConcurrentHashMap<>();

  /** Held while a store is looked up by name and created, one of them per store name. */
  private final ReentrantLock[] byName = new ReentrantLock[64];

  {
    for (int i = 0; i < byName.length; i++) {
      byName[i] = new ReentrantLock();
    }
  }

  public StoreReconciler(
      KubernetesClient client,
      Connector connector,
      OpenFgaCallLimit limit,
      Servers servers,
      Claims claims,
      EventRecorder events,
      Clock clock) {
    this.client = client;
    this.connector = connector;
    this.limit = limit;
    this.servers = servers;
    this.claims = claims;
    this.events = events;
    this.clock = clock;
    this.planner = new StorePlanner(servers);
  }

  @Override
  public UpdateControl<FGAStore> reconcile(FGAStore store, Context<FGAStore> context) {
    return limit.inSlot(
        () -> reconcileNow(store, context.getPrimaryCache().list().toList()),
        () -> UpdateControl.<FGAStore>noUpdate().rescheduleAfter(OpenFgaCallLimit.BUSY_AGAIN));
  }

  /** {@code cached}: every FGAStore of the watched namespaces, as the informer has them. */
  private UpdateControl<FGAStore> reconcileNow(FGAStore store, List<FGAStore> cached) {
    StoreObservation o = new StoreObservation(store, cached, claims.entries(), clock.instant());
    StorePlan plan;
    try (StoreCalls calls = calls()) {
      for (plan = planner.plan(o); plan instanceof StorePlan.Call call; plan = planner.plan(o)) {
        o = called(o, calls, call);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return UpdateControl.noUpdate();
    }
    StorePlan.Done done = (StorePlan.Done) plan;
    FGAStore observed = o.store();
    if (done.release()) {
      claims.release(observed.getMetadata().getUid());
    }
    tell(observed, done.note(), done.events());
    Duration again = done.again().orElse(null);
    if (done.status().isEmpty()) {
      UpdateControl<FGAStore> control = UpdateControl.noUpdate();
      return again == null ? control : control.rescheduleAfter(again);
    }
    return StatusWrites.update(client, observed, observed.getStatus(), done.status().get(), again);
  }

  @Override
  public DeleteControl cleanup(FGAStore store, Context<FGAStore> context) {
    return limit.inSlot(
        () -> cleanupNow(store, context.getPrimaryCache().list().toList()),
        () -> DeleteControl.noFinalizerRemoval().rescheduleAfter(OpenFgaCallLimit.BUSY_AGAIN));
  }

  private DeleteControl cleanupNow(FGAStore store, List<FGAStore> cached) {
    claims.release(store.getMetadata().getUid());
    StoreObservation o = new StoreObservation(store, cached, List.of(), clock.instant());
    StorePlan plan;
    try (StoreCalls calls = calls()) {
      Function<StoreObservation, StorePlan> decide = planner::deletion;
      for (plan = decide.apply(o); plan instanceof StorePlan.Call call; plan = decide.apply(o)) {
        o = called(o, calls, call);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return DeleteControl.noFinalizerRemoval();
    }
    StorePlan.Deletion end = (StorePlan.Deletion) plan;
    tell(store, end.note(), end.events());
    if (end.removeFinalizer()) {
      deletingWith.remove(store.getMetadata().getUid());
      return DeleteControl.defaultDelete();
    }
    DeleteControl control = DeleteControl.noFinalizerRemoval();
    return end.again().map(control::rescheduleAfter).orElse(control);
  }

  private StoreCalls calls() {
    return new StoreCalls(client, connector, claims, byName, deletingWith);
  }

  /** {@code o} with the answer of the call. */
  private static StoreObservation called(StoreObservation o, StoreCalls calls, StorePlan.Call call)
      throws InterruptedException {
    if (o.answers().size() >= MAX_CALLS) {
      throw new IllegalStateException(
          "an FGAStore plan asked for more than " + MAX_CALLS + " calls");
    }
    return o.with(calls.run(call.step(), o));
  }

  /** The log line and the Events of the end of a plan. */
  private void tell(
      FGAStore store, java.util.Optional<StorePlan.Note> note, List<StorePlan.Emit> emits) {
    note.ifPresent(
        n -> {
          var line =
              (n.warn() ? LOG.atWarn() : LOG.atInfo())
                  .addKeyValue("fgastore", StorePlanner.ref(store));
          n.reason().ifPresent(r -> line.addKeyValue("reason", r.name()));
          line.log(n.message());
        });
    for (StorePlan.Emit e : emits) {
      events.emit(
          store, e.reason().name(), e.reason().warning(), e.message(), e.key(), clock.instant());
    }
  }
}
