package dev.openfga.operator.stores;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.openfga.Servers;
import java.time.Instant;
import java.util.Collection;
import java.util.Comparator;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The claim rule, pure: a store belongs to one namespace. Read from the informer cache of the
 * FGAStores and from what this process confirmed a moment ago ({@link Claims}).
 */
final class ClaimRule {
  private ClaimRule() {}

  /**
   * The claim rule, a store belongs to one namespace: whether an FGAStore of another namespace
   * comes first for the store {@code storeId} on {@code store}'s server (null: the store its {@code
   * spec.name} would create), so that {@code store} must not use it ({@code
   * StoreClaimedElsewhere}). Claimants are the FGAStores of other namespaces on the same server,
   * not being deleted, that hold the store ({@code status.storeId}, or confirmed a moment ago by
   * this process: {@code confirmed}), pin it ({@code spec.storeId}) or may adopt it by name (no id
   * yet, the same {@code spec.name}). One that holds it comes before one that does not (a store in
   * use is never taken away); among equals the older {@code creationTimestamp}, then namespace and
   * name: two FGAStores created at once agree on the winner. FGAStores of the same namespace share
   * a store as before.
   */
  static Optional<StoreChoice.Blocked> claimedElsewhere(
      FGAStore store,
      String storeId,
      Collection<FGAStore> cached,
      Collection<Claims.Entry> confirmed) {
    String server = server(store);
    String namespace = store.getMetadata().getNamespace();
    String uid = store.getMetadata().getUid();
    String name = store.getSpec().getName();
    Rank mine = rank(store, storeId, confirmed);
    Stream<Rank> cachedClaimants =
        cached.stream()
            .filter(o -> !Objects.equals(o.getMetadata().getUid(), uid))
            .filter(o -> !Objects.equals(o.getMetadata().getNamespace(), namespace))
            .filter(o -> o.getMetadata().getDeletionTimestamp() == null)
            .filter(o -> o.getSpec() != null && server(o).equals(server))
            .filter(o -> claims(o, storeId, name))
            .map(o -> rank(o, storeId, confirmed));
    Stream<Rank> confirmedClaimants =
        confirmed.stream()
            .filter(c -> storeId != null && storeId.equals(c.storeId()))
            .filter(c -> !c.uid().equals(uid) && !c.namespace().equals(namespace))
            .filter(c -> c.server().equals(server))
            .map(c -> new Rank(true, c.creationTimestamp(), c.namespace(), c.name()));
    Optional<Rank> first =
        Stream.concat(cachedClaimants, confirmedClaimants)
            .filter(other -> other.compareTo(mine) < 0)
            .findFirst();
    if (first.isEmpty()) {
      return Optional.empty();
    }
    String url = store.getSpec().getOpenfgaRef().getUrl();
    return Optional.of(
        new StoreChoice.Blocked(
            StoreReason.StoreClaimedElsewhere,
            (storeId == null
                    ? "the store name \"" + name + "\" at " + url
                    : "store " + storeId + " (\"" + name + "\") at " + url)
                + " is claimed by "
                + (first.get().holds() ? "an FGAStore" : "an older FGAStore")
                + " in another namespace: a store belongs to one namespace, and nothing of it is"
                + " used from here; choose another spec.name"));
  }

  /**
   * Where {@code o} ranks as a claimant of {@code storeId}: it holds the store when its status or a
   * claim this process confirmed a moment ago says so.
   */
  private static Rank rank(FGAStore o, String storeId, Collection<Claims.Entry> confirmed) {
    String uid = o.getMetadata().getUid();
    boolean holds =
        storeId != null
            && (storeId.equals(statusId(o))
                || confirmed.stream()
                    .anyMatch(c -> c.uid().equals(uid) && storeId.equals(c.storeId())));
    return new Rank(
        holds,
        o.getMetadata().getCreationTimestamp(),
        o.getMetadata().getNamespace(),
        o.getMetadata().getName());
  }

  /**
   * Whether {@code o} holds, pins or may adopt by name the store {@code storeId} named {@code name}
   * (null: the store that name would create, which only an FGAStore without an id may adopt).
   */
  private static boolean claims(FGAStore o, String storeId, String name) {
    boolean noId = blank(statusId(o)) && blank(o.getSpec().getStoreId());
    boolean byName = noId && name != null && name.equals(o.getSpec().getName());
    if (storeId == null) {
      return byName;
    }
    return storeId.equals(statusId(o)) || storeId.equals(o.getSpec().getStoreId()) || byName;
  }

  private static String statusId(FGAStore o) {
    return o.getStatus() == null ? null : o.getStatus().getStoreId();
  }

  /**
   * The order of claimants: one that holds the store first, then the older, then by namespace and
   * name (a creationTimestamp missing, as on an object not yet created, comes last).
   */
  private record Rank(boolean holds, String created, String namespace, String name)
      implements Comparable<Rank> {
    @Override
    public int compareTo(Rank o) {
      return Comparator.comparing(Rank::holds, Comparator.reverseOrder())
          .thenComparing(r -> Timestamps.parse(r.created()).orElse(Instant.MAX))
          .thenComparing(Rank::namespace, Comparator.nullsLast(String::compareTo))
          .thenComparing(Rank::name, Comparator.nullsLast(String::compareTo))
          .compare(this, o);
    }
  }

  /** The server an FGAStore names, as compared ({@link Servers#canonical}). */
  static String server(FGAStore store) {
    FGAStore.OpenFgaRef ref = store.getSpec().getOpenfgaRef();
    return Servers.canonical(ref == null || ref.getUrl() == null ? "" : ref.getUrl());
  }

  static boolean blank(String value) {
    return value == null || value.isBlank();
  }
}
