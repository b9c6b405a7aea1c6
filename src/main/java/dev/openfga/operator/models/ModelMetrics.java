package dev.openfga.operator.models;

import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.ops.StateGauges;
import io.fabric8.kubernetes.api.model.Condition;
import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;

/**
 * The FGAModel series on the metrics endpoint (Prometheus name; Micrometer's uses dots):
 *
 * <pre>
 * openfga_operator_fgamodels{state}   (FGAModels by state: in_sync, newer_model_in_store, not_ready)
 * </pre>
 *
 * Counted at each scrape from the controller's cache of FGAModels, by their status conditions as
 * written: a deleted FGAModel is gone from the count at once. Until the controller's first
 * reconcile (and on a standby under leader election) every state counts 0.
 */
public final class ModelMetrics {
  static final String NAME = "openfga.operator.fgamodels";

  /** Where an FGAModel stands, by its conditions. */
  enum State {
    /** {@code Ready=True} and {@code InSync=True}: its model is written, published, the newest. */
    IN_SYNC,
    /** {@code Ready=True} but {@code InSync=False}: someone else wrote a newer model. */
    NEWER_MODEL_IN_STORE,
    /** {@code Ready} not True (yet): nothing written or published for its spec as it is. */
    NOT_READY
  }

  private final StateGauges<FGAModel, State> gauges;

  public ModelMetrics(MeterRegistry registry) {
    gauges =
        new StateGauges<>(
            registry,
            NAME,
            "FGAModels by state: in_sync (Ready and InSync), newer_model_in_store (Ready, a"
                + " model written by someone else is the store's newest), not_ready",
            State.class,
            ModelMetrics::state);
  }

  /** Metrics into nowhere (the endpoint is off, tests): every meter is denied. */
  public static ModelMetrics none() {
    return new ModelMetrics(StateGauges.nowhere());
  }

  /** The controller's cache of FGAModels, which the gauges count (the same at every reconcile). */
  void counting(IndexedResourceCache<FGAModel> models) {
    gauges.counting(models);
  }

  static State state(FGAModel model) {
    List<Condition> conditions =
        model.getStatus() == null ? List.of() : model.getStatus().getConditions();
    if (!Conditions.isTrue(conditions, Conditions.READY)) {
      return State.NOT_READY;
    }
    return Conditions.isTrue(conditions, Conditions.IN_SYNC)
        ? State.IN_SYNC
        : State.NEWER_MODEL_IN_STORE;
  }
}
