package dev.openfga.operator.ops;

import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * The operator's meter registry, in Prometheus form, with the JVM's own meters bound (class
 * loading, memory, threads, GC, processor, uptime). The operator's and the framework's meters are
 * registered on {@link #registry()} too.
 */
public final class Metrics implements AutoCloseable {

  private final PrometheusMeterRegistry registry;
  private final JvmGcMetrics gc;

  private Metrics(PrometheusMeterRegistry registry, JvmGcMetrics gc) {
    this.registry = registry;
    this.gc = gc;
  }

  /** A new registry with the JVM meters bound. */
  public static Metrics create() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    JvmGcMetrics gc = new JvmGcMetrics();
    gc.bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    return new Metrics(registry, gc);
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /**
   * {@code openfga_operator_ready}: 1 while {@code ready} says so (what /readyz answers), else 0;
   * for an alert on an operator that runs but is not ready.
   */
  public void registerReady(java.util.function.BooleanSupplier ready) {
    io.micrometer.core.instrument.Gauge.builder(
            "openfga.operator.ready", ready, r -> r.getAsBoolean() ? 1 : 0)
        .description("1 when every informer is synced and watching (as /readyz), else 0")
        .register(registry);
  }

  @Override
  public void close() {
    gc.close();
    registry.close();
  }
}
