package dev.openfga.operator;

import dev.openfga.operator.config.BindAddress;
import dev.openfga.operator.config.Environment;
import dev.openfga.operator.config.Flags;
import dev.openfga.operator.config.OperatorConfig;
import dev.openfga.operator.config.StartupConfig;
import dev.openfga.operator.kube.OperatorClient;
import dev.openfga.operator.ops.HealthServer;
import dev.openfga.operator.ops.Logging;
import dev.openfga.operator.ops.Metrics;
import dev.openfga.operator.ops.MetricsServer;
import dev.openfga.operator.status.StatusCommand;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.time.Clock;
import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Composition root: flags → logging → Kubernetes client → operator, health and metrics servers;
 * then waits until the process is asked to stop, and closes everything in reverse order. The {@code
 * status} subcommand ({@link StatusCommand}) only reads the cluster and exits.
 */
public final class Main {

  private static final Logger LOG = LoggerFactory.getLogger(Main.class);

  private Main() {}

  public static void main(String[] args) {
    int exitCode =
        Flags.commandLine(Environment.system(), Main::run)
            .addSubcommand(new StatusCommand())
            .execute(args);
    if (exitCode != 0) {
      System.exit(exitCode);
    }
  }

  /** Runs the operator until the JVM shuts down; returns the exit code. */
  private static void logStart(OperatorConfig config) {
    LOG.atInfo()
        .addKeyValue("version", Flags.version())
        .addKeyValue(
            "watchNamespaces",
            config.watchesAllNamespaces() ? "*" : String.join(",", config.watchNamespaces()))
        .addKeyValue("leaderElect", config.leaderElect())
        .addKeyValue("dryRun", config.dryRun())
        .log(
            config.dryRun()
                ? "Starting openfga-operator in dry-run mode: nothing is written"
                : "Starting openfga-operator");
  }

  /** /healthz and /readyz, and /metrics with the ready gauge, where the flags say. */
  private static void serveEndpoints(
      OperatorConfig config, Controllers operator, Metrics metrics, Deque<AutoCloseable> opened)
      throws IOException {
    if (metrics != null) {
      metrics.registerReady(operator::isReady);
    }
    if (config.healthAddress().isPresent()) {
      BindAddress address = BindAddress.parse(config.healthAddress().get());
      HealthServer health = HealthServer.start(address, operator::isHealthy, operator::isReady);
      opened.push(health);
      LOG.atInfo()
          .addKeyValue("address", address)
          .addKeyValue("port", health.port())
          .log("Serving /healthz and /readyz");
    }
    if (config.metricsAddress().isPresent()) {
      BindAddress address = BindAddress.parse(config.metricsAddress().get());
      MetricsServer metricsServer = MetricsServer.start(address, metrics.registry());
      opened.push(metricsServer);
      LOG.atInfo()
          .addKeyValue("address", address)
          .addKeyValue("port", metricsServer.port())
          .log("Serving /metrics");
    }
  }

  private static int run(StartupConfig startup) {
    Logging.configure(startup.logging());
    OperatorConfig config = startup.operator();
    logStart(config);
    Deque<AutoCloseable> opened = new ConcurrentLinkedDeque<>();
    CountDownLatch stopped = new CountDownLatch(1);
    Thread shutdown =
        new Thread(
            () -> {
              LOG.info("Stopping openfga-operator");
              closeAll(opened);
              stopped.countDown();
            },
            "shutdown");
    Runtime.getRuntime().addShutdownHook(shutdown);
    try {
      // with the endpoint off (--metrics-bind-address=0) no registry is made at all: the
      // Prometheus registry and the JVM meters are a few hundred classes nobody would read
      Metrics metrics = config.metricsAddress().isPresent() ? Metrics.create() : null;
      if (metrics != null) {
        opened.push(metrics);
      }
      KubernetesClient client = OperatorClient.create(Controllers.CUSTOM_KINDS);
      opened.push(client);
      Controllers operator =
          Controllers.create(
              client, config, Clock.systemUTC(), metrics == null ? null : metrics.registry());
      opened.push(operator);
      serveEndpoints(config, operator, metrics, opened);
      operator.start();
    } catch (IOException | RuntimeException e) {
      LOG.error("Failed to start", e);
      closeAll(opened);
      try {
        Runtime.getRuntime().removeShutdownHook(shutdown);
      } catch (IllegalStateException alreadyShuttingDown) {
        // the hook runs anyway and finds nothing left to close
      }
      return 1;
    }
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }

  /** Closes the most recently opened first; safe to call from two threads at once. */
  private static void closeAll(Deque<AutoCloseable> opened) {
    for (AutoCloseable resource = opened.poll(); resource != null; resource = opened.poll()) {
      try {
        resource.close();
      } catch (Exception e) {
        LOG.atWarn()
            .addKeyValue("resource", resource.getClass().getSimpleName())
            .setCause(e)
            .log("Failed to close");
      }
    }
  }
}
