package dev.openfga.operator.stores;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.openfga.Store;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Every rule of the FGAStore decision, directly. */
class StorePlannerTest {
  private static final String URL = "http://openfga.openfga:8080";
  private static final String ID_A = "01HVMMBCMGZNT3SED4Z17ECXCA";
  private static final String ID_B = "01HVMMBCMGZNT3SED4Z17ECXCB";

  private static FGAStore.Spec spec(String name, String storeId, FGAStore.DeletionPolicy policy) {
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName(name);
    spec.setStoreId(storeId);
    spec.setDeletionPolicy(policy);
    FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
    ref.setUrl(URL);
    spec.setOpenfgaRef(ref);
    return spec;
  }

  private static FGAStore.Status status(String storeId, Boolean created) {
    FGAStore.Status status = new FGAStore.Status();
    status.setStoreId(storeId);
    status.setCreatedByOperator(created);
    return status;
  }

  private static Store store(String id, String name) {
    return new Store(id, name, "2026-01-01T00:00:00Z");
  }

  @Test
  void noStoreWithTheNameIsCreated() {
    assertThat(StorePlanner.forName(spec("app", null, null), List.of(), null))
        .isEqualTo(new StoreChoice.Create("app"));
  }

  @Test
  void exactlyOneStoreWithTheNameIsAdoptedNotCreatedByTheOperator() {
    StoreChoice plan =
        StorePlanner.forName(spec("app", null, null), List.of(store(ID_A, "app")), null);
    assertThat(plan)
        .isEqualTo(
            new StoreChoice.Use(store(ID_A, "app"), false, Optional.of(StoreReason.StoreAdopted)));
  }

  @Test
  void theOneStoreTheRecordedIntentNamesAndWasCreatedThenIsTheOperatorsOwn() {
    FGAStore.Creating intent = new FGAStore.Creating("app", "2026-01-01T12:00:00Z");
    // created 2 s after the intent, or by a server whose clock is 4 minutes either side
    for (String createdAt :
        List.of("2026-01-01T12:00:02.123456Z", "2026-01-01T11:56:00Z", "2026-01-01T12:04:00Z")) {
      Store found = new Store(ID_A, "app", createdAt);
      assertThat(StorePlanner.forName(spec("app", null, null), List.of(found), intent))
          .as(createdAt)
          .isEqualTo(new StoreChoice.Use(found, true, Optional.of(StoreReason.StoreCreated)));
    }
  }

  @Test
  void aStoreCreatedLongBeforeOrAfterTheIntentIsAdoptedNotTheOperators() {
    FGAStore.Creating intent = new FGAStore.Creating("app", "2026-01-01T12:00:00Z");
    for (String createdAt :
        List.of("2026-01-01T11:54:59Z", "2025-06-01T00:00:00Z", "2026-01-01T12:05:01Z", "")) {
      Store found = new Store(ID_A, "app", createdAt);
      assertThat(StorePlanner.forName(spec("app", null, null), List.of(found), intent))
          .as(createdAt)
          .isEqualTo(new StoreChoice.Use(found, false, Optional.of(StoreReason.StoreAdopted)));
    }
  }

  @Test
  void anIntentForAnotherNameOrWithoutATimeMakesNoStoreTheOperators() {
    Store found = new Store(ID_A, "app", "2026-01-01T12:00:01Z");
    for (FGAStore.Creating intent :
        List.of(
            new FGAStore.Creating("other", "2026-01-01T12:00:00Z"),
            new FGAStore.Creating("app", null),
            new FGAStore.Creating("app", "yesterday"))) {
      assertThat(StorePlanner.forName(spec("app", null, null), List.of(found), intent))
          .isEqualTo(new StoreChoice.Use(found, false, Optional.of(StoreReason.StoreAdopted)));
    }
  }

  @Test
  void severalStoresWithTheNameCreateNothingAndNameEveryId() {
    StoreChoice plan =
        StorePlanner.forName(
            spec("app", null, null),
            List.of(store(ID_B, "app"), store(ID_A, "app")),
            // an intent naming them settles nothing: which of the two was created is not known
            new FGAStore.Creating("app", "2026-01-01T00:00:00Z"));
    assertThat(plan).isInstanceOf(StoreChoice.Blocked.class);
    StoreChoice.Blocked blocked = (StoreChoice.Blocked) plan;
    assertThat(blocked.reason()).isEqualTo(StoreReason.AmbiguousStoreName);
    assertThat(blocked.reason().warning()).isTrue();
    assertThat(blocked.message())
        .contains("2 stores are named \"app\"")
        .contains(ID_A + ", " + ID_B)
        .contains("spec.storeId");
  }

  @Test
  void theKnownIdIsTheSpecsElseTheStatuss() {
    assertThat(StorePlanner.knownId(spec("app", ID_A, null), status(ID_B, true))).contains(ID_A);
    assertThat(StorePlanner.knownId(spec("app", null, null), status(ID_B, true))).contains(ID_B);
    assertThat(StorePlanner.knownId(spec("app", null, null), null)).isEmpty();
    assertThat(StorePlanner.knownId(spec("app", "", null), status("", null))).isEmpty();
  }

  @Test
  void aKnownStoreThatIsGoneIsMissingAndNeverRecreated() {
    StoreChoice plan =
        StorePlanner.forKnownId(
            spec("app", null, null), status(ID_A, true), ID_A, Optional.empty(), URL);
    assertThat(plan).isInstanceOf(StoreChoice.Blocked.class);
    StoreChoice.Blocked blocked = (StoreChoice.Blocked) plan;
    assertThat(blocked.reason()).isEqualTo(StoreReason.StoreMissing);
    assertThat(blocked.reason().warning()).isTrue();
    assertThat(blocked.message()).contains(ID_A).contains(URL).contains("not re-created");
  }

  @Test
  void aKnownStoreStillThereKeepsWhetherTheOperatorCreatedIt() {
    assertThat(
            StorePlanner.forKnownId(
                spec("app", null, null),
                status(ID_A, true),
                ID_A,
                Optional.of(store(ID_A, "app")),
                URL))
        .isEqualTo(new StoreChoice.Use(store(ID_A, "app"), true, Optional.empty()));
    assertThat(
            StorePlanner.forKnownId(
                spec("app", null, null),
                status(ID_A, false),
                ID_A,
                Optional.of(store(ID_A, "app")),
                URL))
        .isEqualTo(new StoreChoice.Use(store(ID_A, "app"), false, Optional.empty()));
  }

  @Test
  void aStoreIdInTheSpecIsAdoptedExactlyAndNeverCountsAsCreated() {
    // the status says the operator created ID_B; the spec now names ID_A: adopted, not created
    assertThat(
            StorePlanner.forKnownId(
                spec("app", ID_A, null),
                status(ID_B, true),
                ID_A,
                Optional.of(store(ID_A, "app")),
                URL))
        .isEqualTo(
            new StoreChoice.Use(store(ID_A, "app"), false, Optional.of(StoreReason.StoreAdopted)));
  }

  @Test
  void aStoreIdWhoseStoreHasAnotherNameIsRefused() {
    StoreChoice plan =
        StorePlanner.forKnownId(
            spec("app", ID_A, null), null, ID_A, Optional.of(store(ID_A, "other")), URL);
    assertThat(plan).isInstanceOf(StoreChoice.Blocked.class);
    assertThat(((StoreChoice.Blocked) plan).reason()).isEqualTo(StoreReason.StoreNameMismatch);
    assertThat(((StoreChoice.Blocked) plan).message()).contains("\"other\"").contains("\"app\"");
  }

  @Test
  void onlyAStoreTheOperatorCreatedIsDeletedAndOnlyWithDelete() {
    FGAStore.Spec delete = spec("app", null, FGAStore.DeletionPolicy.Delete);
    assertThat(StoreDeletion.toDelete(delete, status(ID_A, true))).contains(ID_A);
    assertThat(StoreDeletion.toDelete(delete, status(ID_A, false))).isEmpty();
    assertThat(StoreDeletion.toDelete(delete, status(ID_A, null))).isEmpty();
    assertThat(StoreDeletion.toDelete(delete, null)).isEmpty();
    assertThat(StoreDeletion.toDelete(delete, status(null, true))).isEmpty();
    assertThat(
            StoreDeletion.toDelete(
                spec("app", null, FGAStore.DeletionPolicy.Retain), status(ID_A, true)))
        .isEmpty();
    assertThat(StoreDeletion.toDelete(spec("app", null, null), status(ID_A, true)))
        .as("Retain is the default")
        .isEmpty();
  }

  @Test
  void aSpecWithoutNameOrUsableUrlIsInvalid() {
    assertThat(StorePlanner.invalid(spec("app", null, null))).isEmpty();
    assertThat(StorePlanner.invalid(spec(" ", null, null))).get().asString().contains("spec.name");
    // the FGAModel tests delete every store of their scratch names
    assertThat(StorePlanner.invalid(spec(FGAStore.SCRATCH_PREFIX + "0b1c", null, null)))
        .get()
        .asString()
        .contains("scratch stores");
    FGAStore.Spec noUrl = spec("app", null, null);
    noUrl.getOpenfgaRef().setUrl(null);
    assertThat(StorePlanner.invalid(noUrl)).get().asString().contains("openfgaRef.url");
    FGAStore.Spec ftp = spec("app", null, null);
    ftp.getOpenfgaRef().setUrl("ftp://openfga");
    assertThat(StorePlanner.invalid(ftp)).get().asString().contains("ftp://openfga");
    assertThat(StorePlanner.invalid(null)).contains("spec is missing");
  }

  @Test
  void aStoreThatCannotBeDeletedIsLeftAtOnceWithoutItsSecretElseAfterTenMinutes() {
    java.time.Instant asked = java.time.Instant.parse("2026-12-02T10:00:00Z");
    Optional<java.time.Instant> deletion = Optional.of(asked);

    assertThat(StoreDeletion.giveUpDeleting(deletion, true, asked)).isTrue();
    assertThat(StoreDeletion.giveUpDeleting(deletion, false, asked)).isFalse();
    assertThat(StoreDeletion.giveUpDeleting(deletion, false, asked.plusSeconds(599))).isFalse();
    assertThat(StoreDeletion.giveUpDeleting(deletion, false, asked.plusSeconds(600))).isTrue();
    assertThat(StoreDeletion.giveUpDeleting(Optional.empty(), false, asked.plusSeconds(6000)))
        .isFalse();
  }

  private static FGAStore store(String uid, String storeId, boolean deleting) {
    FGAStore s = new FGAStore();
    s.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName(uid)
            .withNamespace("ns")
            .withUid(uid)
            .withDeletionTimestamp(deleting ? "2026-12-03T00:00:00Z" : null)
            .build());
    s.setStatus(status(storeId, false));
    return s;
  }

  @Test
  void aStoreAnotherFgaStoreStandsForIsNotDeletedUnderIt() {
    FGAStore deleted = store("a", "S1", true);
    FGAStore adopter = store("b", "S1", false);
    FGAStore elsewhere = store("c", "S2", false);
    FGAStore alsoGoing = store("d", "S1", true);

    assertThat(StoreDeletion.alsoStandingFor(deleted, "S1", List.of(deleted, adopter, elsewhere)))
        .containsSame(adopter);
    // itself, another store's, and one being deleted too do not keep it
    assertThat(StoreDeletion.alsoStandingFor(deleted, "S1", List.of(deleted, elsewhere, alsoGoing)))
        .isEmpty();
  }

  @Test
  void aStoreAnotherFgaStoreNamesByIdIsNotDeletedBeforeThatOneHasAStatus() {
    FGAStore deleted = store("a", "S1", true);
    // not reconciled yet, or waiting for its Deployment's migration or its credentials
    FGAStore naming = store("b", null, false);
    naming.setStatus(null);
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setStoreId("S1");
    naming.setSpec(spec);

    assertThat(StoreDeletion.alsoStandingFor(deleted, "S1", List.of(deleted, naming)))
        .containsSame(naming);
  }

  @Test
  void aStoreAnotherFgaStoreOfTheSameNameMayStillAdoptIsNotDeleted() {
    // renamed in Git: the old FGAStore is deleted, the new one (same spec.name) not reconciled
    FGAStore deleted = named(store("a", "S1", true), "app", "http://openfga:80");
    FGAStore renamed = named(store("b", null, false), "app", "HTTP://OpenFGA/");
    renamed.setStatus(null);
    FGAStore moved = named(store("e", null, false), "app", "http://openfga");
    moved.setStatus(null);
    moved.getMetadata().setNamespace("team-b");
    FGAStore other = named(store("c", "S2", false), "app", "http://openfga");
    FGAStore elsewhere = named(store("d", null, false), "app", "http://other-openfga");
    elsewhere.setStatus(null);

    // renamed, or moved to another namespace (it adopts by name wherever it is): the same server
    // however its URL is spelt
    assertThat(StoreDeletion.alsoStandingFor(deleted, "S1", List.of(deleted, renamed)))
        .containsSame(renamed);
    assertThat(StoreDeletion.alsoStandingFor(deleted, "S1", List.of(deleted, moved)))
        .containsSame(moved);
    // one of the same name that stands for another store, or on another server, does not keep it
    assertThat(StoreDeletion.alsoStandingFor(deleted, "S1", List.of(deleted, other, elsewhere)))
        .isEmpty();
  }

  @Test
  void aServerTheInstallerDidNotListIsNotAllowedHoweverItIsSpelt() {
    Servers servers =
        new Servers(List.of("http://openfga.openfga:8080", "https://fga.example/api/"));
    for (String url :
        List.of(
            URL,
            "HTTP://OpenFGA.openfga:8080/",
            "https://fga.example:443/api",
            "https://FGA.example/api//")) {
      FGAStore.Spec spec = spec("app", null, null);
      spec.getOpenfgaRef().setUrl(url);
      assertThat(StorePlanner.serverNotAllowed(spec, servers)).as(url).isEmpty();
    }
    for (String url :
        List.of(
            "http://openfga.openfga:8081", // another port
            "https://openfga.openfga:8080", // another scheme
            "http://openfga.openfga.svc:8080", // another name of it: not the same text
            "https://fga.example/api/v2", // a path below
            "https://fga.example", // a path above
            "http://evil.example/?x=http://openfga.openfga:8080")) {
      FGAStore.Spec spec = spec("app", null, null);
      spec.getOpenfgaRef().setUrl(url);
      Optional<StoreChoice.Blocked> blocked = StorePlanner.serverNotAllowed(spec, servers);
      assertThat(blocked).as(url).isPresent();
      assertThat(blocked.get().reason()).isEqualTo(StoreReason.ServerNotAllowed);
      assertThat(blocked.get().reason().warning()).isTrue();
      assertThat(blocked.get().message())
          .contains("spec.openfgaRef.url " + url + " is not one of the OpenFGA servers")
          .contains("http://openfga.openfga:8080, https://fga.example/api/")
          .contains("storesAndModels.servers");
    }
  }

  /** An FGAStore of {@code namespace} created at {@code created} (seconds after a fixed time). */
  private static FGAStore claimant(
      String namespace, String name, int created, String specId, String statusId) {
    FGAStore store = new FGAStore();
    store.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withNamespace(namespace)
            .withName(name)
            .withUid(namespace + "/" + name)
            .withCreationTimestamp(
                java.time.Instant.parse("2026-01-01T00:00:00Z").plusSeconds(created).toString())
            .build());
    store.setSpec(spec("app", specId, null));
    store.setStatus(statusId == null ? null : status(statusId, false));
    return store;
  }

  private static Optional<StoreChoice.Blocked> claimed(
      FGAStore store, String storeId, FGAStore... others) {
    List<FGAStore> cached = new java.util.ArrayList<>(List.of(others));
    cached.add(store);
    return ClaimRule.claimedElsewhere(store, storeId, cached, List.of());
  }

  @Test
  void aStoreAnotherNamespaceHoldsIsNotAdoptedByNameNorById() {
    FGAStore holder = claimant("team-a", "app", 100, null, ID_A);
    FGAStore byName = claimant("team-b", "app", 0, null, null); // older, but holds nothing
    FGAStore byId = claimant("team-b", "pinned", 0, ID_A, null);

    Optional<StoreChoice.Blocked> blocked = claimed(byName, ID_A, holder);
    assertThat(blocked).isPresent();
    assertThat(blocked.get().reason()).isEqualTo(StoreReason.StoreClaimedElsewhere);
    assertThat(blocked.get().reason().warning()).isTrue();
    assertThat(blocked.get().message())
        .isEqualTo(
            "store "
                + ID_A
                + " (\"app\") at "
                + URL
                + " is claimed by an FGAStore in another namespace: a store belongs to one"
                + " namespace, and nothing of it is used from here; choose another spec.name")
        .doesNotContain("team-a");
    assertThat(claimed(byId, ID_A, holder)).isPresent();
    // the holder keeps it, whoever is older
    assertThat(claimed(holder, ID_A, byName, byId)).isEmpty();
  }

  @Test
  void onlyAnotherNamespaceOnTheSameServerNotBeingDeletedClaimsAStore() {
    FGAStore me = claimant("team-b", "app", 100, null, null);
    FGAStore sameNamespace = claimant("team-b", "other", 0, null, ID_A);
    FGAStore otherServer = claimant("team-a", "app", 0, null, ID_A);
    otherServer.getSpec().getOpenfgaRef().setUrl("http://other-openfga:8080");
    FGAStore otherStore = claimant("team-a", "app-2", 0, null, ID_B);
    FGAStore going = claimant("team-a", "app-3", 0, null, ID_A);
    going.getMetadata().setDeletionTimestamp("2026-01-02T00:00:00Z");

    assertThat(claimed(me, ID_A, sameNamespace, otherServer, otherStore, going)).isEmpty();
    // the same server however its URL is spelt
    FGAStore spelt = claimant("team-a", "app", 0, null, ID_A);
    spelt.getSpec().getOpenfgaRef().setUrl("HTTP://openfga.openfga:8080/");
    assertThat(claimed(me, ID_A, spelt)).isPresent();
  }

  @Test
  void twoNamespacesAdoptingOneStoreAtOnceAgreeTheOlderWins() {
    // neither holds it yet: both would adopt it by name (or create it)
    FGAStore older = claimant("team-b", "app", 0, null, null);
    FGAStore newer = claimant("team-a", "app", 5, null, null);

    assertThat(claimed(newer, ID_A, older)).isPresent();
    assertThat(claimed(older, ID_A, newer)).isEmpty();
    // the store to be created (no id yet): the same answer, before anything is created
    Optional<StoreChoice.Blocked> creating = claimed(newer, null, older);
    assertThat(creating).isPresent();
    assertThat(creating.get().message())
        .startsWith("the store name \"app\" at " + URL + " is claimed by an older FGAStore");
    assertThat(claimed(older, null, newer)).isEmpty();
    // created in the same second: namespace, then name, decide
    FGAStore twin = claimant("team-c", "app", 0, null, null);
    assertThat(claimed(twin, ID_A, older)).isPresent();
    assertThat(claimed(older, ID_A, twin)).isEmpty();
    // one that pins the id counts too; one that pins another store does not
    FGAStore pinning = claimant("team-c", "pin", 0, ID_A, null);
    assertThat(claimed(newer, ID_A, pinning)).isPresent();
    FGAStore pinningOther = claimant("team-c", "pin", 0, ID_B, null);
    assertThat(claimed(newer, ID_A, pinningOther)).isEmpty();
    assertThat(claimed(newer, null, pinningOther)).isEmpty();
  }

  @Test
  void aClaimConfirmedAMomentAgoCountsBeforeTheCacheHasIt() {
    // team-a's FGAStore took the store; its status is not in the informer cache yet
    FGAStore taker = claimant("team-a", "app", 100, null, null);
    FGAStore me = claimant("team-b", "app", 0, null, null);
    Claims.Entry confirmed =
        new Claims.Entry(
            "team-a/app",
            "team-a",
            "app",
            taker.getMetadata().getCreationTimestamp(),
            Servers.canonical(URL),
            ID_A);

    assertThat(ClaimRule.claimedElsewhere(me, ID_A, List.of(me, taker), List.of(confirmed)))
        .isPresent();
    // not even in the cache yet
    assertThat(ClaimRule.claimedElsewhere(me, ID_A, List.of(me), List.of(confirmed))).isPresent();
    assertThat(ClaimRule.claimedElsewhere(taker, ID_A, List.of(me, taker), List.of(confirmed)))
        .isEmpty();
  }

  @Test
  void twoNamespacesHoldingOneStoreFromBeforeTheRuleKeepItForTheOlder() {
    // both adopted it before stores belonged to one namespace
    FGAStore older = claimant("team-b", "app", 0, null, ID_A);
    FGAStore newer = claimant("team-a", "app", 5, null, ID_A);

    assertThat(claimed(newer, ID_A, older)).isPresent();
    assertThat(claimed(older, ID_A, newer)).isEmpty();
  }

  @Test
  void theClaimsRecordWhatTheyConfirmAndTheSecondOfTwoAtOnceIsRefused() {
    Claims claims = new Claims();
    FGAStore first = claimant("team-a", "app", 100, null, null);
    FGAStore second = claimant("team-b", "app", 100, null, null);
    // neither in the other's cache: the order the claims are made in decides
    assertThat(claims.claim(first, ID_A, List.of(first))).isEmpty();
    assertThat(claims.confirmed("team-a/app", "HTTP://openfga.openfga:8080/", ID_A)).isTrue();
    assertThat(claims.confirmed("team-a/app", URL, ID_B)).isFalse();
    assertThat(claims.confirmed("team-a/app", "http://other:8080", ID_A)).isFalse();
    assertThat(claims.claim(second, ID_A, List.of(second))).isPresent();
    assertThat(claims.confirmed("team-b/app", URL, ID_A)).isFalse();
    // released (blocked, or deleted): the store is free for the next
    claims.release("team-a/app");
    assertThat(claims.confirmed("team-a/app", URL, ID_A)).isFalse();
    assertThat(claims.claim(second, ID_A, List.of(second))).isEmpty();
    // a check records nothing
    assertThat(claims.check(first, ID_A, List.of(first))).isPresent();
    assertThat(claims.confirmed("team-a/app", URL, ID_A)).isFalse();
  }

  private static FGAStore named(FGAStore store, String name, String url) {
    store.setSpec(new FGAStore.Spec());
    store.getSpec().setName(name);
    store.getSpec().setOpenfgaRef(new FGAStore.OpenFgaRef());
    store.getSpec().getOpenfgaRef().setUrl(url);
    return store;
  }
}
