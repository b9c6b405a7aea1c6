package dev.openfga.operator.image;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The training run of the image's AOT cache (Java 25, JEP 483/514/515), for {@code ./mvnw -Pimage
 * package} after {@code build-runtime.sh}: the operator runs from the image's own runtime, jar and
 * JVM flags against a mock API server over TLS, with leader election, migrates three OpenFGA
 * Deployments of the upstream chart's shape and three image changes, serves its probes and metrics,
 * and is stopped; the JVM writes {@code app/openfga-operator.aot} at exit, and {@code
 * app/jvm.options} gets {@code -XX:AOTCache=/app/openfga-operator.aot}.
 *
 * <p>The cache is only used when the jar is byte for byte and timestamp for timestamp the one it
 * was trained with: the jar gets the modification time Jib gives every file of the image (one
 * second after the epoch) before the run. docs/image.md, "AOT cache".
 *
 * <pre>
 * java -cp (test classpath) dev.openfga.operator.image.AotTraining IMAGE_DIR
 * </pre>
 */
public final class AotTraining {
  /** Where the cache is in the image. */
  static final String CACHE = "/app/openfga-operator.aot";

  /** The modification time Jib gives every file of the image (its default: epoch plus a second). */
  static final FileTime IMAGE_FILE_TIME = FileTime.fromMillis(1000);

  private static final Duration TIMEOUT = Duration.ofMinutes(3);

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: AotTraining IMAGE_DIR (build-runtime.sh's --out)");
    }
    Path dir = Path.of(args[0]).toAbsolutePath();
    Path java = dir.resolve("runtime/opt/java/bin/java");
    Path app = dir.resolve("app");
    Path jar = app.resolve("openfga-operator.jar");
    Path options = app.resolve("jvm.options");
    Path cache = app.resolve("openfga-operator.aot");
    String release = Files.readString(dir.resolve("runtime/opt/java/release"));
    if (!release.matches("(?s).*JAVA_VERSION=\"(2[5-9]|[3-9][0-9]).*")) {
      System.out.println("AotTraining: the runtime is older than Java 25: no AOT cache");
      return;
    }
    Files.setLastModifiedTime(jar, IMAGE_FILE_TIME);
    Files.deleteIfExists(cache);
    train(java, options, jar, cache);
    if (!Files.isRegularFile(cache)) {
      throw new IllegalStateException("the training run wrote no AOT cache at " + cache);
    }
    Files.writeString(
        options,
        "# The AOT cache of the image (Java 25), written by a training run at build time"
            + " (AotTraining).\n-XX:AOTCache="
            + CACHE
            + "\n",
        StandardOpenOption.APPEND);
    System.out.printf(
        "AotTraining: %s, %.1f MB; %s names it%n", cache, Files.size(cache) / 1e6, options);
  }

  private static void train(Path java, Path options, Path jar, Path cache) throws Exception {
    // over TLS with a certificate to check and HTTP/2, as a real API server speaks (MockTls)
    try (MockCluster cluster = MockCluster.overTls()) {
      cluster.jobs().script(j -> Script.SUCCEED).runFor(200);
      List<String> names = List.of("openfga", "openfga-a", "openfga-b");
      for (String name : names) {
        // what the upstream chart renders (probes, strategy, security contexts...)
        cluster.create(Fixtures.upstreamChart().name(name).version("v1.8.0").build());
      }
      int health = freePort();
      int metrics = freePort();
      List<String> command = new ArrayList<>();
      command.add(java.toString());
      command.add("@" + options);
      // sized as in a small container, as the image runs
      command.add("-XX:MaxRAM=128m");
      command.add("-XX:AOTCacheOutput=" + cache);
      // the classes the cache cannot hold are listed at warning level, a few hundred lines
      command.add("-Xlog:aot=error");
      command.addAll(
          List.of(
              "-jar",
              jar.toString(),
              "--watch-namespace",
              MockCluster.NS,
              "--health-probe-bind-address",
              "127.0.0.1:" + health,
              "--metrics-bind-address",
              "127.0.0.1:" + metrics,
              // the chart's default
              "--leader-elect"));
      ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
      Map<String, String> env = pb.environment();
      env.keySet()
          .removeIf(
              k ->
                  k.startsWith("KUBERNETES_")
                      || k.startsWith("OPENFGA_OPERATOR_")
                      || k.endsWith("JAVA_OPTIONS")
                      || k.equals("KUBECONFIG"));
      env.put("KUBERNETES_MASTER", cluster.client().getConfiguration().getMasterUrl());
      env.put("KUBERNETES_CERTS_CA_FILE", cluster.certificateAuthorityFile().toString());
      // a bearer token, as a pod's service account has (the mock API server takes any)
      env.put("KUBERNETES_AUTH_TOKEN", "aot-training");
      env.put("KUBERNETES_AUTH_TRYKUBECONFIG", "false");
      env.put("KUBERNETES_AUTH_TRYSERVICEACCOUNT", "false");
      env.put("KUBERNETES_NAMESPACE", MockCluster.NS);
      env.put("POD_NAME", "openfga-operator-aot-training");
      env.put("POD_NAMESPACE", MockCluster.NS);
      Process operator = pb.start();
      try {
        HttpClient http = HttpClient.newHttpClient();
        await("ready", () -> status(http, health, "/readyz") == 200);
        await("three migrations recorded", () -> recorded(cluster, names, "v1.8.0"));
        // three image changes: the change path runs more than once
        for (String version : List.of("v1.9.0", "v1.9.1", "v1.9.2")) {
          cluster.setImage("openfga", "openfga/openfga:" + version);
          await("the image change migrated", () -> recorded(cluster, List.of("openfga"), version));
        }
        await("metrics served", () -> status(http, metrics, "/metrics") == 200);
        await("healthy", () -> status(http, health, "/healthz") == 200);
      } finally {
        // SIGTERM: the operator stops as in a pod, then the JVM writes the cache
        operator.destroy();
        if (!operator.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
          operator.destroyForcibly();
          throw new IllegalStateException("the training run did not stop within " + TIMEOUT);
        }
      }
    }
  }

  private static boolean recorded(MockCluster cluster, List<String> names, String version) {
    for (String name : names) {
      ConfigMap record =
          cluster
              .client()
              .configMaps()
              .inNamespace(MockCluster.NS)
              .withName(Names.statusConfigMap(name))
              .get();
      if (record == null || record.getData() == null) {
        return false;
      }
      if (!version.equals(record.getData().get(Keys.DATA_VERSION))) {
        return false;
      }
    }
    return true;
  }

  private static int status(HttpClient http, int port, String path) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("AOT training: not " + what + " within " + TIMEOUT);
      }
      Thread.sleep(50);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
