package dev.openfga.operator.ops;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Locale;
import java.util.function.Function;

/**
 * One gauge {@code name{state}} per constant of {@code S} (the tag its name in lower case), counted
 * at each scrape from a controller's cache of {@code R}, each resource in the state {@code stateOf}
 * gives it: a deleted resource is gone from the count at once. Until {@link #counting} is given the
 * cache (the controller's first reconcile; never on a standby under leader election) every state
 * counts 0.
 */
public final class StateGauges<R extends HasMetadata, S extends Enum<S>> {
  private final Function<R, S> stateOf;
  private volatile IndexedResourceCache<R> cache;

  public StateGauges(
      MeterRegistry registry,
      String name,
      String description,
      Class<S> states,
      Function<R, S> stateOf) {
    this.stateOf = stateOf;
    for (S state : states.getEnumConstants()) {
      Gauge.builder(name, this, g -> g.count(state))
          .description(description)
          .tag("state", state.name().toLowerCase(Locale.ROOT))
          .register(registry);
    }
  }

  /** A registry into nowhere (the endpoint is off, tests): every meter is denied. */
  public static MeterRegistry nowhere() {
    SimpleMeterRegistry nowhere = new SimpleMeterRegistry();
    nowhere.config().meterFilter(MeterFilter.deny());
    return nowhere;
  }

  /** The controller's cache, which the gauges count (the same at every reconcile). */
  public void counting(IndexedResourceCache<R> resources) {
    cache = resources;
  }

  private double count(S state) {
    IndexedResourceCache<R> resources = cache;
    return resources == null ? 0 : resources.list().filter(r -> stateOf.apply(r) == state).count();
  }
}
