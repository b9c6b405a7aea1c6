package dev.openfga.operator.migration;

import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class MigrationMetricsTest {
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final MigrationMetrics metrics =
      new MigrationMetrics(registry, java.time.Clock.fixed(NOW, java.time.ZoneOffset.UTC));

  private Deployment deployment(String name) {
    Deployment d = openfga().name(name).build();
    d.getMetadata().setUid("uid-" + name);
    return d;
  }

  @Test
  void countsDeploymentsByStateAndTheSecondsUntilTheirRetry() {
    metrics.standing(deployment("a"), Plan.State.UP_TO_DATE, Optional.empty());
    metrics.standing(deployment("b"), Plan.State.FAILED, Optional.of(NOW.plusSeconds(42)));

    assertThat(
            registry.get("openfga.operator.deployments").tag("state", "up_to_date").gauge().value())
        .isEqualTo(1);
    assertThat(registry.get("openfga.operator.deployments.waiting").gauge().value()).isEqualTo(1);
    assertThat(registry.get("openfga.operator.retry.wait").tag("deployment", "b").gauge().value())
        .isEqualTo(42);
  }

  @Test
  void theSecondsUntilTheRetryCountDownBetweenReconciles() {
    var clock = new java.util.concurrent.atomic.AtomicReference<>(NOW);
    MigrationMetrics ticking =
        new MigrationMetrics(
            registry,
            new java.time.Clock() {
              @Override
              public java.time.ZoneId getZone() {
                return java.time.ZoneOffset.UTC;
              }

              @Override
              public java.time.Clock withZone(java.time.ZoneId zone) {
                return this;
              }

              @Override
              public Instant instant() {
                return clock.get();
              }
            });
    ticking.standing(deployment("c"), Plan.State.FAILED, Optional.of(NOW.plusSeconds(300)));

    clock.set(NOW.plusSeconds(200));
    assertThat(registry.get("openfga.operator.retry.wait").tag("deployment", "c").gauge().value())
        .isEqualTo(100);
    clock.set(NOW.plusSeconds(400));
    assertThat(registry.get("openfga.operator.retry.wait").tag("deployment", "c").gauge().value())
        .isZero();
  }

  @Test
  void aDeploymentThatIsGoneOrNoLongerOptedInLosesItsSeries() {
    Deployment a = deployment("a");
    metrics.standing(a, Plan.State.FAILED, Optional.of(NOW.plusSeconds(42)));
    metrics.standing(deployment("b"), Plan.State.MIGRATING, Optional.empty());

    metrics.forget(ResourceID.fromResource(a));
    metrics.standing(deployment("b"), Plan.State.IGNORED, Optional.empty());

    assertThat(registry.find("openfga.operator.retry.wait").gauges()).isEmpty();
    assertThat(registry.get("openfga.operator.deployments.waiting").gauge().value()).isZero();
    assertThat(metrics.known()).isEmpty();
  }
}
