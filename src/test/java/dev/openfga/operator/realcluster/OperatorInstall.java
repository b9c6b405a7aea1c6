package dev.openfga.operator.realcluster;

import dev.openfga.operator.chart.OperatorChart;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The operator installed as {@code charts/openfga-operator} installs it — its ServiceAccount,
 * Role(s) and bindings rendered by Helm and applied to the real API server — and started as a
 * separate process: the packaged jar, with the chart's own arguments and environment, and a
 * kubeconfig holding a token of the chart's ServiceAccount. So the API server enforces the chart's
 * RBAC on every call the operator makes.
 */
final class OperatorInstall {
  /** Where failsafe says the packaged jar is; {@code target/} otherwise. */
  private static final Path JAR =
      Path.of(System.getProperty("operator.jar", "target/openfga-operator-all.jar"))
          .toAbsolutePath();

  private final ControlPlane plane;
  private final String operatorNamespace;
  private final List<String> args;
  private final Map<String, String> env;
  private final Path kubeconfig;
  private final String serviceAccount;
  private final String token;

  private OperatorInstall(
      ControlPlane plane,
      String operatorNamespace,
      List<String> args,
      Map<String, String> env,
      Path kubeconfig,
      String serviceAccount,
      String token) {
    this.serviceAccount = serviceAccount;
    this.plane = plane;
    this.operatorNamespace = operatorNamespace;
    this.args = args;
    this.env = env;
    this.kubeconfig = kubeconfig;
    this.token = token;
  }

  /**
   * Renders the chart (release {@code openfga-operator} in {@code operatorNamespace}) watching
   * {@code watchNamespace}, with {@code valuesYaml} on top, and applies its RBAC objects.
   */
  static OperatorInstall apply(
      ControlPlane plane, String operatorNamespace, String watchNamespace, String valuesYaml) {
    OperatorChart.Manifests chart =
        OperatorChart.chart()
            .namespace(operatorNamespace)
            .values("watchNamespace: " + watchNamespace + "\n" + valuesYaml)
            .render();
    KubernetesClient admin = plane.admin();
    // the chart's CRDs (with storesAndModels.enabled), established before the operator starts
    for (CustomResourceDefinition crd : chart.all(CustomResourceDefinition.class)) {
      admin.resource(crd).forceConflicts().serverSideApply();
      admin
          .apiextensions()
          .v1()
          .customResourceDefinitions()
          .withName(crd.getMetadata().getName())
          .waitUntilCondition(
              c ->
                  c.getStatus() != null
                      && c.getStatus().getConditions() != null
                      && c.getStatus().getConditions().stream()
                          .anyMatch(
                              k ->
                                  "Established".equals(k.getType())
                                      && "True".equals(k.getStatus())),
              1,
              java.util.concurrent.TimeUnit.MINUTES);
    }
    List<HasMetadata> rbac = new ArrayList<>();
    rbac.addAll(chart.all(ServiceAccount.class));
    rbac.addAll(chart.all(Role.class));
    rbac.addAll(chart.all(RoleBinding.class));
    rbac.addAll(chart.all(ClusterRole.class));
    rbac.addAll(chart.all(ClusterRoleBinding.class));
    for (HasMetadata object : rbac) {
      admin.resource(object).serverSideApply();
    }
    ServiceAccount account = chart.one(ServiceAccount.class);
    String token =
        admin
            .serviceAccounts()
            .inNamespace(account.getMetadata().getNamespace())
            .withName(account.getMetadata().getName())
            .tokenRequest(
                new TokenRequestBuilder()
                    .withNewSpec()
                    .withExpirationSeconds(6 * 3600L)
                    .endSpec()
                    .build())
            .getStatus()
            .getToken();
    Path kubeconfig =
        plane.kubeconfig(operatorNamespace + "-" + account.getMetadata().getName(), token);
    return new OperatorInstall(
        plane,
        operatorNamespace,
        chart.args(),
        chart.env(operatorNamespace, "pod"),
        kubeconfig,
        account.getMetadata().getName(),
        token);
  }

  /**
   * Runs {@code openfga-operator status} (the packaged jar) with a person's kubeconfig; returns
   * what it printed.
   */
  static String status(ControlPlane plane, String... args) {
    return status(plane, plane.adminKubeconfig(), args);
  }

  /**
   * Runs {@code openfga-operator status} with the operator's own credentials (the chart's
   * ServiceAccount and RBAC), as the kubectl plugin's pod does; returns what it printed.
   */
  String statusAsOperator(String... args) {
    return status(plane, kubeconfig, args);
  }

  private static String status(ControlPlane plane, Path kubeconfig, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(List.of("-XX:TieredStopAtLevel=1", "-jar", JAR.toString(), "status"));
    command.addAll(List.of(args));
    return ChildProcess.run(
        Duration.ofMinutes(1), plane.dir(), command, Map.of("KUBECONFIG", kubeconfig.toString()));
  }

  /** A client with the operator's own credentials (the chart's ServiceAccount's token). */
  KubernetesClient client() {
    try {
      return new io.fabric8.kubernetes.client.KubernetesClientBuilder()
          .withConfig(
              io.fabric8.kubernetes.client.Config.fromKubeconfig(
                  java.nio.file.Files.readString(kubeconfig)))
          .build();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The chart's ServiceAccount, in {@link #namespace()}. */
  String serviceAccount() {
    return serviceAccount;
  }

  /** The chart's ServiceAccount's token that the operator's kubeconfig holds. */
  String serviceAccountToken() {
    return token;
  }

  /** The namespace the operator runs in (its Lease is there). */
  String namespace() {
    return operatorNamespace;
  }

  /**
   * Starts an operator process named {@code podName} with the chart's arguments, its probes and
   * (with {@code metrics.enabled}) its metrics on free ports of 127.0.0.1.
   */
  OperatorProcess start(String podName, String... jvmOptions) {
    int health = ControlPlane.freePort();
    int metrics = 0;
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k"));
    command.addAll(List.of(jvmOptions));
    command.add("-jar");
    command.add(JAR.toString());
    for (String arg : args) {
      if (arg.startsWith("--metrics-bind-address=") && !arg.endsWith("=0")) {
        metrics = ControlPlane.freePort();
        command.add("--metrics-bind-address=127.0.0.1:" + metrics);
      } else if (!arg.startsWith("--health-probe-bind-address=")) {
        command.add(arg);
      }
    }
    command.add("--health-probe-bind-address=127.0.0.1:" + health);
    Map<String, String> processEnv = new LinkedHashMap<>(env);
    processEnv.put("POD_NAME", podName);
    processEnv.put("KUBECONFIG", kubeconfig.toString());
    processEnv.put("PATH", "/usr/bin:/bin");
    processEnv.put("HOME", plane.dir().toString());
    ChildProcess process =
        ChildProcess.start(
            podName,
            command,
            processEnv,
            plane.dir(),
            plane
                .dir()
                .resolve(operatorNamespace + "-" + podName + "-" + System.nanoTime() + ".log"));
    return new OperatorProcess(process, health, metrics);
  }

  /** A running operator process. */
  static final class OperatorProcess implements AutoCloseable {
    private final ChildProcess process;
    private final int healthPort;
    private final int metricsPort;

    OperatorProcess(ChildProcess process, int healthPort, int metricsPort) {
      this.process = process;
      this.healthPort = healthPort;
      this.metricsPort = metricsPort;
    }

    /** One {@code GET /metrics}: the Prometheus text (needs {@code metrics.enabled}). */
    String scrape() {
      if (metricsPort == 0) {
        throw new IllegalStateException("the operator serves no metrics: metrics.enabled is false");
      }
      HttpRequest request =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
              .timeout(Duration.ofSeconds(5))
              .build();
      try {
        HttpResponse<String> response =
            HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
          throw new IllegalStateException("GET /metrics: HTTP " + response.statusCode());
        }
        return response.body();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }

    /** Waits until {@code /readyz} answers 200 (informers synced). */
    OperatorProcess awaitReady() {
      HttpClient http = HttpClient.newHttpClient();
      HttpRequest readyz =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + "/readyz"))
              .timeout(Duration.ofSeconds(2))
              .build();
      Instant deadline = Instant.now().plusSeconds(60);
      while (true) {
        try {
          if (http.send(readyz, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
            return this;
          }
        } catch (java.io.IOException e) {
          // not listening yet
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
        if (!process.isAlive() || Instant.now().isAfter(deadline)) {
          throw new IllegalStateException(
              "operator " + process + " did not become ready:\n" + ControlPlane.tail(log()));
        }
        ControlPlane.sleep(Duration.ofMillis(100));
      }
    }

    boolean isAlive() {
      return process.isAlive();
    }

    /** The exit code, waiting up to {@code timeout}; -1 while it still runs. */
    int waitForExit(Duration timeout) {
      return process.waitFor(timeout);
    }

    /** SIGTERM, as the kubelet sends at a rollout; the exit code or -1 after {@code grace}. */
    int terminate(Duration grace) {
      return process.terminate(grace);
    }

    /** {@code kill -9}. */
    void kill() {
      process.kill();
    }

    String log() {
      return process.log();
    }

    @Override
    public void close() {
      process.kill();
    }
  }
}
