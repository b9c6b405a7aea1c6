package dev.openfga.operator.stores;

import dev.openfga.operator.openfga.CallFailure;
import dev.openfga.operator.openfga.Store;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.Optional;

/** What a {@link StoreStep} found or did. */
public sealed interface StoreAnswer {
  /** {@link StoreStep.ReadMigration}: the Deployment, if it exists, and its record, if any. */
  record Migration(Optional<Deployment> deployment, Optional<ConfigMap> record)
      implements StoreAnswer {}

  /** {@link StoreStep.Connect}: the credentials were read and may go to the server. */
  record Connected() implements StoreAnswer {}

  /** {@link StoreStep.LookUp}: the store, or empty when the server does not know the id. */
  record Found(Optional<Store> store) implements StoreAnswer {}

  /** {@link StoreStep.LookUpByName}: the stores that have the name. */
  record Named(List<Store> stores) implements StoreAnswer {}

  /** {@link StoreStep.LookUpByName}: another reconcile holds the name's lock; nothing was read. */
  record NameBusy() implements StoreAnswer {}

  /** {@link StoreStep.Claim}: recorded, or refused (another namespace's FGAStore comes first). */
  record Claimed(Optional<StoreChoice.Blocked> refused) implements StoreAnswer {}

  /** {@link StoreStep.RecordIntent}: the FGAStore as written, with the intent. */
  record IntentRecorded(FGAStore store) implements StoreAnswer {}

  /** {@link StoreStep.RecordIntent}: the FGAStore changed since it was read; nothing written. */
  record IntentConflict() implements StoreAnswer {}

  /** {@link StoreStep.Create}: the store created. */
  record Created(Store store) implements StoreAnswer {}

  /** {@link StoreStep.Delete}: the store is gone (deleted now, or already). */
  record Deleted() implements StoreAnswer {}

  /** A call to OpenFGA (or for its credentials) failed. */
  record Failed(CallFailure failure) implements StoreAnswer {}
}
