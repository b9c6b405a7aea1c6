package dev.openfga.operator.tuples;

/**
 * The reasons of an FGATuples' conditions {@code Ready} and {@code InSync} and of the Events on it
 * (the strings are a public contract: docs/stores-and-models.md, docs/crd-reference.md). A reason
 * of a condition that is not a Warning is never an Event; one that is not of a condition is an
 * Event only. No message of any of them carries a condition's context (SPEC §10).
 */
public enum TuplesReason {
  /** Ready=True: every declared tuple is valid for the model and was written or found. No Event. */
  TuplesReady(true, false),
  /** Normal Event: tuples were created and/or deleted (the counts). */
  TuplesWritten(false, false),
  /** Warning Event: tuples this FGATuples wrote were deleted out of band and are written again. */
  TuplesRestored(false, true),
  /** Normal Event: declared tuples were already in the store; they stay the application's own. */
  TuplesAlreadyPresent(false, false),
  /** Normal Event: the ownership record of an earlier FGATuples of this name is used again. */
  TuplesRecordAdopted(false, false),
  /**
   * Warning Event: the status says tuples were written, but the ownership record is gone: they are
   * no longer known as this FGATuples' own, and removing them from it leaves them in the store.
   */
  TuplesRecordMissing(false, true),
  /** Warning Event: the record names another store: it is started afresh for this one. */
  TuplesRecordForAnotherStore(false, true),
  /**
   * Normal Event: deleting the FGATuples (deletionPolicy Delete) left tuples it created that
   * another FGATuples still declares; that one's record lists them now, and it deletes them once it
   * no longer declares them.
   */
  TuplesHandedOver(false, false),
  /** Warning Event: deleting the FGATuples (deletionPolicy Delete) could not delete its tuples. */
  TuplesNotDeleted(false, true),
  /** Warning Event: OpenFGA refused a Write of the configured size: the batch is halved. */
  BatchSizeReduced(false, true),
  /** Ready=False, no Event: the FGAStore is not ready (it says why) or not usable from here. */
  StoreNotReady(true, false),
  /**
   * Ready=False, no Event: the FGAModel of spec.modelRef has no published model yet, or the store
   * has no model.
   */
  WaitingForModel(true, false),
  /** Ready=False, Warning: the ConfigMap or key of spec.tuplesFrom does not exist. */
  SourceNotFound(true, true),
  /** Ready=False, Warning: the declared tuples do not read (a field missing, a duplicate). */
  InvalidSource(true, true),
  /**
   * Ready=False, Warning: tuples the model does not allow (named); nothing is written until they
   * are fixed.
   */
  InvalidTuples(true, true),
  /** Ready=False, Warning: more tuples than one FGATuples may hold, or a record over 1 MiB. */
  TooManyTuples(true, true),
  /** Ready=False, Warning: a ConfigMap of the record's name is not this FGATuples' record. */
  RecordConflict(true, true),
  /** Ready=False, Warning: the credentials Secret is missing, unusable, or not for this server. */
  CredentialsError(true, true),
  /** Ready=False, Warning: OpenFGA answered an error or could not be reached, after retries. */
  OpenFGARequestFailed(true, true),
  /**
   * InSync=False, Warning: declared tuples are not in the store and could not be written (the Ready
   * condition says why).
   */
  TuplesMissing(true, true),
  /** InSync=True: at the last look every declared tuple was in the store. No Event. */
  TuplesInSync(true, false),
  /**
   * InSync=False, Warning: a declared tuple is in the store with another condition (or context) and
   * is not this FGATuples' own: it is left as it is.
   */
  ConditionConflict(true, true);

  private final boolean condition;
  private final boolean warning;

  TuplesReason(boolean condition, boolean warning) {
    this.condition = condition;
    this.warning = warning;
  }

  /** Whether it is a reason of the condition {@code Ready} or {@code InSync} (else an Event's). */
  public boolean condition() {
    return condition;
  }

  /** Whether its Event is a Warning (else Normal, or none for a reason of a condition). */
  public boolean warning() {
    return warning;
  }
}
