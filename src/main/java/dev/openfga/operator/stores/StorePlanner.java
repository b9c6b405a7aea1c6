package dev.openfga.operator.stores;

import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.openfga.Store;
import dev.openfga.operator.stores.StoreAnswer.Failed;
import dev.openfga.operator.stores.StorePlan.Emit;
import dev.openfga.operator.stores.StorePlan.Note;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * What to do about an {@link FGAStore}: pure, a function of a {@link StoreObservation}, so every
 * rule is tested directly ({@code StorePlannerTest}). It decides the calls (look the store up,
 * create it, claim it), and from their answers the status, the Events and when to look again:
 *
 * <ul>
 *   <li>Only on a server the installer listed ({@link #serverNotAllowed}): nothing is sent to any
 *       other, not even a look-up; and, with {@code deploymentRef}, not before that Deployment's
 *       database was migrated once ({@link MigrationGate}).
 *   <li>A known store (the spec's {@code storeId}, else the one in the status) is looked up by id;
 *       gone → {@code StoreMissing}, never re-created under a new id.
 *   <li>Otherwise by name: none → create (its intent recorded first, {@code status.creating});
 *       exactly one → adopt, as the operator's own when the recorded intent names it and it was
 *       created about then; several → {@code AmbiguousStoreName}, nothing created.
 *   <li>Only a store no FGAStore of another namespace comes first for ({@link
 *       ClaimRule#claimedElsewhere}).
 * </ul>
 *
 * The deletion is {@link StoreDeletion}'s.
 */
public final class StorePlanner {
  /** How often a ready store is checked again (out-of-band deletion → StoreMissing). */
  public static final Duration RECHECK = Duration.ofMinutes(5);

  /** How soon a store that waits (migration, credentials, the API) is looked at again. */
  public static final Duration WAIT = Duration.ofSeconds(10);

  /**
   * How far a store's {@code created_at} (the server's clock) may be from the time of the intent to
   * create it ({@code status.creating.at}, the operator's clock) for the store to be the one the
   * operator created.
   */
  public static final Duration CLOCK_SKEW = Duration.ofMinutes(5);

  /**
   * The intent's write met a newer FGAStore: looked at again after this, as after any status write
   * that meets one ({@code StatusWrites.CONFLICT_AGAIN}).
   */
  static final Duration CONFLICT_AGAIN = Duration.ofSeconds(1);

  private final Servers servers;

  public StorePlanner(Servers servers) {
    this.servers = servers;
  }

  /** The next call to make for the FGAStore of {@code o}, or the end of its reconcile. */
  public StorePlan plan(StoreObservation o) {
    FGAStore.Spec spec = o.store().getSpec();
    Optional<String> invalid = invalid(spec);
    if (invalid.isPresent()) {
      return blocked(o, StoreReason.InvalidSpec, invalid.get(), null);
    }
    // before anything else is read: a server the installer did not list gets no request at all
    Optional<StoreChoice.Blocked> notAllowed = serverNotAllowed(spec, servers);
    if (notAllowed.isPresent()) {
      return blocked(o, notAllowed.get(), null);
    }
    FGAStore.NameRef gate = spec.getOpenfgaRef().getDeploymentRef();
    if (gate != null && gate.getName() != null) {
      Optional<StoreAnswer.Migration> migration = o.answer(StoreAnswer.Migration.class);
      if (migration.isEmpty()) {
        return new StorePlan.Call(new StoreStep.ReadMigration(gate.getName()));
      }
      Optional<String> waiting =
          MigrationGate.waiting(
              o.store().getMetadata().getNamespace(), gate.getName(), migration.get());
      if (waiting.isPresent()) {
        return blocked(o, StoreReason.WaitingForMigration, waiting.get(), WAIT);
      }
    }
    Optional<Failed> failed = o.answer(Failed.class);
    if (failed.isPresent()) {
      StoreReason reason =
          failed.get().failure().credentials()
              ? StoreReason.CredentialsError
              : StoreReason.OpenFGARequestFailed;
      return blocked(o, reason, failed.get().failure().message(), WAIT);
    }
    if (o.answer(StoreAnswer.Connected.class).isEmpty()) {
      return new StorePlan.Call(new StoreStep.Connect());
    }
    Optional<String> known = knownId(spec, o.store().getStatus());
    return known.isPresent() ? byId(o, known.get()) : byName(o);
  }

  /** The next call to make for the deletion of the FGAStore of {@code o}, or its end. */
  public StorePlan deletion(StoreObservation o) {
    return StoreDeletion.plan(o, servers);
  }

  /** A known store: looked up by its id, unless another namespace's FGAStore comes first for it. */
  private static StorePlan byId(StoreObservation o, String id) {
    // another namespace's store is not even looked at
    Optional<StoreChoice.Blocked> claimed =
        ClaimRule.claimedElsewhere(o.store(), id, o.cached(), o.confirmed());
    if (claimed.isPresent()) {
      return blocked(o, claimed.get(), RECHECK);
    }
    Optional<StoreAnswer.Found> found = o.answer(StoreAnswer.Found.class);
    if (found.isEmpty()) {
      return new StorePlan.Call(new StoreStep.LookUp(id));
    }
    FGAStore store = o.store();
    String url = store.getSpec().getOpenfgaRef().getUrl();
    return use(o, forKnownId(store.getSpec(), store.getStatus(), id, found.get().store(), url));
  }

  /**
   * No id known: the stores of the name (looked up and created one name at a time, so that two
   * FGAStores naming one store, reconciled at once, make one: the second finds the first's and
   * adopts it; a name that is busy is looked at again soon).
   */
  private static StorePlan byName(StoreObservation o) {
    if (o.answer(StoreAnswer.NameBusy.class).isPresent()) {
      return waitOnly(OpenFgaCallLimit.BUSY_AGAIN);
    }
    Optional<StoreAnswer.Named> named = o.answer(StoreAnswer.Named.class);
    FGAStore store = o.store();
    if (named.isEmpty()) {
      return new StorePlan.Call(new StoreStep.LookUpByName(store.getSpec().getName()));
    }
    FGAStore.Creating intent = store.getStatus() == null ? null : store.getStatus().getCreating();
    StoreChoice choice = forName(store.getSpec(), named.get().stores(), intent);
    return choice instanceof StoreChoice.Create create ? create(o, create) : use(o, choice);
  }

  /**
   * No store has the name: create it, unless an older FGAStore of another namespace naming it
   * creates (or adopts) it instead; the intent is recorded first, so that a store created but not
   * recorded (a crash, a lost status write) is still known as the operator's at the next look-up by
   * name.
   */
  private static StorePlan create(StoreObservation o, StoreChoice.Create create) {
    Optional<StoreChoice.Blocked> claimed =
        ClaimRule.claimedElsewhere(o.store(), null, o.cached(), o.confirmed());
    if (claimed.isPresent()) {
      return blocked(o, claimed.get(), RECHECK);
    }
    if (o.answer(StoreAnswer.IntentConflict.class).isPresent()) {
      return waitOnly(CONFLICT_AGAIN);
    }
    if (o.answer(StoreAnswer.IntentRecorded.class).isEmpty()) {
      FGAStore.Status intent = Conditions.copy(o.store().getStatus(), FGAStore.Status::new);
      intent.setCreating(new FGAStore.Creating(create.name(), Timestamps.format(o.now())));
      return new StorePlan.Call(new StoreStep.RecordIntent(intent));
    }
    Optional<StoreAnswer.Created> created = o.answer(StoreAnswer.Created.class);
    if (created.isEmpty()) {
      return new StorePlan.Call(new StoreStep.Create(create.name()));
    }
    if (o.answer(StoreAnswer.Claimed.class).isEmpty()) {
      // recorded as confirmed, so that a claim of another namespace a moment later sees it
      return new StorePlan.Call(new StoreStep.Claim(created.get().store().id()));
    }
    return ready(
        o, new StoreChoice.Use(created.get().store(), true, Optional.of(StoreReason.StoreCreated)));
  }

  /** A store found: claimed for this FGAStore first, unless the choice is blocked. */
  private static StorePlan use(StoreObservation o, StoreChoice choice) {
    if (choice instanceof StoreChoice.Blocked b) {
      return blocked(o, b, RECHECK);
    }
    StoreChoice.Use use = (StoreChoice.Use) choice;
    Optional<StoreAnswer.Claimed> claimed = o.answer(StoreAnswer.Claimed.class);
    if (claimed.isEmpty()) {
      return new StorePlan.Call(new StoreStep.Claim(use.store().id()));
    }
    if (claimed.get().refused().isPresent()) {
      return blocked(o, claimed.get().refused().get(), RECHECK);
    }
    return ready(o, use);
  }

  /** {@code Ready=True}: the FGAStore stands for the store; an Event when that is new. */
  private static StorePlan ready(StoreObservation o, StoreChoice.Use use) {
    FGAStore.Status next = next(o);
    Store store = use.store();
    next.setStoreId(store.id());
    next.setCreatedByOperator(use.createdByOperator());
    next.setCreating(null);
    String message = "store \"" + store.name() + "\" (" + store.id() + ") at " + url(o);
    List<Emit> events =
        use.event().stream()
            .map(
                reason ->
                    new Emit(
                        reason,
                        (reason == StoreReason.StoreCreated ? "created " : "adopted ") + message,
                        store.id()))
            .toList();
    Conditions.set(next, Conditions.READY, true, StoreReason.StoreReady.name(), message, o.now());
    return new StorePlan.Done(
        Optional.of(next), events, Optional.empty(), false, Optional.of(RECHECK));
  }

  private static StorePlan blocked(StoreObservation o, StoreChoice.Blocked b, Duration again) {
    return blocked(o, b.reason(), b.message(), again);
  }

  /**
   * {@code Ready=False}: the FGAStore stands for no store now (its FGAModels wait); when that is
   * news, a WARN line and, for a Warning reason, an Event. {@code again} null: at the next event.
   */
  private static StorePlan blocked(
      StoreObservation o, StoreReason reason, String message, Duration again) {
    FGAStore.Status next = next(o);
    Optional<String> news = Conditions.block(next, reason.name(), message, o.now());
    List<Emit> events =
        news.filter(key -> reason.warning()).map(key -> new Emit(reason, message, key)).stream()
            .toList();
    return new StorePlan.Done(
        Optional.of(next),
        events,
        news.map(key -> new Note(true, Optional.of(reason), message)),
        true,
        Optional.ofNullable(again));
  }

  /** Nothing written: the reconcile looks again after {@code again}. */
  private static StorePlan waitOnly(Duration again) {
    return new StorePlan.Done(
        Optional.empty(), List.of(), Optional.empty(), false, Optional.of(again));
  }

  /** The status to write: the one read, for the generation looked at. */
  private static FGAStore.Status next(StoreObservation o) {
    FGAStore.Status next = Conditions.copy(o.store().getStatus(), FGAStore.Status::new);
    next.setObservedGeneration(o.store().getMetadata().getGeneration());
    return next;
  }

  private static String url(StoreObservation o) {
    return o.store().getSpec().getOpenfgaRef().getUrl();
  }

  /** {@code namespace/name} of an FGAStore, for messages and logs. */
  static String ref(FGAStore store) {
    return store.getMetadata().getNamespace() + "/" + store.getMetadata().getName();
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
  public static StoreChoice forKnownId(
      FGAStore.Spec spec, FGAStore.Status status, String id, Optional<Store> found, String url) {
    if (found.isEmpty()) {
      return new StoreChoice.Blocked(
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
      return new StoreChoice.Blocked(
          StoreReason.StoreNameMismatch,
          "store " + id + " is named \"" + store.name() + "\", not \"" + spec.getName() + "\"");
    }
    boolean fromStatus =
        status != null && id.equals(status.getStoreId()) && status.getStoreId() != null;
    boolean created = fromStatus && Boolean.TRUE.equals(status.getCreatedByOperator());
    boolean isNew = !fromStatus;
    return new StoreChoice.Use(
        store, created, isNew ? Optional.of(StoreReason.StoreAdopted) : Optional.empty());
  }

  /**
   * No id is known: {@code named} are the stores that carry the spec's name; {@code intent} the
   * creation the operator recorded before it asked for one ({@code status.creating}, or null).
   * Exactly one store that the intent names and that was created within {@link #CLOCK_SKEW} of it
   * is the operator's own (its status write after the create was lost: a crash, a failed write);
   * any other single store is adopted.
   */
  public static StoreChoice forName(
      FGAStore.Spec spec, List<Store> named, FGAStore.Creating intent) {
    if (named.isEmpty()) {
      return new StoreChoice.Create(spec.getName());
    }
    if (named.size() == 1) {
      Store found = named.get(0);
      return createdAsIntended(found, intent)
          ? new StoreChoice.Use(found, true, Optional.of(StoreReason.StoreCreated))
          : new StoreChoice.Use(found, false, Optional.of(StoreReason.StoreAdopted));
    }
    return new StoreChoice.Blocked(
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
    Optional<Instant> at = Timestamps.parse(intent.getAt());
    Optional<Instant> created = Timestamps.parse(store.createdAt());
    if (at.isEmpty() || created.isEmpty()) {
      return false;
    }
    return !created.get().isBefore(at.get().minus(CLOCK_SKEW))
        && !created.get().isAfter(at.get().plus(CLOCK_SKEW));
  }

  /**
   * {@code ServerNotAllowed} when the spec's URL is not one of the servers the operator was
   * installed for: nothing is sent to it, not even a look-up.
   */
  public static Optional<StoreChoice.Blocked> serverNotAllowed(
      FGAStore.Spec spec, Servers servers) {
    String url = spec.getOpenfgaRef().getUrl();
    if (servers.allows(url)) {
      return Optional.empty();
    }
    return Optional.of(
        new StoreChoice.Blocked(
            StoreReason.ServerNotAllowed,
            "spec.openfgaRef.url "
                + url
                + " is not one of the OpenFGA servers this operator is installed for ("
                + String.join(", ", servers.urls())
                + "; chart value storesAndModels.servers, flag --openfga-servers): nothing is sent"
                + " to it"));
  }

  /** Problems of the spec the schema cannot catch, or empty. */
  public static Optional<String> invalid(FGAStore.Spec spec) {
    if (spec == null) {
      return Optional.of("spec is missing");
    }
    if (spec.getName() == null || spec.getName().isBlank()) {
      return Optional.of("spec.name must name the store");
    }
    if (spec.getName().startsWith(FGAStore.SCRATCH_PREFIX)) {
      // the FGAModel tests delete every store of their scratch name
      return Optional.of(
          "spec.name "
              + spec.getName()
              + " starts with "
              + FGAStore.SCRATCH_PREFIX
              + ", which names the FGAModel tests' scratch stores; choose another name");
    }
    if (spec.getOpenfgaRef() == null || spec.getOpenfgaRef().getUrl() == null) {
      return Optional.of("spec.openfgaRef.url must be the OpenFGA HTTP API's URL");
    }
    String url = spec.getOpenfgaRef().getUrl();
    try {
      URI uri = URI.create(url);
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
