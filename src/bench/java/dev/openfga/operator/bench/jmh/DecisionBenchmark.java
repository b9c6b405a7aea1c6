package dev.openfga.operator.bench.jmh;

import dev.openfga.operator.bench.Workload;
import dev.openfga.operator.migration.rules.DeploymentSettings;
import dev.openfga.operator.migration.rules.MigrationJob;
import dev.openfga.operator.migration.rules.Observation;
import dev.openfga.operator.migration.rules.Plan;
import dev.openfga.operator.migration.rules.Planner;
import dev.openfga.operator.migration.rules.Policy;
import dev.openfga.operator.migration.rules.StatusRecord;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.Optional;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What runs on every event of an opted-in Deployment: the pure decision for a converged Deployment
 * (the steady state: every status update and every resync), the decision when the image changed (it
 * builds the Job), and the Job builder alone. Run with {@code ./mvnw -B -q -Pbench verify} (JMH, 1
 * fork, 3×1 s warm-up, 5×1 s measurement; {@code -Djmh.args=...} to change).
 */
@State(Scope.Benchmark)
public class DecisionBenchmark {
  private Planner planner;
  private Observation converged;
  private Observation imageChanged;
  private Deployment deployment;
  private Container container;

  @Setup
  public void setUp() throws Exception {
    planner = new Planner(Policy.DEFAULTS);
    deployment = Workload.openfga(1);
    deployment.getMetadata().setUid("6b1f3c2e-8d7a-4f5e-9c0b-1a2b3c4d5e6f");
    deployment.getMetadata().setResourceVersion("4711");
    ConfigMap record =
        StatusRecord.build(
            deployment, StatusRecord.data("v1.8.0", Instant.parse("2025-11-01T10:00:00Z"), "x"));
    Instant now = Instant.parse("2025-11-02T10:00:00Z");
    converged = new Observation(deployment, Optional.of(record), Optional.empty(), now);
    Deployment changed = new DeploymentBuilder(deployment).build();
    changed.getSpec().getTemplate().getSpec().getContainers().get(0).setImage("openfga:v1.9.0");
    imageChanged = new Observation(changed, Optional.of(record), Optional.empty(), now);
    container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    check(planner.plan(converged).state() == Plan.State.UP_TO_DATE, "converged");
    check(planner.plan(imageChanged).state() == Plan.State.MIGRATING, "image changed");
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new IllegalStateException("unexpected plan for " + what);
    }
  }

  /** Every event of a converged Deployment: nothing to do. */
  @Benchmark
  public Plan planConverged() {
    return planner.plan(converged);
  }

  /** An image change: the plan creates the Job (includes the Job builder). */
  @Benchmark
  public Plan planImageChanged() {
    return planner.plan(imageChanged);
  }

  /**
   * The pure part of a reconcile of a converged Deployment: what else to read (nothing), then the
   * plan.
   */
  @Benchmark
  public Plan reconcileConverged() {
    if (planner.wantedJobDatabases(converged).isPresent()) {
      throw new IllegalStateException("a converged Deployment wants no Job");
    }
    return planner.plan(converged);
  }

  /**
   * The pure part of a reconcile after an image change: the databases of the wanted Job, whether it
   * is still created with their Jobs and pods (none here), then the plan that builds it.
   */
  @Benchmark
  public Plan reconcileImageChanged() {
    if (planner.wantedJobDatabases(imageChanged).isEmpty() || !planner.createsJob(imageChanged)) {
      throw new IllegalStateException("an image change creates a Job");
    }
    return planner.plan(imageChanged);
  }

  /** The Job builder alone. */
  @Benchmark
  public Job buildJob() {
    return MigrationJob.build(
        deployment,
        container,
        "v1.8.0",
        DeploymentSettings.of(deployment),
        Optional.empty(),
        Policy.DEFAULTS.jobSpec());
  }

  /** The annotations alone (parsed on every decision). */
  @Benchmark
  public DeploymentSettings settings() {
    return DeploymentSettings.of(deployment);
  }
}
