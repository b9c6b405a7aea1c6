package dev.openfga.operator.tuples;

import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.ops.StateGauges;
import io.fabric8.kubernetes.api.model.Condition;
import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Optional;

/**
 * The FGATuples series on the metrics endpoint (Prometheus name; Micrometer's uses dots):
 *
 * <pre>
 * openfga_operator_fgatuples{state}   (FGATuples by state: in_sync, not_in_sync, not_ready)
 * </pre>
 *
 * Counted at each scrape from the controller's cache of FGATuples, by their status conditions as
 * written: a deleted FGATuples is gone from the count at once. Until the controller's first
 * reconcile (and on a standby under leader election) every state counts 0.
 */
public final class TuplesMetrics {
  static final String NAME = "openfga.operator.fgatuples";

  /** Where an FGATuples stands, by its conditions. */
  enum State {
    /** {@code Ready=True} and {@code InSync=True}: every declared tuple was in the store. */
    IN_SYNC,
    /**
     * {@code Ready=True} but {@code InSync} not True: a declared tuple is in the store with another
     * condition, written by someone else ({@code ConditionConflict}), or missing from it.
     */
    NOT_IN_SYNC,
    /** {@code Ready} not True (yet): its tuples are not (all) written for its spec as it is. */
    NOT_READY
  }

  private final StateGauges<FGATuples, State> gauges;

  public TuplesMetrics(MeterRegistry registry) {
    gauges =
        new StateGauges<>(
            registry,
            NAME,
            "FGATuples by state: in_sync (Ready and InSync), not_in_sync (Ready, a declared tuple"
                + " is missing from the store or there with another condition), not_ready",
            State.class,
            TuplesMetrics::state);
  }

  /** Metrics into nowhere (the endpoint is off, tests): every meter is denied. */
  public static TuplesMetrics none() {
    return new TuplesMetrics(StateGauges.nowhere());
  }

  /** The controller's cache of FGATuples, which the gauges count (the same at every reconcile). */
  void counting(IndexedResourceCache<FGATuples> tuples) {
    gauges.counting(tuples);
  }

  static State state(FGATuples tuples) {
    List<Condition> conditions =
        Optional.ofNullable(tuples.getStatus())
            .map(FGATuples.Status::getConditions)
            .orElse(List.of());
    if (!Conditions.isTrue(conditions, Conditions.READY)) {
      return State.NOT_READY;
    }
    return Conditions.isTrue(conditions, Conditions.IN_SYNC) ? State.IN_SYNC : State.NOT_IN_SYNC;
  }
}
