package dev.openfga.operator.models;

import dev.openfga.operator.kube.Conditions;
import io.fabric8.kubernetes.api.model.Condition;
import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Locale;

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

  private volatile IndexedResourceCache<FGAModel> cache;

  public ModelMetrics(MeterRegistry registry) {
    for (State state : State.values()) {
      Gauge.builder(NAME, this, m -> m.count(state))
          .description(
              "FGAModels by state: in_sync (Ready and InSync), newer_model_in_store (Ready, a"
                  + " model written by someone else is the store's newest), not_ready")
          .tag("state", state.name().toLowerCase(Locale.ROOT))
          .register(registry);
    }
  }

  /** Metrics into nowhere (the endpoint is off, tests): every meter is denied. */
  public static ModelMetrics none() {
    SimpleMeterRegistry nowhere = new SimpleMeterRegistry();
    nowhere.config().meterFilter(MeterFilter.deny());
    return new ModelMetrics(nowhere);
  }

  /** The controller's cache of FGAModels, which the gauges count (the same at every reconcile). */
  void counting(IndexedResourceCache<FGAModel> models) {
    cache = models;
  }

  private double count(State state) {
    IndexedResourceCache<FGAModel> models = cache;
    return models == null ? 0 : models.list().filter(m -> state(m) == state).count();
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
