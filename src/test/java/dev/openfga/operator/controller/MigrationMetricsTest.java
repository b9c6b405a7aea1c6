package dev.openfga.operator.controller;

import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.model.Plan;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class MigrationMetricsTest {
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final MigrationMetrics metrics = new MigrationMetrics(registry);

  private Deployment deployment(String name) {
    Deployment d = openfga().name(name).build();
    d.getMetadata().setUid("uid-" + name);
    return d;
  }

  @Test
  void countsDeploymentsByStateAndTheSecondsUntilTheirRetry() {
    metrics.standing(deployment("a"), Plan.State.UP_TO_DATE, Optional.empty(), NOW);
    metrics.standing(deployment("b"), Plan.State.FAILED, Optional.of(NOW.plusSeconds(42)), NOW);

    assertThat(
            registry.get("openfga.operator.deployments").tag("state", "up_to_date").gauge().value())
        .isEqualTo(1);
    assertThat(registry.get("openfga.operator.deployments.waiting").gauge().value()).isEqualTo(1);
    assertThat(registry.get("openfga.operator.retry.wait").tag("deployment", "b").gauge().value())
        .isEqualTo(42);
  }

  @Test
  void aDeploymentThatIsGoneOrNoLongerOptedInLosesItsSeries() {
    Deployment a = deployment("a");
    metrics.standing(a, Plan.State.FAILED, Optional.of(NOW.plusSeconds(42)), NOW);
    metrics.standing(deployment("b"), Plan.State.MIGRATING, Optional.empty(), NOW);

    metrics.forget(ResourceID.fromResource(a));
    metrics.standing(deployment("b"), Plan.State.IGNORED, Optional.empty(), NOW);

    assertThat(registry.find("openfga.operator.retry.wait").gauges()).isEmpty();
    assertThat(registry.get("openfga.operator.deployments.waiting").gauge().value()).isZero();
    assertThat(metrics.known()).isEmpty();
  }
}
