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

  @Override
  public void close() {
    gc.close();
    registry.close();
  }
}
