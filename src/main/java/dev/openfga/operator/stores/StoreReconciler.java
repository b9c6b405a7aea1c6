package dev.openfga.operator.stores;

import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.kube.EventRecorder;
import dev.openfga.operator.kube.StatusWrites;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.openfga.Connector;
import dev.openfga.operator.openfga.Credentials;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.openfga.Store;
import dev.openfga.operator.stores.StorePlanner.Plan;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles an {@link FGAStore} with the OpenFGA API: the migration gate, the credentials, then
 * the {@link StorePlanner}'s decision, carried out and written to the status (condition {@code
 * Ready}) with an Event for every transition. Deletion ({@link Cleaner}) deletes only a store the
 * operator created, and only with {@code deletionPolicy: Delete}.
 */
public final class StoreReconciler implements Reconciler<FGAStore>, Cleaner<FGAStore> {
  private static final Logger LOG = LoggerFactory.getLogger(StoreReconciler.class);

  /** How often a ready store is checked again (out-of-band deletion → StoreMissing). */
  static final Duration RECHECK = Duration.ofMinutes(5);

  /** How soon a store that waits (migration, credentials, the API) is looked at again. */
  static final Duration WAIT = Duration.ofSeconds(10);

  private final KubernetesClient client;
  private final Connector connector;
  private final EventRecorder events;
  private final Clock clock;
  private final MigrationGate gate;
  private final OpenFgaCallLimit slots;
  private final Servers servers;
  private final Claims claims;

  /**
   * The credentials a deletion started with, by FGAStore uid, while it is tried again: its Secret,
   * deleted together with it, is no longer in the cache after the first try.
   */
  private final Map<String, Credentials> deletingWith = new ConcurrentHashMap<>();

  /**
   * Held while a store is looked up by name and created, one of them per store name (a fixed set,
   * picked by the name's hash: two names may share one; the URL is left out, as one server can be
   * written several ways).
   */
  private final ReentrantLock[] byName = new ReentrantLock[64];

  {
    for (int i = 0; i < byName.length; i++) {
      byName[i] = new ReentrantLock();
    }
  }

  public StoreReconciler(
      KubernetesClient client,
      Connector connector,
      OpenFgaCallLimit slots,
      Servers servers,
      Claims claims,
      EventRecorder events,
      Clock clock) {
    this.slots = slots;
    this.servers = servers;
    this.claims = claims;
    this.client = client;
    this.connector = connector;
    this.events = events;
    this.clock = clock;
    this.gate = new MigrationGate(client);
  }

  @Override
  public UpdateControl<FGAStore> reconcile(FGAStore store, Context<FGAStore> context) {
    return slots.inSlot(
        () -> reconcileNow(store, context.getPrimaryCache().list().toList()),
        () -> UpdateControl.<FGAStore>noUpdate().rescheduleAfter(OpenFgaCallLimit.BUSY_AGAIN));
  }

  /** {@code cached}: every FGAStore of the watched namespaces, as the informer has them. */
  private UpdateControl<FGAStore> reconcileNow(FGAStore store, List<FGAStore> cached) {
    FGAStore.Spec spec = store.getSpec();
    FGAStore.Status old = store.getStatus();
    FGAStore.Status next = Conditions.copy(old, FGAStore.Status::new);
    next.setObservedGeneration(store.getMetadata().getGeneration());

    Optional<String> invalid = StorePlanner.invalid(spec);
    if (invalid.isPresent()) {
      return blocked(store, next, StoreReason.InvalidSpec, invalid.get(), null);
    }
    // before anything else is read: a server the installer did not list gets no request at all
    Optional<Plan.Blocked> notAllowed = StorePlanner.serverNotAllowed(spec, servers);
    if (notAllowed.isPresent()) {
      return blocked(store, next, notAllowed.get(), null);
    }
    Optional<String> waiting =
        gate.waiting(store.getMetadata().getNamespace(), spec.getOpenfgaRef());
    if (waiting.isPresent()) {
      return blocked(store, next, StoreReason.WaitingForMigration, waiting.get(), WAIT);
    }
    String url = spec.getOpenfgaRef().getUrl();
    Plan plan;
    try {
      FgaApi api = api(store);
      Optional<String> known = StorePlanner.knownId(spec, old);
      if (known.isPresent()) {
        // another namespace's store is not even looked at
        Optional<Plan.Blocked> claimed = claims.check(store, known.get(), cached);
        if (claimed.isPresent()) {
          return blocked(store, next, claimed.get(), RECHECK);
        }
        plan = StorePlanner.forKnownId(spec, old, known.get(), api.getStore(known.get()), url);
        if (plan instanceof Plan.Use use) {
          plan = claimed(store, use, cached);
        }
      } else {
        // two FGAStores naming one store, reconciled at once, would both find no store and both
        // create one: the look-up and the create of a name run one at a time, so the second finds
        // the first's store and adopts it; a busy name is looked at again soon, without holding
        // the thread (and its slot) while another reconcile waits on a slow server
        ReentrantLock lock = byName[Math.floorMod(spec.getName().hashCode(), byName.length)];
        if (!lock.tryLock()) {
          return UpdateControl.<FGAStore>noUpdate().rescheduleAfter(OpenFgaCallLimit.BUSY_AGAIN);
        }
        try {
          plan =
              StorePlanner.forName(
                  spec, api.storesNamed(spec.getName()), old == null ? null : old.getCreating());
          if (plan instanceof Plan.Use use) {
            // within the name's lock: a claim of another namespace made a moment ago is seen
            plan = claimed(store, use, cached);
          } else if (plan instanceof Plan.Create create) {
            // an older FGAStore of another namespace naming it creates (or adopts) it instead
            Optional<Plan.Blocked> claimed = claims.check(store, null, cached);
            if (claimed.isPresent()) {
              return blocked(store, next, claimed.get(), RECHECK);
            }
            // the intent first, so that a store created but not recorded (a crash, a lost
            // status write) is still known as the operator's at the next look-up by name
            FGAStore.Status intent = Conditions.copy(old, FGAStore.Status::new);
            intent.setCreating(
                new FGAStore.Creating(create.name(), Timestamps.format(clock.instant())));
            Optional<FGAStore> recorded = StatusWrites.writeNow(client, store, intent);
            if (recorded.isEmpty()) {
              return UpdateControl.<FGAStore>noUpdate()
                  .rescheduleAfter(StatusWrites.CONFLICT_AGAIN);
            }
            // what follows is written on the object as recorded, the intent kept until an id is
            store = recorded.get();
            old = store.getStatus();
            next.setCreating(intent.getCreating());
            Store created = api.createStore(create.name());
            claims.claim(store, created.id(), cached);
            LOG.atInfo()
                .addKeyValue("fgastore", ref(store))
                .addKeyValue("storeId", created.id())
                .log("created OpenFGA store \"{}\" at {}", create.name(), url);
            plan = new Plan.Use(created, true, Optional.of(StoreReason.StoreCreated));
          }
        } finally {
          lock.unlock();
        }
      }
    } catch (Credentials.CredentialsException e) {
      return blocked(store, next, StoreReason.CredentialsError, e.getMessage(), WAIT);
    } catch (IOException e) {
      return blocked(store, next, StoreReason.OpenFGARequestFailed, e.getMessage(), WAIT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return UpdateControl.noUpdate();
    }
    if (plan instanceof Plan.Blocked b) {
      return blocked(store, next, b, RECHECK);
    }
    Plan.Use use = (Plan.Use) plan;
    next.setStoreId(use.store().id());
    next.setCreatedByOperator(use.createdByOperator());
    next.setCreating(null);
    FGAStore target = store;
    String message = "store \"" + use.store().name() + "\" (" + use.store().id() + ") at " + url;
    use.event()
        .ifPresent(
            reason ->
                events.emit(
                    target,
                    reason.name(),
                    reason.warning(),
                    (reason == StoreReason.StoreCreated ? "created " : "adopted ") + message,
                    use.store().id(),
                    clock.instant()));
    Conditions.set(
        next, Conditions.READY, true, StoreReason.StoreReady.name(), message, clock.instant());
    return update(store, old, next, RECHECK);
  }

  /** {@code use}, unless another namespace's FGAStore comes first for its store. */
  private Plan claimed(FGAStore store, Plan.Use use, List<FGAStore> cached) {
    Optional<Plan.Blocked> claimed = claims.claim(store, use.store().id(), cached);
    return claimed.isPresent() ? claimed.get() : use;
  }

  @Override
  public DeleteControl cleanup(FGAStore store, Context<FGAStore> context) {
    return slots.inSlot(
        () -> cleanupNow(store, context),
        () -> DeleteControl.noFinalizerRemoval().rescheduleAfter(OpenFgaCallLimit.BUSY_AGAIN));
  }

  private DeleteControl cleanupNow(FGAStore store, Context<FGAStore> context) {
    claims.release(store.getMetadata().getUid());
    Optional<String> id = StorePlanner.toDelete(store.getSpec(), store.getStatus());
    if (id.isEmpty()) {
      LOG.atInfo()
          .addKeyValue("fgastore", ref(store))
          .log(
              "FGAStore deleted; the OpenFGA store is kept (deletionPolicy Retain, or not created by the operator)");
      return DeleteControl.defaultDelete();
    }
    if (store.getSpec().getOpenfgaRef() == null
        || !servers.allows(store.getSpec().getOpenfgaRef().getUrl())) {
      // not even the deletion goes to a server the installer did not list (the url changed, or
      // the list did since the store was made): the store is left there, and the FGAStore goes
      String message =
          "store "
              + id.get()
              + " is kept: "
              + (store.getSpec().getOpenfgaRef() == null
                  ? "no spec.openfgaRef.url"
                  : store.getSpec().getOpenfgaRef().getUrl())
              + " is not one of the OpenFGA servers this operator is installed for (chart value"
              + " storesAndModels.servers, flag --openfga-servers), and nothing is sent to it;"
              + " delete the store there if it is not wanted";
      LOG.atWarn().addKeyValue("fgastore", ref(store)).log(message);
      emit(store, StoreReason.StoreNotDeleted, message, "delete", clock.instant());
      return DeleteControl.defaultDelete();
    }
    Optional<FGAStore> sharing =
        StorePlanner.alsoStandingFor(store, id.get(), context.getPrimaryCache().list().toList());
    if (sharing.isPresent()) {
      String message =
          "store "
              + id.get()
              + " at "
              + store.getSpec().getOpenfgaRef().getUrl()
              + " is kept: "
              + (Objects.equals(
                      sharing.get().getMetadata().getNamespace(),
                      store.getMetadata().getNamespace())
                  ? "FGAStore " + ref(sharing.get())
                  : "an FGAStore in another namespace")
              + " stands for it too (or, without an id yet, names it); delete it in OpenFGA when"
              + " nothing needs it";
      LOG.atWarn().addKeyValue("fgastore", ref(store)).log(message);
      emit(store, StoreReason.StoreNotDeleted, message, "delete", clock.instant());
      return DeleteControl.defaultDelete();
    }
    FGAStore.OpenFgaRef ref = store.getSpec().getOpenfgaRef();
    String uid = store.getMetadata().getUid();
    try {
      FgaApi api;
      try {
        api = api(store);
      } catch (Credentials.CredentialsException e) {
        // the Secret gone, or no longer readable (its namespace being deleted takes the
        // operator's RoleBinding there with it): the credentials last read delete the store. Looked
        // up after the failed read: a Secret whose data became unusable dropped them there.
        Optional<Credentials> kept =
            ref.getCredentialsRef() == null || ref.getCredentialsRef().getName() == null
                ? Optional.empty()
                : Optional.ofNullable(deletingWith.get(uid))
                    .or(
                        () ->
                            connector.kept(
                                store.getMetadata().getNamespace(),
                                ref.getCredentialsRef().getName()));
        if (kept.isEmpty()) {
          throw e;
        }
        Credentials last = kept.get();
        api = connector.connect(last, ref.getUrl());
        deletingWith.put(uid, last);
      }
      api.deleteStore(id.get());
      LOG.atInfo()
          .addKeyValue("fgastore", ref(store))
          .addKeyValue("storeId", id.get())
          .log("deleted OpenFGA store (deletionPolicy Delete)");
      deletingWith.remove(uid);
      return DeleteControl.defaultDelete();
    } catch (IOException e) {
      DeleteControl control = notDeleted(store, id.get(), e);
      if (control.isRemoveFinalizer()) {
        deletingWith.remove(uid);
      }
      return control;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return DeleteControl.noFinalizerRemoval();
    }
  }

  /**
   * The store could not be deleted: tried again, or, once {@link StorePlanner#giveUpDeleting} says
   * so, left in OpenFGA with a Warning Event naming it, and the FGAStore let go (so that neither it
   * nor its namespace waits forever on the finalizer).
   */
  private DeleteControl notDeleted(FGAStore store, String id, IOException e) {
    boolean credentials = e instanceof Credentials.CredentialsException;
    boolean secretGone = credentials && ((Credentials.CredentialsException) e).secretGone();
    String where = "store " + id + " at " + store.getSpec().getOpenfgaRef().getUrl();
    Instant now = clock.instant();
    if (StorePlanner.giveUpDeleting(
        Timestamps.parse(store.getMetadata().getDeletionTimestamp()), secretGone, now)) {
      String message =
          "gave up deleting "
              + where
              + " ("
              + e.getMessage()
              + "): it is left in OpenFGA; delete it there if it is not wanted";
      LOG.atWarn().addKeyValue("fgastore", ref(store)).log(message);
      emit(store, StoreReason.StoreNotDeleted, message, "delete", now);
      return DeleteControl.defaultDelete();
    }
    LOG.atWarn()
        .addKeyValue("fgastore", ref(store))
        .log("could not delete {}: {}; trying again", where, e.getMessage());
    emit(
        store,
        credentials ? StoreReason.CredentialsError : StoreReason.OpenFGARequestFailed,
        "could not delete "
            + where
            + ": "
            + e.getMessage()
            + "; trying again for "
            + StorePlanner.GIVE_UP_DELETING.toMinutes()
            + " minutes after the deletion, then it is left in OpenFGA",
        "delete",
        now);
    return DeleteControl.noFinalizerRemoval().rescheduleAfter(WAIT);
  }

  /** The API client for this store's server, with its credentials (read from the Secret now). */
  private FgaApi api(FGAStore store) throws Credentials.CredentialsException {
    FGAStore.OpenFgaRef ref = store.getSpec().getOpenfgaRef();
    return connector.connect(
        store.getMetadata().getNamespace(),
        ref.getUrl(),
        ref.getCredentialsRef() == null ? null : ref.getCredentialsRef().getName());
  }

  private UpdateControl<FGAStore> blocked(
      FGAStore store, FGAStore.Status next, Plan.Blocked blocked, Duration again) {
    return blocked(store, next, blocked.reason(), blocked.message(), again);
  }

  /** {@code Ready=False}: the FGAStore stands for no store now (its FGAModels wait). */
  private UpdateControl<FGAStore> blocked(
      FGAStore store, FGAStore.Status next, StoreReason reason, String message, Duration again) {
    claims.release(store.getMetadata().getUid());
    Instant now = clock.instant();
    Optional<String> news = Conditions.block(next, reason.name(), message, now);
    if (news.isPresent()) {
      LOG.atWarn()
          .addKeyValue("fgastore", ref(store))
          .addKeyValue("reason", reason.name())
          .log(message);
      if (reason.warning()) {
        emit(store, reason, message, news.get(), now);
      }
    }
    return update(store, store.getStatus(), next, again);
  }

  private void emit(FGAStore store, StoreReason reason, String message, String key, Instant now) {
    events.emit(store, reason.name(), reason.warning(), message, key, now);
  }

  private UpdateControl<FGAStore> update(
      FGAStore store, FGAStore.Status old, FGAStore.Status next, Duration again) {
    return StatusWrites.update(client, store, old, next, again);
  }

  private static String ref(FGAStore store) {
    return store.getMetadata().getNamespace() + "/" + store.getMetadata().getName();
  }
}
