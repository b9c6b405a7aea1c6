package dev.openfga.operator.stores;

import dev.openfga.operator.openfga.Servers;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Which store each FGAStore was last confirmed to stand for by this process (by uid), so that the
 * claim rule ({@link ClaimRule#claimedElsewhere}) sees a store taken a moment ago, before the
 * taker's status reaches the informer cache; shared with the FGAModel controller, which uses only a
 * store confirmed here for its FGAStore. One per process: in memory, rebuilt from the FGAStores'
 * statuses (the cache) after a restart, as every FGAStore is reconciled at start.
 */
public final class Claims {
  /** A confirmed claim: the FGAStore and the store (its server as compared, and its id). */
  public record Entry(
      String uid,
      String namespace,
      String name,
      String creationTimestamp,
      String server,
      String storeId) {}

  private final Map<String, Entry> byUid = new HashMap<>();

  public Claims() {}

  /**
   * Whether another namespace's FGAStore comes first for the store {@code storeId} (null: the store
   * the spec's name would create), without recording anything.
   */
  synchronized Optional<StoreChoice.Blocked> check(
      FGAStore store, String storeId, Collection<FGAStore> cached) {
    return ClaimRule.claimedElsewhere(store, storeId, cached, byUid.values());
  }

  /**
   * {@link #check}, and when the store is this FGAStore's, records it as confirmed in the same
   * step: of two reconciles claiming one store at once, the second sees the first.
   */
  synchronized Optional<StoreChoice.Blocked> claim(
      FGAStore store, String storeId, Collection<FGAStore> cached) {
    Optional<StoreChoice.Blocked> blocked = check(store, storeId, cached);
    String uid = store.getMetadata().getUid();
    if (storeId == null) {
      return blocked;
    }
    if (blocked.isPresent()) {
      byUid.remove(uid);
    } else {
      byUid.put(
          uid,
          new Entry(
              uid,
              store.getMetadata().getNamespace(),
              store.getMetadata().getName(),
              store.getMetadata().getCreationTimestamp(),
              Servers.canonical(store.getSpec().getOpenfgaRef().getUrl()),
              storeId));
    }
    return blocked;
  }

  /** Every claim confirmed now, for the planner's observation. */
  synchronized List<Entry> entries() {
    return List.copyOf(byUid.values());
  }

  /** The FGAStore stands for no store now (blocked, or deleted). */
  synchronized void release(String uid) {
    byUid.remove(uid);
  }

  /** Whether this process confirmed the FGAStore {@code uid} for the store at {@code url}. */
  public synchronized boolean confirmed(String uid, String url, String storeId) {
    Entry entry = byUid.get(uid);
    return entry != null
        && Objects.equals(entry.storeId(), storeId)
        && entry.server().equals(Servers.canonical(url));
  }
}
