package dev.openfga.operator.stores;

import dev.openfga.operator.models.ModelAssertions;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.openfga.Store;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * What to do about an {@link FGAStore}, from what the OpenFGA API said: pure, so every rule is
 * tested directly ({@code StorePlannerTest}).
 *
 * <ul>
 *   <li>A known store (the spec's {@code storeId}, else the one in the status) is looked up by id;
 *       gone → {@code StoreMissing}, never re-created under a new id.
 *   <li>Otherwise by name: none → create (its intent recorded first, {@code status.creating});
 *       exactly one → adopt, as the operator's own when the recorded intent names it and it was
 *       created about then; several → {@code AmbiguousStoreName}, nothing created.
 *   <li>Only on a server the installer listed ({@link #serverNotAllowed}), and only a store no
 *       FGAStore of another namespace comes first for ({@link #claimedElsewhere}).
 * </ul>
 */
public final class StorePlanner {
  private StorePlanner() {}

  /** How long a deleted FGAStore's store is tried to be deleted before it is left in OpenFGA. */
  public static final Duration GIVE_UP_DELETING = Duration.ofMinutes(10);

  /** The decision. */
  public sealed interface Plan {
    /**
     * The store exists and is this resource's: record it. {@code event} is the reason of the Event
     * to emit ({@link StoreReason#StoreAdopted}) or empty when nothing changed.
     */
    record Use(Store store, boolean createdByOperator, Optional<StoreReason> event)
        implements Plan {}

    /** No store has the name: create it. */
    record Create(String name) implements Plan {}

    /**
     * Nothing can be done: {@code Ready=False} with this reason; a Warning Event too when the
     * reason is one.
     */
    record Blocked(StoreReason reason, String message) implements Plan {}
  }

  /** The id to look up, if one is known: the spec's, else the status's. */
  public static Optional<String> knownId(FGAStore.Spec spec, FGAStore.Status status) {
    return Optional.ofNullable(spec.getStoreId())
        .filter(s -> !s.isBlank())
        .or(
            () ->
                Optional.ofNullable(status)
                    .map(FGAStore.Status::getStoreId)
                    .filter(s -> !s.isBlank()));
  }

  /** A known id was looked up: {@code found} is what the API returned for it. */
  public static Plan forKnownId(
      FGAStore.Spec spec, FGAStore.Status status, String id, Optional<Store> found, String url) {
    if (found.isEmpty()) {
      return new Plan.Blocked(
          StoreReason.StoreMissing,
          "store "
              + id
              + " does not exist in OpenFGA at "
              + url
              + " (deleted out of band?); it is not re-created under a new id: delete and"
              + " re-create this FGAStore to create a new store");
    }
    Store store = found.get();
    if (!store.name().equals(spec.getName())) {
      return new Plan.Blocked(
          StoreReason.StoreNameMismatch,
          "store " + id + " is named \"" + store.name() + "\", not \"" + spec.getName() + "\"");
    }
    boolean fromStatus =
        status != null && id.equals(status.getStoreId()) && status.getStoreId() != null;
    boolean created = fromStatus && Boolean.TRUE.equals(status.getCreatedByOperator());
    boolean isNew = !fromStatus;
    return new Plan.Use(
        store, created, isNew ? Optional.of(StoreReason.StoreAdopted) : Optional.empty());
  }

  /**
   * How far a store's {@code created_at} (the server's clock) may be from the time of the intent to
   * create it ({@code status.creating.at}, the operator's clock) for the store to be the one the
   * operator created.
   */
  public static final Duration CLOCK_SKEW = Duration.ofMinutes(5);

  /**
   * No id is known: {@code named} are the stores that carry the spec's name; {@code intent} the
   * creation the operator recorded before it asked for one ({@code status.creating}, or null).
   * Exactly one store that the intent names and that was created within {@link #CLOCK_SKEW} of it
   * is the operator's own (its status write after the create was lost: a crash, a failed write);
   * any other single store is adopted.
   */
  public static Plan forName(FGAStore.Spec spec, List<Store> named, FGAStore.Creating intent) {
    if (named.isEmpty()) {
      return new Plan.Create(spec.getName());
    }
    if (named.size() == 1) {
      Store found = named.get(0);
      return createdAsIntended(found, intent)
          ? new Plan.Use(found, true, Optional.of(StoreReason.StoreCreated))
          : new Plan.Use(found, false, Optional.of(StoreReason.StoreAdopted));
    }
    return new Plan.Blocked(
        StoreReason.AmbiguousStoreName,
        named.size()
            + " stores are named \""
            + spec.getName()
            + "\" in OpenFGA ("
            + named.stream().map(Store::id).sorted().collect(Collectors.joining(", "))
            + "): set spec.storeId to the one this FGAStore stands for; nothing was created");
  }

  /** Whether {@code store} is the one the recorded {@code intent} was about to create. */
  static boolean createdAsIntended(Store store, FGAStore.Creating intent) {
    if (intent == null || intent.getName() == null || !intent.getName().equals(store.name())) {
      return false;
    }
    Optional<Instant> at = dev.openfga.operator.kube.Timestamps.parse(intent.getAt());
    Optional<Instant> created = dev.openfga.operator.kube.Timestamps.parse(store.createdAt());
    if (at.isEmpty() || created.isEmpty()) {
      return false;
    }
    return !created.get().isBefore(at.get().minus(CLOCK_SKEW))
        && !created.get().isAfter(at.get().plus(CLOCK_SKEW));
  }

  /** At deletion: the id of the store to delete, if the policy says so and the operator made it. */
  public static Optional<String> toDelete(FGAStore.Spec spec, FGAStore.Status status) {
    if (spec.getDeletionPolicy() != FGAStore.DeletionPolicy.Delete || status == null) {
      return Optional.empty();
    }
    if (!Boolean.TRUE.equals(status.getCreatedByOperator())) {
      return Optional.empty();
    }
    return Optional.ofNullable(status.getStoreId()).filter(s -> !s.isBlank());
  }

  /**
   * Another FGAStore, not being deleted itself, that stands for the store {@code deleted} would
   * delete (the same {@code status.storeId}: it adopted the store; or the same {@code
   * spec.storeId}, also before its first reconcile or while it waits), or may be about to adopt it
   * (no id yet, the same {@code spec.name} on the same server: an FGAStore renamed or moved to
   * another namespace in Git, its new object not reconciled yet): the store is then kept, never
   * deleted under it.
   */
  public static Optional<FGAStore> alsoStandingFor(
      FGAStore deleted, String storeId, Collection<FGAStore> all) {
    return all.stream()
        .filter(o -> !Objects.equals(o.getMetadata().getUid(), deleted.getMetadata().getUid()))
        .filter(o -> o.getMetadata().getDeletionTimestamp() == null)
        .filter(
            o ->
                (o.getStatus() != null && storeId.equals(o.getStatus().getStoreId()))
                    || (o.getSpec() != null && storeId.equals(o.getSpec().getStoreId()))
                    || mayAdopt(o, deleted))
        .findFirst();
  }

  /**
   * {@code o} has no store id yet and names the store {@code deleted} names on the same server (in
   * any watched namespace: an FGAStore adopts a store by name wherever it is).
   */
  private static boolean mayAdopt(FGAStore o, FGAStore deleted) {
    boolean noId =
        (o.getStatus() == null || blank(o.getStatus().getStoreId()))
            && (o.getSpec() == null || blank(o.getSpec().getStoreId()));
    return noId
        && o.getSpec() != null
        && deleted.getSpec() != null
        && o.getSpec().getName() != null
        && o.getSpec().getName().equals(deleted.getSpec().getName())
        && server(o).equals(server(deleted));
  }

  /** The store's server as compared ({@link #server(String)}). */
  private static String server(FGAStore store) {
    FGAStore.OpenFgaRef ref = store.getSpec().getOpenfgaRef();
    return server(ref == null || ref.getUrl() == null ? "" : ref.getUrl());
  }

  /** The server a URL names, as compared ({@link Servers#canonical}). */
  static String server(String text) {
    return Servers.canonical(text);
  }

  private static boolean blank(String value) {
    return value == null || value.isBlank();
  }

  /**
   * Whether a store that could not be deleted is left in OpenFGA now and the FGAStore let go: at
   * once when there is nothing to delete it with ({@code secretGone}: its credentials Secret gone
   * and none kept, e.g. a namespace deleted while no operator ran), else {@link #GIVE_UP_DELETING}
   * after the FGAStore's deletion was asked for. Keeping a store is the safe side: its data stays,
   * and a Warning Event names it.
   */
  public static boolean giveUpDeleting(
      Optional<Instant> deletionRequested, boolean secretGone, Instant now) {
    return secretGone
        || deletionRequested.map(t -> !t.plus(GIVE_UP_DELETING).isAfter(now)).orElse(false);
  }

  /**
   * {@code ServerNotAllowed} when the spec's URL is not one of the servers the operator was
   * installed for: nothing is sent to it, not even a look-up.
   */
  public static Optional<Plan.Blocked> serverNotAllowed(FGAStore.Spec spec, Servers servers) {
    String url = spec.getOpenfgaRef().getUrl();
    if (servers.allows(url)) {
      return Optional.empty();
    }
    return Optional.of(
        new Plan.Blocked(
            StoreReason.ServerNotAllowed,
            "spec.openfgaRef.url "
                + url
                + " is not one of the OpenFGA servers this operator is installed for ("
                + String.join(", ", servers.urls())
                + "; chart value storesAndModels.servers, flag --openfga-servers): nothing is sent"
                + " to it"));
  }

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
  static Optional<Plan.Blocked> claimedElsewhere(
      FGAStore store,
      String storeId,
      Collection<FGAStore> cached,
      Collection<Claims.Entry> confirmed) {
    String server = server(store);
    String namespace = store.getMetadata().getNamespace();
    String uid = store.getMetadata().getUid();
    String name = store.getSpec().getName();
    Rank mine =
        new Rank(
            storeId != null
                && (storeId.equals(statusId(store))
                    || confirmed.stream()
                        .anyMatch(c -> c.uid().equals(uid) && storeId.equals(c.storeId()))),
            store.getMetadata().getCreationTimestamp(),
            namespace,
            store.getMetadata().getName());
    Optional<Rank> first =
        java.util.stream.Stream.concat(
                cached.stream()
                    .filter(o -> !Objects.equals(o.getMetadata().getUid(), uid))
                    .filter(o -> !Objects.equals(o.getMetadata().getNamespace(), namespace))
                    .filter(o -> o.getMetadata().getDeletionTimestamp() == null)
                    .filter(o -> o.getSpec() != null && server(o).equals(server))
                    .filter(o -> claims(o, storeId, name))
                    .map(
                        o ->
                            new Rank(
                                storeId != null
                                    && (storeId.equals(statusId(o))
                                        || confirmed.stream()
                                            .anyMatch(
                                                c ->
                                                    c.uid().equals(o.getMetadata().getUid())
                                                        && storeId.equals(c.storeId()))),
                                o.getMetadata().getCreationTimestamp(),
                                o.getMetadata().getNamespace(),
                                o.getMetadata().getName())),
                confirmed.stream()
                    .filter(c -> storeId != null && storeId.equals(c.storeId()))
                    .filter(c -> !c.uid().equals(uid) && !c.namespace().equals(namespace))
                    .filter(c -> c.server().equals(server))
                    .map(c -> new Rank(true, c.creationTimestamp(), c.namespace(), c.name())))
            .filter(other -> other.compareTo(mine) < 0)
            .findFirst();
    if (first.isEmpty()) {
      return Optional.empty();
    }
    String url = store.getSpec().getOpenfgaRef().getUrl();
    return Optional.of(
        new Plan.Blocked(
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
      return java.util.Comparator.comparing(Rank::holds, java.util.Comparator.reverseOrder())
          .thenComparing(
              r -> dev.openfga.operator.kube.Timestamps.parse(r.created()).orElse(Instant.MAX))
          .thenComparing(Rank::namespace, java.util.Comparator.nullsLast(String::compareTo))
          .thenComparing(Rank::name, java.util.Comparator.nullsLast(String::compareTo))
          .compare(this, o);
    }
  }

  /** Problems of the spec the schema cannot catch, or empty. */
  public static Optional<String> invalid(FGAStore.Spec spec) {
    if (spec == null) {
      return Optional.of("spec is missing");
    }
    if (spec.getName() == null || spec.getName().isBlank()) {
      return Optional.of("spec.name must name the store");
    }
    if (spec.getName().startsWith(ModelAssertions.SCRATCH_PREFIX)) {
      // the FGAModel tests delete every store of their scratch name
      return Optional.of(
          "spec.name "
              + spec.getName()
              + " starts with "
              + ModelAssertions.SCRATCH_PREFIX
              + ", which names the FGAModel tests' scratch stores; choose another name");
    }
    if (spec.getOpenfgaRef() == null || spec.getOpenfgaRef().getUrl() == null) {
      return Optional.of("spec.openfgaRef.url must be the OpenFGA HTTP API's URL");
    }
    String url = spec.getOpenfgaRef().getUrl();
    try {
      java.net.URI uri = java.net.URI.create(url);
      if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          || uri.getHost() == null) {
        return Optional.of(
            "spec.openfgaRef.url " + url + " is not an http:// or https:// URL with a host");
      }
    } catch (IllegalArgumentException e) {
      return Optional.of("spec.openfgaRef.url " + url + " is not a URL");
    }
    return Optional.empty();
  }
}
