package dev.openfga.operator.stores;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.openfga.CallFailure;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.stores.StorePlan.Emit;
import dev.openfga.operator.stores.StorePlan.Note;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What becomes of an FGAStore's store when the FGAStore is deleted, pure: only a store the operator
 * created, only with {@code deletionPolicy: Delete}, only on a server still listed, and never under
 * another FGAStore that stands for it; a delete that fails is tried again for {@link
 * #GIVE_UP_DELETING}, then the store is left in OpenFGA with a Warning Event and the FGAStore goes.
 */
final class StoreDeletion {
  private StoreDeletion() {}

  /** How long a deleted FGAStore's store is tried to be deleted before it is left in OpenFGA. */
  static final Duration GIVE_UP_DELETING = Duration.ofMinutes(10);

  /** The deletion of {@code o}'s FGAStore: delete its store, or let it go now, or try again. */
  static StorePlan plan(StoreObservation o, Servers servers) {
    FGAStore store = o.store();
    Optional<String> id = toDelete(store.getSpec(), store.getStatus());
    if (id.isEmpty()) {
      return end(
          List.of(),
          new Note(
              false,
              Optional.empty(),
              "FGAStore deleted; the OpenFGA store is kept (deletionPolicy Retain, or not created by"
                  + " the operator)"));
    }
    FGAStore.OpenFgaRef ref = store.getSpec().getOpenfgaRef();
    if (ref == null || !servers.allows(ref.getUrl())) {
      // not even the deletion goes to a server the installer did not list (the url changed, or
      // the list did since the store was made): the store is left there, and the FGAStore goes
      return kept(
          "store "
              + id.get()
              + " is kept: "
              + (ref == null ? "no spec.openfgaRef.url" : ref.getUrl())
              + " is not one of the OpenFGA servers this operator is installed for (chart value"
              + " storesAndModels.servers, flag --openfga-servers), and nothing is sent to it;"
              + " delete the store there if it is not wanted");
    }
    Optional<FGAStore> sharing = alsoStandingFor(store, id.get(), o.cached());
    if (sharing.isPresent()) {
      boolean here =
          Objects.equals(
              sharing.get().getMetadata().getNamespace(), store.getMetadata().getNamespace());
      return kept(
          "store "
              + id.get()
              + " at "
              + ref.getUrl()
              + " is kept: "
              + (here
                  ? "FGAStore " + StorePlanner.ref(sharing.get())
                  : "an FGAStore in another namespace")
              + " stands for it too (or, without an id yet, names it); delete it in OpenFGA when"
              + " nothing needs it");
    }
    Optional<StoreAnswer.Failed> failed = o.answer(StoreAnswer.Failed.class);
    if (failed.isPresent()) {
      return notDeleted(o, id.get(), failed.get().failure());
    }
    if (o.answer(StoreAnswer.Deleted.class).isPresent()) {
      return end(List.of(), null);
    }
    return new StorePlan.Call(new StoreStep.Delete(id.get()));
  }

  /**
   * The store could not be deleted: tried again, or, once {@link #giveUpDeleting} says so, left in
   * OpenFGA with a Warning Event naming it, and the FGAStore let go (so that neither it nor its
   * namespace waits forever on the finalizer).
   */
  private static StorePlan notDeleted(StoreObservation o, String id, CallFailure failure) {
    String where = "store " + id + " at " + o.store().getSpec().getOpenfgaRef().getUrl();
    Optional<Instant> requested = Timestamps.parse(o.store().getMetadata().getDeletionTimestamp());
    if (giveUpDeleting(requested, failure.secretGone(), o.now())) {
      return kept(
          "gave up deleting "
              + where
              + " ("
              + failure.message()
              + "): it is left in OpenFGA; delete it there if it is not wanted");
    }
    StoreReason reason =
        failure.credentials() ? StoreReason.CredentialsError : StoreReason.OpenFGARequestFailed;
    String message =
        "could not delete "
            + where
            + ": "
            + failure.message()
            + "; trying again for "
            + GIVE_UP_DELETING.toMinutes()
            + " minutes after the deletion, then it is left in OpenFGA";
    return new StorePlan.Deletion(
        false,
        List.of(new Emit(reason, message, "delete")),
        Optional.of(
            new Note(
                true,
                Optional.empty(),
                "could not delete " + where + ": " + failure.message() + "; trying again")),
        Optional.of(StorePlanner.WAIT));
  }

  /** The store is left in OpenFGA, said so in a Warning Event; the FGAStore goes. */
  private static StorePlan kept(String message) {
    return end(
        List.of(new Emit(StoreReason.StoreNotDeleted, message, "delete")),
        new Note(true, Optional.empty(), message));
  }

  private static StorePlan end(List<Emit> events, Note note) {
    return new StorePlan.Deletion(true, events, Optional.ofNullable(note), Optional.empty());
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
        (o.getStatus() == null || ClaimRule.blank(o.getStatus().getStoreId()))
            && (o.getSpec() == null || ClaimRule.blank(o.getSpec().getStoreId()));
    return noId
        && o.getSpec() != null
        && deleted.getSpec() != null
        && o.getSpec().getName() != null
        && o.getSpec().getName().equals(deleted.getSpec().getName())
        && ClaimRule.server(o).equals(ClaimRule.server(deleted));
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
}
