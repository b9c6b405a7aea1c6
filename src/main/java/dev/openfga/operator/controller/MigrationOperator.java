package dev.openfga.operator.controller;

import dev.openfga.operator.config.OperatorConfig;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;

/**
 * The running operator: JOSDK with the migration reconciler registered on opted-in Deployments.
 * (Being written; the signatures are stable.)
 */
public final class MigrationOperator implements AutoCloseable {

  private MigrationOperator() {}

  public static MigrationOperator create(
      KubernetesClient client, OperatorConfig config, Clock clock) {
    throw new UnsupportedOperationException("being written");
  }

  /** Starts informers (and leader election when enabled); returns without waiting. */
  public void start() {}

  /** True once every informer has synced (and, with leader election, also before leading). */
  public boolean isReady() {
    return false;
  }

  /** True while the operator's informers are healthy. */
  public boolean isHealthy() {
    return true;
  }

  @Override
  public void close() {}
}
