package dev.openfga.operator.migration;

import dev.openfga.operator.migration.rules.Plan;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * The migration series on the metrics endpoint (Prometheus names below; Micrometer names use dots).
 * Labels are only {@code namespace} and {@code deployment} (bounded by the number of opted-in
 * Deployments), plus {@code state} and {@code kind} from small fixed sets: never versions or Job
 * names.
 *
 * <pre>
 * openfga_operator_migrations_started_total{namespace,deployment}
 * openfga_operator_migrations_succeeded_total{namespace,deployment}
 * openfga_operator_migrations_failed_total{namespace,deployment}
 * openfga_operator_migration_duration_seconds{namespace,deployment}  (histogram, Job start → end)
 * openfga_operator_collisions_total{namespace,deployment,kind}        (kind = job | configmap)
 * openfga_operator_job_rejections_total{namespace,deployment}         (Job creates refused)
 * openfga_operator_deployments{state}                                 (opted-in Deployments by state)
 * openfga_operator_deployments_waiting                                (waiting for a migration)
 * openfga_operator_retry_wait_seconds{namespace,deployment}           (until the next Job)
 * openfga_operator_last_success_timestamp_seconds{namespace,deployment}
 * </pre>
 */
public final class MigrationMetrics {
  static final String PREFIX = "openfga.operator.";

  /** Where each Deployment stands, and when its next attempt is due. */
  private record Standing(Plan.State state, Optional<Instant> retryAt) {}

  private final MeterRegistry registry;
  private final Map<ResourceID, Standing> standings = new ConcurrentHashMap<>();
  private final Map<ResourceID, Instant> lastSuccess = new ConcurrentHashMap<>();
  private final Map<ResourceID, List<Meter>> gauges = new ConcurrentHashMap<>();

  /** The time of a scrape: the retry gauge counts down between reconciles. */
  private final java.time.Clock clock;

  public MigrationMetrics(MeterRegistry registry, java.time.Clock clock) {
    this.registry = registry;
    this.clock = clock;
    for (Plan.State state : Plan.State.values()) {
      if (state != Plan.State.IGNORED) {
        Gauge.builder(PREFIX + "deployments", this, m -> m.count(s -> s.state() == state))
            .description("Opted-in OpenFGA Deployments by migration state")
            .tag("state", state.name().toLowerCase(java.util.Locale.ROOT))
            .register(registry);
      }
    }
    Gauge.builder(PREFIX + "deployments.waiting", this, m -> m.count(MigrationMetrics::waiting))
        .description("Deployments whose database is not yet at the version they run")
        .register(registry);
  }

  /**
   * Metrics into nowhere (the endpoint is off, tests, the demo): every meter is denied, so none is
   * kept.
   */
  public static MigrationMetrics none() {
    SimpleMeterRegistry nowhere = new SimpleMeterRegistry();
    nowhere.config().meterFilter(MeterFilter.deny());
    return new MigrationMetrics(nowhere, java.time.Clock.systemUTC());
  }

  private static boolean waiting(Standing s) {
    return s.state() == Plan.State.MIGRATING
        || s.state() == Plan.State.FAILED
        || s.state() == Plan.State.COOLDOWN
        || s.state() == Plan.State.WAITING;
  }

  private double count(Predicate<Standing> which) {
    return standings.values().stream().filter(which).count();
  }

  void started(Deployment d) {
    counter("migrations.started", "Migration Jobs created", d).increment();
  }

  void succeeded(Deployment d, Optional<Duration> took, Instant at) {
    counter("migrations.succeeded", "Migrations recorded as successful", d).increment();
    took.ifPresent(
        t ->
            DistributionSummary.builder(PREFIX + "migration.duration")
                .description("Migration Job run time, from its start to its completion")
                .baseUnit("seconds")
                .serviceLevelObjectives(1, 5, 10, 30, 60, 120, 300, 600, 1800)
                .tags(tags(d))
                .register(registry)
                .record(t.toMillis() / 1000.0));
    lastSuccess.put(ResourceID.fromResource(d), at);
  }

  void failed(Deployment d) {
    counter("migrations.failed", "Migration Jobs that failed", d).increment();
  }

  void collision(Deployment d, String kind) {
    Counter.builder(PREFIX + "collisions")
        .description("Objects the operator does not own found in its way")
        .tags(tags(d).and("kind", kind))
        .register(registry)
        .increment();
  }

  /** A Job create the API server refused (once per refusal, as its Warning Event). */
  void rejected(Deployment d) {
    counter("job.rejections", "Migration Job creates the API server refused", d).increment();
  }

  /**
   * After each reconcile: where the Deployment stands now, and when its next Job is created (FAILED
   * and COOLDOWN).
   */
  void standing(Deployment d, Plan.State state, Optional<Instant> retryAt) {
    ResourceID id = ResourceID.fromResource(d);
    if (state == Plan.State.IGNORED) {
      forget(id);
      return;
    }
    standings.put(id, new Standing(state, retryAt));
    gauges.computeIfAbsent(id, k -> registerPerDeployment(d, k));
  }

  /** The Deployment is gone (or no longer opted in): its series go too. */
  void forget(ResourceID id) {
    standings.remove(id);
    lastSuccess.remove(id);
    List<Meter> meters = gauges.remove(id);
    if (meters != null) {
      meters.forEach(registry::remove);
    }
  }

  /** Deployments that have series. */
  Iterable<ResourceID> known() {
    return new ArrayList<>(standings.keySet());
  }

  private List<Meter> registerPerDeployment(Deployment d, ResourceID id) {
    List<Meter> meters = new ArrayList<>();
    meters.add(
        Gauge.builder(
                PREFIX + "retry.wait",
                this,
                m -> {
                  Standing s = m.standings.get(id);
                  if (s == null || s.retryAt().isEmpty()) {
                    return 0;
                  }
                  return Math.max(
                      0, Duration.between(m.clock.instant(), s.retryAt().get()).toSeconds());
                })
            .description(
                "Seconds until the next migration Job after a failure is created (0: none due)")
            .baseUnit("seconds")
            .tags(tags(d))
            .register(registry));
    meters.add(
        Gauge.builder(
                PREFIX + "last.success.timestamp",
                this,
                m -> {
                  Instant t = m.lastSuccess.get(id);
                  return t == null ? Double.NaN : t.getEpochSecond();
                })
            .description("When this operator last recorded a successful migration (Unix time)")
            .baseUnit("seconds")
            .tags(tags(d))
            .register(registry));
    return meters;
  }

  private Counter counter(String name, String description, Deployment d) {
    return Counter.builder(PREFIX + name).description(description).tags(tags(d)).register(registry);
  }

  private static Tags tags(Deployment d) {
    return Tags.of(
        "namespace", d.getMetadata().getNamespace(), "deployment", d.getMetadata().getName());
  }
}
