package dev.openfga.operator.stores;

/**
 * A call an FGAStore's plan asks for ({@link StorePlan.Call}). Each is answered by a {@link
 * StoreAnswer}, which joins the observation before the planner decides again; one that fails is
 * answered by {@link StoreAnswer.Failed}.
 */
public sealed interface StoreStep {
  /**
   * Read the Deployment {@code openfgaRef.deploymentRef} names (by a list: the operator's Role
   * lists Deployments, it does not get them) and the operator's migration record of it.
   */
  record ReadMigration(String deployment) implements StoreStep {}

  /** Read the credentials Secret and make the API client for the server the calls below use. */
  record Connect() implements StoreStep {}

  /** Look the store up by its id. */
  record LookUp(String storeId) implements StoreStep {}

  /**
   * Take the lock of the store name, held to the end of the reconcile (one look-up and create of a
   * name at a time in the process: two FGAStores naming one store make one), then list the stores
   * that have it. A name whose lock another reconcile holds is answered at once, without waiting.
   */
  record LookUpByName(String name) implements StoreStep {}

  /**
   * Record that the FGAStore stands for the store ({@link Claims}), unless an FGAStore of another
   * namespace comes first for it: checked and recorded in one step.
   */
  record Claim(String storeId) implements StoreStep {}

  /**
   * Write the status with the intent to create ({@code status.creating}) before creating, guarded
   * by the resourceVersion the reconcile read.
   */
  record RecordIntent(FGAStore.Status status) implements StoreStep {}

  /** Create the store. */
  record Create(String name) implements StoreStep {}

  /**
   * Delete the store (the FGAStore is being deleted), with the credentials last read when its
   * Secret is gone.
   */
  record Delete(String storeId) implements StoreStep {}
}
