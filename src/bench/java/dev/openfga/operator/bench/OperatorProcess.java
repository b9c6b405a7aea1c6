package dev.openfga.operator.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The packaged operator as a child process: {@code java <flags> -jar <jar> --watch-namespace bench}
 * against the local API, with /readyz and /metrics on 127.0.0.1. Reads RSS from /proc, heap from
 * {@code jcmd GC.heap_info} after {@code jcmd GC.run}, CPU seconds from /proc/PID/stat.
 */
final class OperatorProcess implements AutoCloseable {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  /** A generation or heap line of GC.heap_info (JDK 17 and 25, Serial and G1). */
  private static final Pattern HEAP_LINE =
      Pattern.compile(
          "^\\s*(def new generation|tenured generation|DefNew|Tenured|garbage-first heap)\\b.*$",
          Pattern.MULTILINE);

  private static final Pattern COMMITTED = Pattern.compile("(?:committed|total) (\\d+)K");
  private static final Pattern USED = Pattern.compile("used (\\d+)K");
  private static final Pattern METASPACE_USED =
      Pattern.compile("Both:.*?([\\d.]+) (KB|MB|GB) \\(\\s*\\d+%\\) used");

  final Process process;
  final long startNanos;

  /** When the process was started, in epoch nanoseconds (the clock of the audit log). */
  final long startEpochNanos;

  final int healthPort;
  final int metricsPort;
  private final Path javaHome;

  private OperatorProcess(Process process, long startNanos, int health, int metrics, Path home) {
    this.process = process;
    this.startNanos = startNanos;
    java.time.Instant now = java.time.Instant.now();
    this.startEpochNanos =
        now.getEpochSecond() * 1_000_000_000L + now.getNano() - (System.nanoTime() - startNanos);
    this.healthPort = health;
    this.metricsPort = metrics;
    this.javaHome = home;
  }

  /**
   * @param metrics whether /metrics is served (the default in production; the benchmark reads the
   *     reconcile count from it)
   */
  static OperatorProcess start(
      Path javaHome,
      List<String> jvmFlags,
      Path jar,
      Map<String, String> apiEnv,
      boolean metrics,
      Path log,
      List<String> extraArgs,
      MemoryCgroup cgroup)
      throws IOException {
    int health = freePort();
    int metricsPort = metrics ? freePort() : 0;
    List<String> cmd = new ArrayList<>();
    cmd.add(javaHome.resolve("bin/java").toString());
    // a "flag" NAME=value (no leading dash) is an environment variable, e.g. MALLOC_ARENA_MAX=2
    Map<String, String> extraEnv = new java.util.LinkedHashMap<>();
    for (String flag : jvmFlags) {
      int eq = flag.indexOf('=');
      if (!flag.startsWith("-") && eq > 0) {
        extraEnv.put(flag.substring(0, eq), flag.substring(eq + 1));
      } else {
        cmd.add(flag);
      }
    }
    cmd.add("-jar");
    cmd.add(jar.toString());
    cmd.add("--watch-namespace");
    cmd.add(Workload.NS);
    cmd.add("--health-probe-bind-address");
    cmd.add("127.0.0.1:" + health);
    cmd.add("--metrics-bind-address");
    cmd.add(metrics ? "127.0.0.1:" + metricsPort : "0");
    cmd.addAll(extraArgs);
    ProcessBuilder pb = new ProcessBuilder(cgroup == null ? cmd : cgroup.wrap(cmd));
    Map<String, String> env = pb.environment();
    for (String k :
        List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "KUBECONFIG")) {
      env.remove(k);
    }
    env.keySet().removeIf(k -> k.startsWith("KUBERNETES_") || k.startsWith("OPENFGA_OPERATOR_"));
    env.putAll(apiEnv);
    env.put("KUBERNETES_AUTH_TRYKUBECONFIG", "false");
    env.put("KUBERNETES_AUTH_TRYSERVICEACCOUNT", "false");
    env.put("KUBERNETES_NAMESPACE", Workload.NS);
    env.put("POD_NAME", "openfga-operator-bench");
    // as the chart sets it: the Lease's namespace with --leader-elect
    env.put("POD_NAMESPACE", Workload.NS);
    env.putAll(extraEnv);
    pb.redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    long t0 = System.nanoTime();
    Process p = pb.start();
    return new OperatorProcess(p, t0, health, metricsPort, javaHome);
  }

  long pid() {
    return process.pid();
  }

  /** Milliseconds from process start to the first 200 from /readyz. */
  double awaitReady(Duration timeout) throws Exception {
    return awaitReady(process, healthPort, startNanos, timeout);
  }

  /** Milliseconds from {@code startNanos} to the first 200 from {@code /readyz} on the port. */
  static double awaitReady(Process process, int port, long startNanos, Duration timeout)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    HttpRequest req =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz"))
            .timeout(Duration.ofSeconds(1))
            .build();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("process exited with " + process.exitValue());
      }
      try {
        if (HTTP.send(req, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return (System.nanoTime() - startNanos) / 1e6;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Thread.sleep(5);
    }
    throw new IllegalStateException("not ready within " + timeout);
  }

  String metrics() throws Exception {
    HttpRequest req =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
            .timeout(Duration.ofSeconds(5))
            .build();
    return HTTP.send(req, HttpResponse.BodyHandlers.ofString()).body();
  }

  /** Sum of the samples of a metric (all label sets), or 0. */
  static double sample(String metrics, String name) {
    double sum = 0;
    for (String line : metrics.split("\n")) {
      if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
        String[] parts = line.trim().split(" ");
        sum += Double.parseDouble(parts[parts.length - 1]);
      }
    }
    return sum;
  }

  /** Resident set size now, its peak (VmHWM), and its anonymous and file-backed parts, in KiB. */
  long[] rssKiB() throws IOException {
    return ProcStats.rssKiB(pid());
  }

  /** user + system CPU seconds so far. */
  double cpuSeconds() throws IOException {
    return ProcStats.cpuSeconds(pid());
  }

  String cpuByThread() throws IOException {
    return ProcStats.cpuByThread(pid());
  }

  int threads() throws IOException {
    return ProcStats.threads(pid());
  }

  String jcmd(String... command) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(javaHome.resolve("bin/jcmd").toString());
    cmd.add(Long.toString(pid()));
    cmd.addAll(List.of(command));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor(30, TimeUnit.SECONDS);
    return out;
  }

  /** Heap used and committed after a full GC, and metaspace used, in KiB. */
  long[] heapAfterGc() throws Exception {
    jcmd("GC.run");
    String info = jcmd("GC.heap_info");
    long used = 0;
    long committed = 0;
    Matcher line = HEAP_LINE.matcher(info);
    while (line.find()) {
      Matcher c = COMMITTED.matcher(line.group());
      Matcher u = USED.matcher(line.group());
      if (c.find() && u.find()) {
        committed += Long.parseLong(c.group(1));
        used += Long.parseLong(u.group(1));
      }
    }
    long metaspace = -1;
    Matcher meta = METASPACE_USED.matcher(jcmd("VM.metaspace"));
    if (meta.find()) {
      double value = Double.parseDouble(meta.group(1));
      metaspace =
          (long)
              switch (meta.group(2)) {
                case "KB" -> value;
                case "MB" -> value * 1024;
                default -> value * 1024 * 1024;
              };
    }
    return new long[] {used, committed, metaspace};
  }

  /** SIGTERM, then wait (a CDS/AOT training run writes its archive now). */
  int stop(Duration timeout) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      process.waitFor();
    }
    return process.exitValue();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      stop(Duration.ofSeconds(10));
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }
}
