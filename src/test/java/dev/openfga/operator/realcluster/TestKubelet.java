package dev.openfga.operator.realcluster;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.fabric8.kubernetes.api.model.BindingBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * The cluster's only node, playing scheduler and kubelet. It registers a Node with the loopback
 * address, binds every pending pod to it, and runs them: a container whose image is {@code
 * openfga/openfga:<version>} is the real {@code openfga} binary of that version (built from the Go
 * module proxy), started with the container's args and its environment (Secret and ConfigMap
 * references resolved) in a clean working folder; its exit code goes into the pod status, its
 * output is served over HTTPS to the API server so {@code pods/log} returns it. What any other pod
 * does is the test's choice ({@link #when}); by default it runs and is Ready. A pod being deleted
 * gets SIGTERM, then SIGKILL after its grace period, is reported terminated and then removed.
 *
 * <p>{@code openfga run} is not started (the servers of a Deployment would fight over ports): its
 * pods are reported Running and Ready, which is what the Deployment controller needs.
 */
final class TestKubelet implements AutoCloseable {
  static final String NODE = "test-kubelet";

  private static final Pattern OPENFGA_IMAGE =
      Pattern.compile("(?:.*/)?openfga/openfga:(v[0-9][^@]*)(?:@.*)?");
  private static final Pattern LOG_PATH =
      Pattern.compile("/containerLogs/([^/]+)/([^/]+)/([^/?]+)");

  /** What a pod does, chosen by the test for pods that are not the real OpenFGA. */
  sealed interface Outcome {
    /** Stays Running and Ready until deleted. */
    record KeepRunning() implements Outcome {}

    /** Runs for {@code after}, prints {@code log}, exits with {@code exitCode}. */
    record Exit(int exitCode, String log, Duration after) implements Outcome {}
  }

  private record Rule(String namespace, Predicate<Pod> pods, Outcome outcome) {
    boolean matches(Pod pod) {
      return namespace.equals(pod.getMetadata().getNamespace()) && pods.test(pod);
    }
  }

  /** A migrate process's life, for the concurrency record; {@code ended} is null while it runs. */
  record Run(String job, String pod, Instant started, Instant ended) {}

  private final KubernetesClient client;
  private final Path dir;
  private final HttpsServer logServer;
  private final ExecutorService events =
      Executors.newSingleThreadExecutor(r -> thread(r, "kubelet"));
  private final ExecutorService runners =
      Executors.newCachedThreadPool(r -> thread(r, "kubelet-pod"));
  private final Map<String, PodRun> started = new ConcurrentHashMap<>();
  private final List<Rule> rules = new CopyOnWriteArrayList<>();
  private final List<Run> migrateRuns = new CopyOnWriteArrayList<>();
  private final Map<String, Duration> slowTermination = new ConcurrentHashMap<>();
  private final java.util.Set<String> failingLogs = ConcurrentHashMap.newKeySet();
  private SharedIndexInformer<Pod> informer;

  /** One started pod: its main container's process (none for a simulated one) and its log. */
  private static final class PodRun {
    final Pod pod;
    final Path log;
    volatile Process process;
    volatile boolean finished;
    volatile boolean deleting;
    final Instant startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS);

    PodRun(Pod pod, Path log) {
      this.pod = pod;
      this.log = log;
    }
  }

  private TestKubelet(KubernetesClient client, Path dir, HttpsServer logServer) {
    this.client = client;
    this.dir = dir;
    this.logServer = logServer;
  }

  static TestKubelet start(KubernetesClient client, Path dir) {
    try {
      Files.createDirectories(dir);
      HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
      server.setHttpsConfigurator(new HttpsConfigurator(serverTls(dir)));
      TestKubelet kubelet = new TestKubelet(client, dir, server);
      server.createContext("/", kubelet::serveLog);
      server.setExecutor(Executors.newFixedThreadPool(2, r -> thread(r, "kubelet-logs")));
      server.start();
      kubelet.registerNode();
      kubelet.informer = client.pods().inAnyNamespace().inform(kubelet.handler(), 0);
      return kubelet;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * From now on, pods of the namespace that match (and are not the real OpenFGA) do this; the
   * newest rule wins.
   */
  void when(String namespace, Predicate<Pod> pods, Outcome outcome) {
    rules.add(0, new Rule(namespace, pods, outcome));
  }

  /** Pods of this namespace take {@code extra} longer to terminate after SIGTERM. */
  void slowTermination(String namespace, Duration extra) {
    slowTermination.put(namespace, extra);
  }

  /**
   * Log requests for pods of this namespace answer 500, as a kubelet that is unreachable or broken
   * does through the API server.
   */
  void failLogs(String namespace) {
    failingLogs.add(namespace);
  }

  /** Forgets the rules and settings of a test class's namespace. */
  void forget(String namespace) {
    failingLogs.remove(namespace);
    rules.removeIf(r -> r.namespace().equals(namespace));
    slowTermination.remove(namespace);
  }

  /** Every real {@code openfga migrate} run so far for the Job name in the namespace. */
  List<Run> migrateRuns(String namespace, String job) {
    return migrateRuns.stream().filter(r -> r.job().equals(namespace + "/" + job)).toList();
  }

  /**
   * The most {@code openfga migrate} processes that ran at the same instant for that Job name
   * (across every Job of that name, so a replaced Job counts with its predecessor).
   */
  int maxConcurrentMigrations(String namespace, String job) {
    List<Run> runs = migrateRuns(namespace, job);
    int max = 0;
    for (Run a : runs) {
      int overlapping = 0;
      for (Run b : runs) {
        Instant bEnd = b.ended() == null ? Instant.MAX : b.ended();
        if (!b.started().isAfter(a.started()) && bEnd.isAfter(a.started())) {
          overlapping++;
        }
      }
      max = Math.max(max, overlapping);
    }
    return max;
  }

  private ResourceEventHandler<Pod> handler() {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(Pod pod) {
        events.execute(() -> handle(pod));
      }

      @Override
      public void onUpdate(Pod old, Pod pod) {
        events.execute(() -> handle(pod));
      }

      @Override
      public void onDelete(Pod pod, boolean unknown) {
        PodRun run = started.remove(pod.getMetadata().getUid());
        if (run != null && run.process != null) {
          run.process.destroyForcibly();
        }
      }
    };
  }

  private void handle(Pod pod) {
    try {
      String uid = pod.getMetadata().getUid();
      String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
      boolean terminal = "Succeeded".equals(phase) || "Failed".equals(phase);
      if (pod.getMetadata().getDeletionTimestamp() != null) {
        PodRun run = started.get(uid);
        if (run == null || terminal || run.finished) {
          forceDelete(pod);
        } else if (!run.deleting) {
          run.deleting = true;
          runners.execute(() -> terminate(run, pod));
        }
        return;
      }
      if (pod.getSpec().getNodeName() == null) {
        if (!terminal) {
          bind(pod);
        }
        return;
      }
      if (NODE.equals(pod.getSpec().getNodeName()) && !terminal && !started.containsKey(uid)) {
        PodRun run = new PodRun(pod, logFile(pod));
        started.put(uid, run);
        runners.execute(() -> run(run));
      }
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404 && e.getCode() != 409) {
        System.err.println("test kubelet: " + e.getMessage());
      }
    }
  }

  private void bind(Pod pod) {
    client
        .bindings()
        .inNamespace(pod.getMetadata().getNamespace())
        .resource(
            new BindingBuilder()
                .withNewMetadata()
                .withName(pod.getMetadata().getName())
                .withUid(pod.getMetadata().getUid())
                .endMetadata()
                .withNewTarget()
                .withKind("Node")
                .withName(NODE)
                .endTarget()
                .build())
        .create();
  }

  private void run(PodRun run) {
    Pod pod = run.pod;
    Container container = pod.getSpec().getContainers().get(0);
    Optional<String> version = openfgaVersion(container.getImage());
    try {
      if (version.isEmpty()) {
        Outcome outcome =
            rules.stream()
                .filter(r -> r.matches(pod))
                .map(Rule::outcome)
                .findFirst()
                .orElse(new Outcome.KeepRunning());
        reportRunning(pod, container, run.startedAt);
        if (outcome instanceof Outcome.Exit exit) {
          Files.writeString(run.log, exit.log());
          ControlPlane.sleep(exit.after());
          if (!run.deleting) {
            run.finished = true;
            reportTerminated(pod, container, run.startedAt, exit.exitCode());
          }
        }
        return;
      }
      List<String> args = container.getArgs() == null ? List.of() : container.getArgs();
      if (!args.isEmpty() && args.get(0).equals("run")) {
        reportRunning(pod, container, run.startedAt);
        return;
      }
      Optional<Path> binary = Binaries.openfga(version.get());
      if (binary.isEmpty()) {
        reportWaiting(
            pod, container, "ErrImagePull", "the test kubelet has no openfga " + version.get());
        return;
      }
      Map<String, String> env;
      try {
        env = PodEnvironment.resolve(client, pod, container);
      } catch (PodEnvironment.ConfigError e) {
        reportWaiting(pod, container, "CreateContainerConfigError", e.getMessage());
        started.remove(pod.getMetadata().getUid()); // the real kubelet tries again
        return;
      }
      Path work = Files.createTempDirectory(dir, "pod-");
      env.putIfAbsent("HOME", work.toString());
      List<String> command = new ArrayList<>();
      command.add(binary.get().toString());
      command.addAll(PodEnvironment.args(container, env));
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .directory(work.toFile())
              .redirectErrorStream(true)
              .redirectOutput(run.log.toFile());
      builder.environment().clear();
      builder.environment().putAll(env);
      String job = jobName(pod);
      Run migrate = null;
      run.process = builder.start();
      if (job != null && args.contains("migrate")) {
        migrate =
            new Run(
                pod.getMetadata().getNamespace() + "/" + job,
                pod.getMetadata().getName(),
                Instant.now(),
                null);
        migrateRuns.add(migrate);
      }
      ChildProcess.watchdog(run.process.pid());
      reportRunning(pod, container, run.startedAt);
      int exitCode = run.process.waitFor();
      if (migrate != null) {
        migrateRuns.set(
            migrateRuns.indexOf(migrate),
            new Run(migrate.job(), migrate.pod(), migrate.started(), Instant.now()));
      }
      run.finished = true;
      if (!run.deleting) {
        reportTerminated(pod, container, run.startedAt, exitCode);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        System.err.println(
            "test kubelet: pod " + pod.getMetadata().getName() + ": " + e.getMessage());
      }
    }
  }

  /** Deletion: SIGTERM, the grace period (plus a test's extra delay), SIGKILL, terminal status. */
  private void terminate(PodRun run, Pod pod) {
    try {
      Duration extra =
          slowTermination.getOrDefault(pod.getMetadata().getNamespace(), Duration.ZERO);
      ControlPlane.sleep(extra);
      Process process = run.process;
      int exitCode = 143;
      if (process != null) {
        process.destroy();
        long grace =
            pod.getMetadata().getDeletionGracePeriodSeconds() == null
                ? 30
                : pod.getMetadata().getDeletionGracePeriodSeconds();
        if (!process.waitFor(grace, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor();
        }
        exitCode = process.exitValue();
      }
      run.finished = true;
      Container container = pod.getSpec().getContainers().get(0);
      reportTerminated(pod, container, run.startedAt, exitCode);
      forceDelete(pod);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        System.err.println("test kubelet: " + e.getMessage());
      }
    }
  }

  private void forceDelete(Pod pod) {
    client
        .pods()
        .inNamespace(pod.getMetadata().getNamespace())
        .withName(pod.getMetadata().getName())
        .withGracePeriod(0)
        .delete();
  }

  private void reportRunning(Pod pod, Container container, Instant startedAt) {
    Map<String, Object> state = Map.of("running", Map.of("startedAt", startedAt.toString()));
    patchStatus(pod, "Running", true, containerStatuses(pod, container, true, state), startedAt);
  }

  private void reportTerminated(Pod pod, Container container, Instant startedAt, int exitCode) {
    Instant finished = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    Map<String, Object> terminated = new LinkedHashMap<>();
    terminated.put("exitCode", exitCode);
    terminated.put("reason", exitCode == 0 ? "Completed" : "Error");
    terminated.put("startedAt", startedAt.toString());
    terminated.put("finishedAt", finished.toString());
    patchStatus(
        pod,
        exitCode == 0 ? "Succeeded" : "Failed",
        false,
        containerStatuses(pod, container, false, Map.of("terminated", terminated)),
        startedAt);
  }

  private void reportWaiting(Pod pod, Container container, String reason, String message) {
    Map<String, Object> state = Map.of("waiting", Map.of("reason", reason, "message", message));
    patchStatus(
        pod, "Pending", false, containerStatuses(pod, container, false, state), Instant.now());
  }

  /** The main container with {@code state}; the pod's other containers run (ready or not). */
  private static List<Map<String, Object>> containerStatuses(
      Pod pod, Container main, boolean ready, Map<String, Object> state) {
    List<Map<String, Object>> statuses = new ArrayList<>();
    for (Container c : pod.getSpec().getContainers()) {
      Map<String, Object> status = new LinkedHashMap<>();
      status.put("name", c.getName());
      status.put("image", c.getImage());
      status.put("imageID", "");
      status.put("restartCount", 0);
      boolean isMain = c.getName().equals(main.getName());
      status.put("ready", isMain ? ready : true);
      status.put("started", isMain ? state.containsKey("running") : true);
      status.put(
          "state",
          isMain
              ? state
              : Map.of(
                  "running",
                  Map.of("startedAt", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString())));
      statuses.add(status);
    }
    return statuses;
  }

  private void patchStatus(
      Pod pod,
      String phase,
      boolean ready,
      List<Map<String, Object>> containers,
      Instant startedAt) {
    String readyStatus = ready ? "True" : "False";
    Map<String, Object> status = new LinkedHashMap<>();
    status.put("phase", phase);
    status.put("hostIP", "127.0.0.1");
    status.put("podIP", "127.0.0.1");
    status.put("podIPs", List.of(Map.of("ip", "127.0.0.1")));
    status.put("startTime", startedAt.toString());
    status.put(
        "conditions",
        List.of(
            condition("PodScheduled", "True"),
            condition("Initialized", "True"),
            condition("ContainersReady", readyStatus),
            condition("Ready", readyStatus)));
    status.put("containerStatuses", containers);
    Map<String, Object> patch =
        Map.of("metadata", Map.of("uid", pod.getMetadata().getUid()), "status", status);
    client
        .pods()
        .inNamespace(pod.getMetadata().getNamespace())
        .withName(pod.getMetadata().getName())
        .subresource("status")
        .patch(PatchContext.of(PatchType.JSON_MERGE), Serialization.asJson(patch));
  }

  private static Map<String, Object> condition(String type, String status) {
    return Map.of(
        "type", type,
        "status", status,
        "lastTransitionTime", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
  }

  private void registerNode() {
    client
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(NODE)
                .addToLabels("kubernetes.io/hostname", NODE)
                .addToLabels("kubernetes.io/os", "linux")
                .endMetadata()
                .build())
        .create();
    Map<String, Object> status =
        Map.of(
            "addresses", List.of(Map.of("type", "InternalIP", "address", "127.0.0.1")),
            "daemonEndpoints",
                Map.of("kubeletEndpoint", Map.of("Port", logServer.getAddress().getPort())),
            "capacity", Map.of("cpu", "2", "memory", "24Gi", "pods", "500"),
            "allocatable", Map.of("cpu", "2", "memory", "24Gi", "pods", "500"),
            "conditions",
                List.of(
                    Map.of(
                        "type", "Ready",
                        "status", "True",
                        "reason", "KubeletReady",
                        "lastHeartbeatTime",
                            Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(),
                        "lastTransitionTime",
                            Instant.now().truncatedTo(ChronoUnit.SECONDS).toString())));
    client
        .nodes()
        .withName(NODE)
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE), Serialization.asJson(Map.of("status", status)));
  }

  /** {@code GET /containerLogs/{namespace}/{pod}/{container}} with tailLines and limitBytes. */
  private void serveLog(HttpExchange exchange) throws IOException {
    try (exchange) {
      Matcher m = LOG_PATH.matcher(exchange.getRequestURI().getPath());
      if (m.matches() && failingLogs.contains(m.group(1))) {
        byte[] body = "test kubelet: logs fail on purpose".getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(500, body.length);
        exchange.getResponseBody().write(body);
        return;
      }
      Optional<PodRun> run =
          m.matches()
              ? started.values().stream()
                  .filter(r -> r.pod.getMetadata().getNamespace().equals(m.group(1)))
                  .filter(r -> r.pod.getMetadata().getName().equals(m.group(2)))
                  .findFirst()
              : Optional.empty();
      if (run.isEmpty() || !Files.exists(run.get().log)) {
        byte[] body = "not found".getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(404, body.length);
        exchange.getResponseBody().write(body);
        return;
      }
      Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
      List<String> lines = Files.readAllLines(run.get().log, StandardCharsets.UTF_8);
      if (query.containsKey("tailLines")) {
        int tail = Integer.parseInt(query.get("tailLines"));
        lines = lines.subList(Math.max(0, lines.size() - tail), lines.size());
      }
      byte[] body =
          lines.stream()
              .map(l -> l + "\n")
              .reduce("", String::concat)
              .getBytes(StandardCharsets.UTF_8);
      if (query.containsKey("limitBytes")) {
        int limit = Integer.parseInt(query.get("limitBytes"));
        if (body.length > limit) {
          body = java.util.Arrays.copyOf(body, limit);
        }
      }
      exchange.getResponseHeaders().add("Content-Type", "text/plain");
      exchange.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> query = new LinkedHashMap<>();
    if (raw != null) {
      for (String pair : raw.split("&")) {
        int eq = pair.indexOf('=');
        if (eq > 0) {
          query.put(
              URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
              URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
      }
    }
    return query;
  }

  private Path logFile(Pod pod) {
    return dir.resolve(
        pod.getMetadata().getNamespace()
            + "_"
            + pod.getMetadata().getName()
            + "_"
            + pod.getMetadata().getUid()
            + ".log");
  }

  static Optional<String> openfgaVersion(String image) {
    Matcher m = OPENFGA_IMAGE.matcher(image == null ? "" : image);
    return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
  }

  private static String jobName(Pod pod) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    if (labels == null) {
      return null;
    }
    return labels.getOrDefault("batch.kubernetes.io/job-name", labels.get("job-name"));
  }

  /** A self-signed certificate for 127.0.0.1 (the API server does not verify the kubelet's). */
  private static SSLContext serverTls(Path dir) {
    Path store = dir.resolve("kubelet.p12");
    String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
    ChildProcess.run(
        Duration.ofSeconds(60),
        keytool,
        "-genkeypair",
        "-alias",
        "kubelet",
        "-keyalg",
        "RSA",
        "-keysize",
        "2048",
        "-validity",
        "2",
        "-dname",
        "CN=" + NODE,
        "-ext",
        "SAN=ip:127.0.0.1",
        "-keystore",
        store.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        "changeit",
        "-keypass",
        "changeit");
    try (InputStream in = Files.newInputStream(store)) {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(in, "changeit".toCharArray());
      KeyManagerFactory factory =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      factory.init(keys, "changeit".toCharArray());
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(factory.getKeyManagers(), null, null);
      return context;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Thread thread(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** Stops watching, kills every process it started, stops the log server. */
  @Override
  public void close() {
    if (informer != null) {
      informer.close();
    }
    events.shutdownNow();
    for (PodRun run : started.values()) {
      if (run.process != null) {
        run.process.destroyForcibly();
      }
    }
    runners.shutdownNow();
    logServer.stop(0);
  }
}
