package dev.openfga.operator.stores;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.kube.StatusWrites;
import dev.openfga.operator.openfga.CallFailure;
import dev.openfga.operator.openfga.Connector;
import dev.openfga.operator.openfga.Credentials;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.Store;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the calls of one FGAStore reconcile ({@link StoreStep}) and holds what they share until it
 * ends: the API client once connected, the store name's lock once taken (released by {@link
 * #close}, before the status is written). A call that fails is answered, not thrown.
 */
public final class StoreCalls implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(StoreCalls.class);

  private final KubernetesClient client;
  private final Connector connector;
  private final Claims claims;
  private final ReentrantLock[] locks;
  private final Map<String, Credentials> deletingWith;
  private FgaApi api;
  private ReentrantLock held;

  /**
   * @param locks one of them is held while a store name is looked up and created (picked by the
   *     name's hash: two names may share one; the URL is left out, as one server can be written
   *     several ways)
   * @param deletingWith the credentials a deletion started with, by FGAStore uid, while it is tried
   *     again: its Secret, deleted together with it, is no longer in the cache after the first try
   */
  StoreCalls(
      KubernetesClient client,
      Connector connector,
      Claims claims,
      ReentrantLock[] locks,
      Map<String, Credentials> deletingWith) {
    this.client = client;
    this.connector = connector;
    this.claims = claims;
    this.locks = locks;
    this.deletingWith = deletingWith;
  }

  /** Makes the call {@code step} for the FGAStore of {@code o}; its answer. */
  StoreAnswer run(StoreStep step, StoreObservation o) throws InterruptedException {
    FGAStore store = o.store();
    try {
      if (step instanceof StoreStep.ReadMigration read) {
        return readMigration(store.getMetadata().getNamespace(), read.deployment());
      } else if (step instanceof StoreStep.Connect) {
        api = connect(store);
        return new StoreAnswer.Connected();
      } else if (step instanceof StoreStep.LookUp lookUp) {
        return new StoreAnswer.Found(api.getStore(lookUp.storeId()));
      } else if (step instanceof StoreStep.LookUpByName byName) {
        return lookUp(byName.name());
      } else if (step instanceof StoreStep.Claim claim) {
        // within the name's lock, when taken: a claim of another namespace a moment ago is seen
        return new StoreAnswer.Claimed(claims.claim(store, claim.storeId(), o.cached()));
      } else if (step instanceof StoreStep.RecordIntent intent) {
        Optional<FGAStore> recorded = StatusWrites.writeNow(client, store, intent.status());
        return recorded.isPresent()
            ? new StoreAnswer.IntentRecorded(recorded.get())
            : new StoreAnswer.IntentConflict();
      } else if (step instanceof StoreStep.Create create) {
        return create(store, create.name());
      } else if (step instanceof StoreStep.Delete delete) {
        return delete(store, delete.storeId());
      }
      throw new IllegalArgumentException("no such step: " + step);
    } catch (IOException e) {
      return new StoreAnswer.Failed(CallFailure.of(e));
    }
  }

  /** Lets go of the name's lock, if held. */
  @Override
  public void close() {
    if (held != null) {
      held.unlock();
      held = null;
    }
  }

  private StoreAnswer readMigration(String namespace, String name) {
    // a list by name: the operator's Role lists and watches Deployments, it does not get them
    List<Deployment> found =
        client
            .apps()
            .deployments()
            .inNamespace(namespace)
            .withField("metadata.name", name)
            .list(new ListOptionsBuilder().withLimit(1L).build())
            .getItems();
    if (found.isEmpty()) {
      return new StoreAnswer.Migration(Optional.empty(), Optional.empty());
    }
    ConfigMap record =
        client.configMaps().inNamespace(namespace).withName(Names.statusConfigMap(name)).get();
    return new StoreAnswer.Migration(Optional.of(found.get(0)), Optional.ofNullable(record));
  }

  /**
   * The stores of the name, within its lock; a busy name is answered at once, without holding the
   * thread (and its slot) while another reconcile waits on a slow server.
   */
  private StoreAnswer lookUp(String name) throws IOException, InterruptedException {
    ReentrantLock lock = locks[Math.floorMod(name.hashCode(), locks.length)];
    if (!lock.tryLock()) {
      return new StoreAnswer.NameBusy();
    }
    held = lock;
    return new StoreAnswer.Named(api.storesNamed(name));
  }

  private StoreAnswer create(FGAStore store, String name) throws IOException, InterruptedException {
    Store created = api.createStore(name);
    LOG.atInfo()
        .addKeyValue("fgastore", StorePlanner.ref(store))
        .addKeyValue("storeId", created.id())
        .log("created OpenFGA store \"{}\" at {}", name, store.getSpec().getOpenfgaRef().getUrl());
    return new StoreAnswer.Created(created);
  }

  private StoreAnswer delete(FGAStore store, String id) throws IOException, InterruptedException {
    String uid = store.getMetadata().getUid();
    FgaApi deleting;
    try {
      deleting = connect(store);
    } catch (Credentials.CredentialsException e) {
      // the Secret gone, or no longer readable (its namespace being deleted takes the operator's
      // RoleBinding there with it): the credentials last read delete the store. Looked up after
      // the failed read: a Secret whose data became unusable dropped them there.
      FGAStore.NameRef secret = store.getSpec().getOpenfgaRef().getCredentialsRef();
      Optional<Credentials> kept =
          secret == null || secret.getName() == null
              ? Optional.empty()
              : Optional.ofNullable(deletingWith.get(uid))
                  .or(() -> connector.kept(store.getMetadata().getNamespace(), secret.getName()));
      if (kept.isEmpty()) {
        throw e;
      }
      deleting = connector.connect(kept.get(), store.getSpec().getOpenfgaRef().getUrl());
      deletingWith.put(uid, kept.get());
    }
    deleting.deleteStore(id);
    LOG.atInfo()
        .addKeyValue("fgastore", StorePlanner.ref(store))
        .addKeyValue("storeId", id)
        .log("deleted OpenFGA store (deletionPolicy Delete)");
    deletingWith.remove(uid);
    return new StoreAnswer.Deleted();
  }

  /** The API client for this store's server, with its credentials (read from the Secret now). */
  private FgaApi connect(FGAStore store) throws Credentials.CredentialsException {
    return connect(connector, store);
  }

  /**
   * The API client for the FGAStore's server, with the credentials of its Secret (read now): what
   * every controller that calls the store's OpenFGA connects with.
   */
  public static FgaApi connect(Connector connector, FGAStore store)
      throws Credentials.CredentialsException {
    FGAStore.OpenFgaRef ref = store.getSpec().getOpenfgaRef();
    return connector.connect(
        store.getMetadata().getNamespace(),
        ref.getUrl(),
        ref.getCredentialsRef() == null ? null : ref.getCredentialsRef().getName());
  }
}
