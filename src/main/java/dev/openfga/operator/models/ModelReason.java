package dev.openfga.operator.models;

/**
 * The reasons of an FGAModel's conditions {@code Ready} and {@code InSync} and of the Events on it
 * (the strings are a public contract: docs/stores-and-models.md, the CRD's description of {@code
 * reason}). A reason of a condition that is not a Warning is never an Event; one that is not of a
 * condition is an Event only.
 */
public enum ModelReason {
  /** Ready=True: the model is written to the store, tested and published. No Event. */
  ModelReady(true, false),
  /** Normal Event: the model was written to the store (a new model id). */
  ModelWritten(false, false),
  /** Normal Event: a model of the same content already in the store is used; nothing written. */
  ModelAdopted(false, false),
  /** Normal Event: a model id of the status's history is used again; nothing written. */
  ModelReverted(false, false),
  /** Ready=False, no Event: the FGAStore is not ready (it says why) or not usable from here. */
  StoreNotReady(true, false),
  /** Ready=False, Warning: the model or its tests cannot be read, or OpenFGA refused the model. */
  InvalidModel(true, true),
  /** Ready=False, Warning: an assertion of the tests failed; the model id published stays. */
  TestsFailed(true, true),
  /** Ready=False, Warning: a ConfigMap of {@code publish.configMapName} is not this FGAModel's. */
  PublishConflict(true, true),
  /** Ready=False, Warning: the API server refused the ConfigMap or a Deployment's patch. */
  PublishFailed(true, true),
  /** Ready=False, Warning: the credentials Secret is missing, unusable, or not for this server. */
  CredentialsError(true, true),
  /** Ready=False, Warning: OpenFGA answered an error or could not be reached, after retries. */
  OpenFGARequestFailed(true, true),
  /** InSync=True: the store's newest model is the one this FGAModel stands for. No Event. */
  ModelInSync(true, false),
  /** InSync=False, Warning: a newer model that this FGAModel did not write is in the store. */
  NewerModelInStore(true, true);

  private final boolean condition;
  private final boolean warning;

  ModelReason(boolean condition, boolean warning) {
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
