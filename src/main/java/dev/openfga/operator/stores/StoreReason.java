package dev.openfga.operator.stores;

/**
 * The reasons of an FGAStore's condition {@code Ready} and of the Events on it (the strings are a
 * public contract: docs/stores-and-models.md, the CRD's description of {@code reason}). A reason of
 * the condition that is not a Warning is never an Event; one that is not of the condition is an
 * Event only.
 */
public enum StoreReason {
  /** Ready=True: the store exists and is this resource's; the message names it. No Event. */
  StoreReady(true, false),
  /** Normal Event: the operator created the store. */
  StoreCreated(false, false),
  /** Normal Event: a store that existed is this resource's now (not created by the operator). */
  StoreAdopted(false, false),
  /** Ready=False, Warning: the known store is gone from OpenFGA; it is never re-created. */
  StoreMissing(true, true),
  /** Ready=False, Warning: several stores have the name; nothing is created. */
  AmbiguousStoreName(true, true),
  /** Ready=False, Warning: the store of {@code spec.storeId} has another name. */
  StoreNameMismatch(true, true),
  /** Ready=False, no Event: the database of {@code deploymentRef} is not usable yet. */
  WaitingForMigration(true, false),
  /** Ready=False, Warning: a spec the schema cannot refuse (no name, a reserved one, a bad URL). */
  InvalidSpec(true, true),
  /** Ready=False, Warning: OpenFGA answered an error or could not be reached, after retries. */
  OpenFGARequestFailed(true, true),
  /** Ready=False, Warning: the credentials Secret is missing, unusable, or not for this server. */
  CredentialsError(true, true),
  /** Warning Event at the deletion: the store is left in OpenFGA; the message says why. */
  StoreNotDeleted(false, true),
  /** Ready=False, Warning: the URL is not one of the installer's servers; nothing is sent. */
  ServerNotAllowed(true, true),
  /** Ready=False, Warning: an FGAStore of another namespace comes first for the store. */
  StoreClaimedElsewhere(true, true);

  private final boolean condition;
  private final boolean warning;

  StoreReason(boolean condition, boolean warning) {
    this.condition = condition;
    this.warning = warning;
  }

  /** Whether it is a reason of the condition {@code Ready} (else of an Event only). */
  public boolean condition() {
    return condition;
  }

  /** Whether its Event is a Warning (else Normal, or none for a reason of the condition). */
  public boolean warning() {
    return warning;
  }
}
