package dev.openfga.operator.tuples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.Conditions;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** {@code openfga_operator_fgatuples{state}}: the controller's cache counted by conditions. */
class TuplesMetricsTest {
  private static final Instant NOW = Instant.parse("2025-01-01T00:00:00Z");

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final TuplesMetrics metrics = new TuplesMetrics(registry);
  private final List<FGATuples> cached = new ArrayList<>();

  @Test
  void everyStateCountsZeroUntilTheFirstReconcileGivesTheCache() {
    cached.add(tuples("a", true, true));

    assertThat(byState()).isEqualTo(Map.of("in_sync", 0, "not_in_sync", 0, "not_ready", 0));
    assertThat(registry.get(TuplesMetrics.NAME).gauge().getId().getDescription())
        .startsWith("FGATuples by state: in_sync (Ready and InSync), not_in_sync");
  }

  @Test
  void eachFGATuplesCountsInTheStateItsConditionsSay() {
    metrics.counting(cache());
    cached.add(tuples("synced", true, true));
    cached.add(tuples("conflict", true, false));
    cached.add(tuples("ready-only", true, null));
    cached.add(tuples("failing", false, true));
    cached.add(tuples("not-ready", false, null));
    FGATuples fresh = new FGATuples();
    fresh.setMetadata(new ObjectMetaBuilder().withName("fresh").withNamespace("ns").build());
    cached.add(fresh);

    // counted at each scrape: what the cache holds now
    assertThat(byState()).isEqualTo(Map.of("in_sync", 1, "not_in_sync", 2, "not_ready", 3));

    cached.remove(0);
    cached.add(tuples("synced-too", true, true));
    cached.add(tuples("synced-three", true, true));
    assertThat(byState()).isEqualTo(Map.of("in_sync", 2, "not_in_sync", 2, "not_ready", 3));
  }

  private Map<String, Integer> byState() {
    return registry.get(TuplesMetrics.NAME).gauges().stream()
        .collect(Collectors.toMap(g -> g.getId().getTag("state"), (Gauge g) -> (int) g.value()));
  }

  /** An FGATuples with {@code Ready} and (unless null) {@code InSync} as given. */
  private static FGATuples tuples(String name, boolean ready, Boolean inSync) {
    FGATuples t = new FGATuples();
    t.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("ns").build());
    FGATuples.Status status = new FGATuples.Status();
    Conditions.set(status, Conditions.READY, ready, "Reason", "message", NOW);
    if (inSync != null) {
      Conditions.set(status, Conditions.IN_SYNC, inSync, "Reason", "message", NOW);
    }
    t.setStatus(status);
    return t;
  }

  /** The controller's cache, as JOSDK's: the list it holds at the time it is asked. */
  private IndexedResourceCache<FGATuples> cache() {
    return new IndexedResourceCache<>() {
      @Override
      public List<FGATuples> byIndex(String indexName, String indexKey) {
        throw new UnsupportedOperationException();
      }

      @Override
      public Stream<FGATuples> list(String namespace, Predicate<FGATuples> predicate) {
        return list(predicate).filter(t -> namespace.equals(t.getMetadata().getNamespace()));
      }

      @Override
      public Optional<FGATuples> get(ResourceID id) {
        return cached.stream().filter(t -> ResourceID.fromResource(t).equals(id)).findFirst();
      }

      @Override
      public Stream<ResourceID> keys() {
        return cached.stream().map(ResourceID::fromResource);
      }

      @Override
      public Stream<FGATuples> list(Predicate<FGATuples> predicate) {
        return List.copyOf(cached).stream().filter(predicate);
      }
    };
  }
}
