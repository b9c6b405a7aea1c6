package dev.openfga.operator.stores;

import dev.openfga.operator.openfga.Store;
import java.util.Optional;

/** Which store an FGAStore stands for, from what the OpenFGA API said ({@link StorePlanner}). */
public sealed interface StoreChoice {
  /**
   * The store exists and is this resource's: record it. {@code event} is the reason of the Event to
   * emit ({@link StoreReason#StoreAdopted}, {@link StoreReason#StoreCreated}) or empty when nothing
   * changed.
   */
  record Use(Store store, boolean createdByOperator, Optional<StoreReason> event)
      implements StoreChoice {}

  /** No store has the name: create it. */
  record Create(String name) implements StoreChoice {}

  /**
   * Nothing can be done: {@code Ready=False} with this reason; a Warning Event too when the reason
   * is one.
   */
  record Blocked(StoreReason reason, String message) implements StoreChoice {}
}
