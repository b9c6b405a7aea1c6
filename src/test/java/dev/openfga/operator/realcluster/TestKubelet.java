package dev.openfga.operator.realcluster;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.openfga.operator.migration.rules.Keys;
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
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
 * <p>{@code openfga run} is not started unless the pod asks with the annotation {@link #SERVE}: its
 * pods are reported Running and Ready, which is what the Deployment controller needs. A pod that
 * asks runs the real server on loopback ports of its own, Ready once it answers {@code /healthz}.
 *
 * <p>Native sidecars ({@code initContainers} with {@code restartPolicy: Always}) of a pod whose
 * main container really runs are started first, in order: the image {@code
 * openfga-operator-test/tcp-proxy} is a real {@link TcpProxy} process (the container's args, its
 * own log), which must be listening within {@link #SIDECAR_START} or the pod fails; any other image
 * is only reported running. When the main container ends they get SIGTERM (SIGKILL after {@link
 * #SIDECAR_GRACE}) before the pod is reported Succeeded or Failed by the main container's exit
 * code, as the real kubelet does. The sidecars of simulated pods are only reported. Regular init
 * containers are ignored.
 */
final class TestKubelet implements AutoCloseable {
  static final String NODE = "test-kubelet";

  private static final Pattern OPENFGA_IMAGE =
      Pattern.compile("(?:.*/)?openfga/openfga:(v[0-9][^@]*)(?:@.*)?");
  private static final Pattern TEST_PROXY_IMAGE =
      Pattern.compile("(?:.*/)?openfga-operator-test/tcp-proxy(?::[^@]*)?(?:@.*)?");
  private static final Pattern LOG_PATH =
      Pattern.compile("/containerLogs/([^/]+)/([^/]+)/([^/?]+)");

  /** How long a test proxy sidecar may take to listen. */
  static final Duration SIDECAR_START = Duration.ofSeconds(10);

  /** How long a sidecar has after SIGTERM before SIGKILL. */
  static final Duration SIDECAR_GRACE = Duration.ofSeconds(5);

  /**
   * The exit code reported for a sidecar stopped by SIGTERM: 128 + 15, what the real kubelet
   * reports (reason Error) for a process that does not handle SIGTERM. A test proxy reports its
   * process's real exit code, which is that too (the JVM's default on SIGTERM).
   */
  private static final int SIGTERM_EXIT = 143;

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

  /** Where a test proxy sidecar's output went (kept after its pod is gone). */
  private record SidecarLog(String namespace, String job, String pod, String container, Path log) {}

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

  /**
   * Pod annotation: {@code "true"} runs the real {@code openfga run} of the pod's main container
   * (by default its pods are only reported Ready). The kubelet gives it loopback ports of its own
   * ({@code OPENFGA_HTTP_ADDR}, {@code OPENFGA_GRPC_ADDR}; playground and metrics off), reports the
   * pod Ready once {@code /healthz} answers 200, and tells the URL ({@link #serverUrlOf}).
   */
  static final String SERVE = "openfga-operator-test/serve";

  /**
   * Pod annotation beside {@link #SERVE}: the loopback port its HTTP API listens on (else one free
   * at its start), so that its URL is known before it runs (the operator's list of servers).
   */
  static final String HTTP_PORT = "openfga-operator-test/http-port";

  /** namespace/pod → the HTTP URL of its serving {@code openfga run}. */
  private final Map<String, String> servers = new ConcurrentHashMap<>();

  private final Map<String, Duration> slowTermination = new ConcurrentHashMap<>();
  private final Set<String> notReady = ConcurrentHashMap.newKeySet();
  private final java.util.Set<String> failingLogs = ConcurrentHashMap.newKeySet();
  private final CopyOnWriteArrayList<SidecarLog> sidecarLogs = new CopyOnWriteArrayList<>();
  private SharedIndexInformer<Pod> informer;

  /**
   * One started pod: its main container's process (none for a simulated one), its log and its
   * started native sidecars. Once stopped (deleted, or the kubelet closed) nothing more is started
   * for it.
   */
  private static final class PodRun {
    final Pod pod;
    final Path log;
    volatile Process process;
    volatile boolean finished;
    volatile boolean deleting;
    final Instant startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    private final List<Sidecar> sidecars = new ArrayList<>(); // guarded by this
    private boolean stopped; // guarded by this

    PodRun(Pod pod, Path log) {
      this.pod = pod;
      this.log = log;
    }

    /** Starts the main container's process; false (nothing started) once stopped. */
    synchronized boolean start(ProcessBuilder builder) throws IOException {
      if (stopped) {
        return false;
      }
      process = builder.start();
      return true;
    }

    /** Keeps a started sidecar; false once stopped (the caller stops it). */
    synchronized boolean add(Sidecar sidecar) {
      if (stopped) {
        return false;
      }
      sidecars.add(sidecar);
      return true;
    }

    synchronized List<Sidecar> sidecars() {
      return List.copyOf(sidecars);
    }

    synchronized Sidecar sidecar(String name) {
      return sidecars.stream()
          .filter(s -> s.container.getName().equals(name))
          .findFirst()
          .orElse(null);
    }

    synchronized boolean stopped() {
      return stopped;
    }

    /** Stops it: nothing more starts. Its main process, or null when none was started. */
    synchronized Process stop() {
      stopped = true;
      return process;
    }

    /** Stops it and SIGKILLs every process it has, without waiting. */
    void kill() {
      Process main = stop();
      if (main != null) {
        main.destroyForcibly();
      }
      for (Sidecar sidecar : sidecars()) {
        sidecar.kill();
      }
    }
  }

  /** A started native sidecar: its process (none for an image only reported) and its end. */
  private static final class Sidecar {
    final Container container;
    final Process process;
    final Instant startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    private Integer exitCode; // guarded by this
    private Instant finishedAt; // guarded by this

    Sidecar(Container container, Process process) {
      this.container = container;
      this.process = process;
    }

    /**
     * SIGTERM, SIGKILL after {@code grace}; its exit code ({@link #SIGTERM_EXIT} without a
     * process). Once stopped, answers the same again.
     */
    synchronized int stop(Duration grace) {
      if (exitCode == null) {
        int code = SIGTERM_EXIT;
        if (process != null) {
          process.destroy();
          try {
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
              process.destroyForcibly();
              process.waitFor();
            }
            code = process.exitValue();
          } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            code = 137;
          }
        }
        exitCode = code;
        finishedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS);
      }
      return exitCode;
    }

    /** Its exit code once stopped, else null. */
    synchronized Integer exitCode() {
      return exitCode;
    }

    synchronized Instant finishedAt() {
      return finishedAt;
    }

    /** SIGKILL without waiting (not synchronized: a {@link #stop} may be waiting). */
    void kill() {
      if (process != null) {
        process.destroyForcibly();
      }
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
   * Running pods of this namespace are reported not Ready, as an injected mesh proxy that is not
   * ready leaves them while their container runs.
   */
  void notReady(String namespace) {
    notReady.add(namespace);
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
    notReady.remove(namespace);
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

  /**
   * What the test proxy sidecars of every pod of that Job name in the namespace printed so far,
   * oldest pod first, concatenated (also once the pods are gone); empty when none ran. Its lines
   * are {@link TcpProxy}'s: {@code accepted connection <n> from ...} shows the proxy was used.
   */
  String sidecarLogs(String namespace, String job) {
    StringBuilder logs = new StringBuilder();
    for (SidecarLog sidecar : sidecarLogs) {
      if (sidecar.namespace().equals(namespace) && job.equals(sidecar.job())) {
        logs.append(readQuietly(sidecar.log()));
      }
    }
    return logs.toString();
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
        if (run != null) {
          run.kill();
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

  /** Whether the pod asks for a real {@code openfga run} ({@link #SERVE}). */
  private static boolean serves(Pod pod) {
    Map<String, String> annotations = pod.getMetadata().getAnnotations();
    return annotations != null && "true".equals(annotations.get(SERVE));
  }

  private static String podKey(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  /**
   * Waits until the server answers {@code /healthz} with 200 (the readiness the chart's probe asks
   * for, over HTTP): true then; false when the process ended first.
   */
  private static boolean awaitServing(PodRun run, String address) throws InterruptedException {
    java.net.http.HttpClient http =
        java.net.http.HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    java.net.http.HttpRequest healthz =
        java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://" + address + "/healthz"))
            .timeout(Duration.ofSeconds(2))
            .build();
    while (run.process.isAlive()) {
      try {
        if (http.send(healthz, java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode()
            == 200) {
          return true;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Thread.sleep(100);
    }
    return false;
  }

  /** The server URL of any serving pod of the Deployment {@code name} (its pods' name prefix). */
  Optional<String> serverUrlOf(String namespace, String deployment) {
    return servers.entrySet().stream()
        .filter(e -> e.getKey().startsWith(namespace + "/" + deployment + "-"))
        .map(Map.Entry::getValue)
        .findFirst();
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
        reportRunning(run, container);
        if (outcome instanceof Outcome.Exit exit) {
          Files.writeString(run.log, exit.log());
          ControlPlane.sleep(exit.after());
          if (!run.deleting) {
            run.finished = true;
            reportTerminated(run, container, exit.exitCode());
          }
        }
        return;
      }
      List<String> args = container.getArgs() == null ? List.of() : container.getArgs();
      boolean server = !args.isEmpty() && args.get(0).equals("run");
      if (server && !serves(pod)) {
        reportRunning(run, container);
        return;
      }
      Optional<Path> binary = Binaries.openfga(version.get());
      if (binary.isEmpty()) {
        reportWaiting(
            run, container, "ErrImagePull", "the test kubelet has no openfga " + version.get());
        return;
      }
      Map<String, String> env;
      try {
        env = PodEnvironment.resolve(client, pod, container);
      } catch (PodEnvironment.ConfigError e) {
        reportWaiting(run, container, "CreateContainerConfigError", e.getMessage());
        started.remove(pod.getMetadata().getUid()); // the real kubelet tries again
        return;
      }
      if (!startSidecars(run, container)) {
        return;
      }
      Path work = Files.createTempDirectory(dir, "pod-");
      env.putIfAbsent("HOME", work.toString());
      String httpAddress = null;
      if (server) {
        // one network for every pod here: each server gets loopback ports of its own
        String port =
            pod.getMetadata().getAnnotations() == null
                ? null
                : pod.getMetadata().getAnnotations().get(HTTP_PORT);
        httpAddress =
            "127.0.0.1:" + (port != null ? Integer.parseInt(port) : ControlPlane.freePort());
        env.put("OPENFGA_HTTP_ADDR", httpAddress);
        env.put("OPENFGA_GRPC_ADDR", "127.0.0.1:" + ControlPlane.freePort());
        env.put("OPENFGA_PLAYGROUND_ENABLED", "false");
        env.put("OPENFGA_METRICS_ENABLED", "false");
      }
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
      if (!run.start(builder)) {
        return; // stopped while its sidecars started: whoever stopped it reports the pod
      }
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
      if (server) {
        if (awaitServing(run, httpAddress)) {
          servers.put(podKey(pod), "http://" + httpAddress);
          reportRunning(run, container);
        }
      } else {
        reportRunning(run, container);
      }
      int exitCode = run.process.waitFor();
      if (migrate != null) {
        migrateRuns.set(
            migrateRuns.indexOf(migrate),
            new Run(migrate.job(), migrate.pod(), migrate.started(), Instant.now()));
      }
      if (server) {
        servers.remove(podKey(pod));
      }
      stopSidecars(run); // the pod is terminal only once they are stopped
      run.finished = true;
      if (!run.deleting) {
        reportTerminated(run, container, exitCode);
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

  /**
   * Starts the pod's native sidecars in order, as the kubelet does before the main containers: a
   * test proxy as a real process that must be listening within {@link #SIDECAR_START} (else the pod
   * fails), any other image only kept to be reported running. False when the main container must
   * not start: the pod was reported (Failed, or waiting for a missing Secret or ConfigMap) or is
   * being stopped.
   */
  private boolean startSidecars(PodRun run, Container main)
      throws IOException, InterruptedException {
    Pod pod = run.pod;
    for (Container container : nativeSidecars(pod)) {
      if (!isTestProxy(container.getImage())) {
        if (!run.add(new Sidecar(container, null))) {
          return false;
        }
        continue;
      }
      Map<String, String> env;
      try {
        env = PodEnvironment.resolve(client, pod, container);
      } catch (PodEnvironment.ConfigError e) {
        stopSidecars(run);
        if (run.stopped()) {
          return false;
        }
        reportSidecarProblem(
            run,
            main,
            container.getName(),
            Map.of(
                "waiting",
                Map.of("reason", "CreateContainerConfigError", "message", e.getMessage())),
            "Pending",
            null);
        started.remove(pod.getMetadata().getUid()); // the real kubelet tries again
        return false;
      }
      Path log = sidecarLogFile(pod, container.getName());
      long logStart = Files.exists(log) ? Files.size(log) : 0; // a retry appends to the log
      Path work = Files.createTempDirectory(dir, "sidecar-");
      ProcessBuilder builder =
          new ProcessBuilder(TcpProxy.command(PodEnvironment.args(container, env)))
              .directory(work.toFile())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      builder.environment().clear();
      builder.environment().putAll(env);
      Process process = builder.start();
      Sidecar sidecar = new Sidecar(container, process);
      try {
        ChildProcess.watchdog(process.pid());
      } catch (IOException e) {
        sidecar.stop(Duration.ZERO);
        throw e;
      }
      if (!run.add(sidecar)) {
        sidecar.stop(Duration.ZERO);
        return false;
      }
      sidecarLogs.addIfAbsent(
          new SidecarLog(
              pod.getMetadata().getNamespace(),
              jobName(pod),
              pod.getMetadata().getName(),
              container.getName(),
              log));
      String problem = awaitListening(run, process, log, logStart);
      if (run.stopped()) {
        return false; // whoever stopped it stops the sidecars and reports the pod
      }
      if (problem != null) {
        String message =
            "sidecar container "
                + container.getName()
                + " ("
                + container.getImage()
                + ") "
                + problem
                + "; its log: "
                + lastLines(readQuietly(log, logStart), 5);
        stopSidecars(run);
        run.finished = true;
        if (!run.deleting) {
          int exitCode = sidecar.stop(SIDECAR_GRACE);
          reportSidecarProblem(
              run,
              main,
              container.getName(),
              Map.of(
                  "terminated",
                  terminated(exitCode, sidecar.startedAt, sidecar.finishedAt(), message)),
              "Failed",
              message);
        }
        return false;
      }
    }
    return true;
  }

  /**
   * Waits until a test proxy says it is listening (it prints that once bound, so the port accepts
   * connections; a probe connection of the kubelet's own would show up in the proxy's log as if the
   * pod had used it). Null when it listens or the pod is being stopped, else what went wrong.
   */
  private static String awaitListening(PodRun run, Process process, Path log, long logStart)
      throws InterruptedException {
    Instant deadline = Instant.now().plus(SIDECAR_START);
    while (!run.stopped()) {
      if (readQuietly(log, logStart).contains(TcpProxy.LISTENING)) {
        return null;
      }
      if (!process.isAlive()) {
        return "exited with code " + process.exitValue() + " before listening";
      }
      if (Instant.now().isAfter(deadline)) {
        return "was not listening after " + SIDECAR_START.toSeconds() + "s";
      }
      Thread.sleep(50);
    }
    return null;
  }

  /** SIGTERM to the pod's sidecars, last first, each SIGKILLed after {@link #SIDECAR_GRACE}. */
  private static void stopSidecars(PodRun run) {
    List<Sidecar> sidecars = new ArrayList<>(run.sidecars());
    Collections.reverse(sidecars);
    for (Sidecar sidecar : sidecars) {
      sidecar.stop(SIDECAR_GRACE);
    }
  }

  /** Deletion: SIGTERM, the grace period (plus a test's extra delay), SIGKILL, terminal status. */
  private void terminate(PodRun run, Pod pod) {
    try {
      Duration extra =
          slowTermination.getOrDefault(pod.getMetadata().getNamespace(), Duration.ZERO);
      ControlPlane.sleep(extra);
      Process process = run.stop();
      int exitCode = SIGTERM_EXIT;
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
      stopSidecars(run); // after the main container, as the real kubelet does
      run.finished = true;
      Container container = pod.getSpec().getContainers().get(0);
      reportTerminated(run, container, exitCode);
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

  private void reportRunning(PodRun run, Container container) {
    boolean ready = !notReady.contains(run.pod.getMetadata().getNamespace());
    patchStatus(
        run.pod,
        "Running",
        ready,
        true,
        containerStatuses(run.pod, container, ready, running(run.startedAt)),
        initContainerStatuses(run, false, Map.of()),
        null,
        run.startedAt);
  }

  private void reportTerminated(PodRun run, Container container, int exitCode) {
    Instant finished = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    patchStatus(
        run.pod,
        exitCode == 0 ? "Succeeded" : "Failed",
        false,
        true,
        containerStatuses(
            run.pod,
            container,
            false,
            Map.of("terminated", terminated(exitCode, run.startedAt, finished, null))),
        initContainerStatuses(run, true, Map.of()),
        null,
        run.startedAt);
  }

  private void reportWaiting(PodRun run, Container container, String reason, String message) {
    Map<String, Object> state = Map.of("waiting", Map.of("reason", reason, "message", message));
    patchStatus(
        run.pod,
        "Pending",
        false,
        true,
        containerStatuses(run.pod, container, false, state),
        initContainerStatuses(run, false, Map.of()),
        null,
        Instant.now());
  }

  /**
   * A sidecar that could not start: the pod not initialized ({@code phase} Pending or Failed, with
   * {@code message} when not null), the sidecar in {@code state}, the main container and the
   * sidecars after it waiting with reason PodInitializing (the main one with {@code message} too,
   * which the real kubelet leaves out, so that what reads the main container's status sees why).
   */
  private void reportSidecarProblem(
      PodRun run,
      Container main,
      String sidecar,
      Map<String, Object> state,
      String phase,
      String message) {
    Map<String, Object> mainWaiting = new LinkedHashMap<>();
    mainWaiting.put("reason", "PodInitializing");
    if (message != null) {
      mainWaiting.put("message", message);
    }
    Map<String, Map<String, Object>> states = new LinkedHashMap<>();
    boolean after = false;
    for (Container c : nativeSidecars(run.pod)) {
      if (c.getName().equals(sidecar)) {
        states.put(c.getName(), state);
        after = true;
      } else if (after) {
        states.put(c.getName(), Map.of("waiting", Map.of("reason", "PodInitializing")));
      }
    }
    patchStatus(
        run.pod,
        phase,
        false,
        false,
        containerStatuses(run.pod, main, false, Map.of("waiting", mainWaiting)),
        initContainerStatuses(run, "Failed".equals(phase), states),
        message,
        run.startedAt);
  }

  private static Map<String, Object> running(Instant startedAt) {
    return Map.of("running", Map.of("startedAt", startedAt.toString()));
  }

  private static Map<String, Object> terminated(
      int exitCode, Instant startedAt, Instant finishedAt, String message) {
    Map<String, Object> terminated = new LinkedHashMap<>();
    terminated.put("exitCode", exitCode);
    terminated.put("reason", exitCode == 0 ? "Completed" : "Error");
    if (message != null) {
      terminated.put("message", message);
    }
    terminated.put("startedAt", startedAt.toString());
    terminated.put("finishedAt", finishedAt.toString());
    return terminated;
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

  /**
   * The native sidecars' statuses, null for a pod without any (the status then has no {@code
   * initContainerStatuses}). A sidecar is in its state from {@code states} if there, else
   * terminated once stopped, else running; on a {@code terminal} pod one never stopped (only
   * reported) is terminated as by SIGTERM. Regular init containers are left out.
   */
  private static List<Map<String, Object>> initContainerStatuses(
      PodRun run, boolean terminal, Map<String, Map<String, Object>> states) {
    List<Container> sidecars = nativeSidecars(run.pod);
    if (sidecars.isEmpty()) {
      return null;
    }
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    List<Map<String, Object>> statuses = new ArrayList<>();
    for (Container c : sidecars) {
      Sidecar sidecar = run.sidecar(c.getName());
      Instant since = sidecar == null ? run.startedAt : sidecar.startedAt;
      Map<String, Object> state = states.get(c.getName());
      if (state == null) {
        Integer exitCode = sidecar == null ? null : sidecar.exitCode();
        if (exitCode != null) {
          state = Map.of("terminated", terminated(exitCode, since, sidecar.finishedAt(), null));
        } else if (terminal) {
          state = Map.of("terminated", terminated(SIGTERM_EXIT, since, now, null));
        } else {
          state = running(since);
        }
      }
      Map<String, Object> status = new LinkedHashMap<>();
      status.put("name", c.getName());
      status.put("image", c.getImage());
      status.put("imageID", "");
      status.put(
          "containerID", "test-kubelet://" + run.pod.getMetadata().getUid() + "/" + c.getName());
      status.put("restartCount", 0);
      status.put("ready", state.containsKey("running"));
      status.put("started", state.containsKey("running"));
      status.put("state", state);
      statuses.add(status);
    }
    return statuses;
  }

  /**
   * Patches the pod's status; {@code initContainers} null leaves out {@code initContainerStatuses},
   * {@code message} null leaves out the pod's message.
   */
  private void patchStatus(
      Pod pod,
      String phase,
      boolean ready,
      boolean initialized,
      List<Map<String, Object>> containers,
      List<Map<String, Object>> initContainers,
      String message,
      Instant startedAt) {
    String readyStatus = ready ? "True" : "False";
    Map<String, Object> status = new LinkedHashMap<>();
    status.put("phase", phase);
    if (message != null) {
      status.put("message", message);
    }
    status.put("hostIP", "127.0.0.1");
    status.put("podIP", "127.0.0.1");
    status.put("podIPs", List.of(Map.of("ip", "127.0.0.1")));
    status.put("startTime", startedAt.toString());
    status.put(
        "conditions",
        List.of(
            condition("PodScheduled", "True"),
            condition("Initialized", initialized ? "True" : "False"),
            condition("ContainersReady", readyStatus),
            condition("Ready", readyStatus)));
    status.put("containerStatuses", containers);
    if (initContainers != null) {
      status.put("initContainerStatuses", initContainers);
    }
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

  /**
   * {@code GET /containerLogs/{namespace}/{pod}/{container}} with tailLines and limitBytes: a
   * native sidecar's own log when the container is one, else the main container's.
   */
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
      Optional<Path> log = run.map(r -> containerLog(r, m.group(3)));
      if (log.isEmpty() || !Files.exists(log.get())) {
        byte[] body = "not found".getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(404, body.length);
        exchange.getResponseBody().write(body);
        return;
      }
      Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
      List<String> lines = Files.readAllLines(log.get(), StandardCharsets.UTF_8);
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
    return dir.resolve(podFilePrefix(pod) + ".log");
  }

  private Path sidecarLogFile(Pod pod, String container) {
    return dir.resolve(podFilePrefix(pod) + "_" + container + ".log");
  }

  private static String podFilePrefix(Pod pod) {
    return pod.getMetadata().getNamespace()
        + "_"
        + pod.getMetadata().getName()
        + "_"
        + pod.getMetadata().getUid();
  }

  /** The log of the pod's container of that name: a native sidecar's own, else the main one. */
  private Path containerLog(PodRun run, String container) {
    return nativeSidecars(run.pod).stream().anyMatch(c -> c.getName().equals(container))
        ? sidecarLogFile(run.pod, container)
        : run.log;
  }

  /** The init containers with {@code restartPolicy: Always}, in order. */
  private static List<Container> nativeSidecars(Pod pod) {
    List<Container> init = pod.getSpec().getInitContainers();
    return init == null
        ? List.of()
        : init.stream().filter(c -> "Always".equals(c.getRestartPolicy())).toList();
  }

  static boolean isTestProxy(String image) {
    return TEST_PROXY_IMAGE.matcher(image == null ? "" : image).matches();
  }

  /** The file's text from byte {@code offset} on; empty when it cannot be read. */
  private static String readQuietly(Path file, long offset) {
    try {
      byte[] bytes = Files.readAllBytes(file);
      int from = (int) Math.min(offset, bytes.length);
      return new String(bytes, from, bytes.length - from, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  private static String readQuietly(Path file) {
    return readQuietly(file, 0);
  }

  private static String lastLines(String text, int count) {
    List<String> lines = text.lines().toList();
    return String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
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
    return labels.getOrDefault(Keys.JOB_NAME_LABEL, labels.get(Keys.LEGACY_JOB_NAME_LABEL));
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
      run.kill();
    }
    runners.shutdownNow();
    logServer.stop(0);
  }
}
