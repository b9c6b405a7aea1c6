package dev.openfga.operator.bench;

import dev.openfga.operator.kube.Names;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code --peer-command "..."}: another operator's command line (the upstream Go operator, built
 * locally), run after ours on the same objects of the same real API server and measured the same
 * way where it can be: start to ready ({@code /readyz} on {@code {health}}), RSS and threads after
 * the idle time, the requests from start to ready plus 3 s, and image changes (Deployment PATCH →
 * Job POST at the API; the harness completes the Job and waits for the record's write). In the
 * command, {@code {kubeconfig}}, {@code {namespace}}, {@code {health}} and {@code {metrics}} are
 * replaced; {@code KUBECONFIG} is set too. It runs under {@code bash -c}.
 */
final class PeerRun {
  private static final String JOBS_PATH = "/apis/batch/v1/namespaces/" + Workload.NS + "/jobs";

  /** What was measured of the peer at one N. */
  static final class Result {
    final int n;
    double readyMs = Double.NaN;
    double syncedSeconds = Double.NaN;
    long rssKiB;
    long hwmKiB;
    int threads;
    int startupRequests;
    double[] latenciesMs = new double[0];
    double requestsPerChange;
    double cpuMsPerChange;
    double cpuMsPerChangeSecondHalf;
    String error;

    Result(int n) {
      this.n = n;
    }
  }

  private PeerRun() {}

  static Result measure(
      String command, RealApi api, int n, int changes, int idleSeconds, int firstVersion, Path log)
      throws Exception {
    Result r = new Result(n);
    int health = freePort();
    String line =
        command
            .replace("{kubeconfig}", api.kubeconfig().toString())
            .replace("{namespace}", Workload.NS)
            .replace("{health}", Integer.toString(health))
            .replace("{metrics}", Integer.toString(freePort()));
    // controller-runtime does not hand its Lease back when it stops: without this the next run's
    // peer would wait out the last one's Lease (15 s) before it reconciles
    api.client()
        .resources(io.fabric8.kubernetes.api.model.coordination.v1.Lease.class)
        .inNamespace(Workload.NS)
        .delete();
    api.clearRequests();
    ProcessBuilder pb = new ProcessBuilder("bash", "-c", "exec " + line);
    pb.environment().put("KUBECONFIG", api.kubeconfig().toString());
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    long t0 = System.nanoTime();
    java.time.Instant started = java.time.Instant.now();
    Process p = pb.start();
    try {
      if (command.contains("{health}")) {
        r.readyMs = OperatorProcess.awaitReady(p, health, t0, Duration.ofSeconds(90));
      }
      Thread.sleep(3000);
      r.startupRequests = api.requestCount();
      r.syncedSeconds =
          firstWriteSeconds(
              api.requests(), started.getEpochSecond() * 1_000_000_000L + started.getNano());
      Thread.sleep(idleSeconds * 1000L);
      long[] rss = ProcStats.rssKiB(p.pid());
      r.rssKiB = rss[0];
      r.hwmKiB = rss[1];
      r.threads = ProcStats.threads(p.pid());
      int before = api.requestCount();
      double cpuBefore = ProcStats.cpuSeconds(p.pid());
      double[] cpuAtHalf = new double[1];
      r.latenciesMs = imageChanges(api, n, changes, firstVersion, p.pid(), cpuAtHalf);
      double cpuAfter = ProcStats.cpuSeconds(p.pid());
      r.cpuMsPerChange = (cpuAfter - cpuBefore) * 1000 / changes;
      r.cpuMsPerChangeSecondHalf = (cpuAfter - cpuAtHalf[0]) * 1000 / (changes - changes / 2);
      r.requestsPerChange = (api.requestCount() - before) / (double) changes;
      r.hwmKiB = Math.max(r.hwmKiB, ProcStats.rssKiB(p.pid())[1]);
    } catch (Exception e) {
      r.error = e.getClass().getSimpleName() + ": " + e.getMessage();
    } finally {
      p.destroy();
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
    return r;
  }

  /**
   * As the operator's image changes, but settled by the record's write, not by Events; the
   * process's CPU seconds when half of them are done go into {@code cpuAtHalf[0]}.
   */
  private static double[] imageChanges(
      RealApi api, int n, int changes, int firstVersion, long pid, double[] cpuAtHalf)
      throws Exception {
    double[] latencies = new double[changes];
    KubernetesClient c = api.client();
    for (int i = 0; i < changes; i++) {
      if (i == changes / 2) {
        cpuAtHalf[0] = ProcStats.cpuSeconds(pid);
      }
      String dep = Workload.openfgaName(i % n);
      String version = "v2." + (firstVersion + i) + ".0";
      String job = Names.job(dep);
      CompletableFuture<BenchApi.Request> created =
          api.next(
              r -> r.method().equals("POST") && r.path().startsWith(JOBS_PATH) && r.code() == 201);
      Workload.setVersion(c, dep, version);
      long t0 = api.harnessArrival("PATCH", "/apis/apps/v1/namespaces/bench/deployments/" + dep);
      latencies[i] = (created.get(30, TimeUnit.SECONDS).atNanos() - t0) / 1e6;
      CompletableFuture<BenchApi.Request> recorded =
          api.next(r -> r.isWrite() && r.path().contains("/configmaps"));
      try {
        Workload.podStarted(c, job);
        Workload.podSucceeded(c, job);
        Workload.completeJob(c, job);
        recorded.get(30, TimeUnit.SECONDS);
        Thread.sleep(200);
        c.batch().v1().jobs().withName(job).delete();
      } finally {
        Workload.podDeleted(c, job);
      }
      Thread.sleep(20);
    }
    return latencies;
  }

  /** Ours next to the peer's, with the ratio ours / peer (below 1: ours is smaller or faster). */
  static String table(OperatorBench.Result ours, Result peer) {
    StringBuilder s = new StringBuilder();
    s.append(
            String.format(
                Locale.ROOT,
                "%nN = %d: %s against the peer%n%n| figure | ours | peer | ours / peer |%n"
                    + "|---|---:|---:|---:|%n",
                ours.n,
                ours.variant))
        .append(row("RSS after the idle time, MiB", ours.rssKiB / 1024.0, peer.rssKiB / 1024.0))
        .append(row("peak RSS, MiB", ours.hwmKiB / 1024.0, peer.hwmKiB / 1024.0))
        .append(row("start → ready, s", ours.readyMs / 1000, peer.readyMs / 1000))
        .append(
            row(
                "start → caches synced, s (ours: ready; the peer: its first write, — if none)",
                ours.readyMs / 1000,
                peer.syncedSeconds))
        .append(row("threads", ours.threads, peer.threads))
        .append(
            row("requests from start to ready + 3 s", ours.startup.size(), peer.startupRequests))
        .append(
            row(
                "first reaction after the idle time, ms",
                first(ours.latenciesMs),
                first(peer.latenciesMs)))
        .append(
            row(
                "reaction p50, ms",
                percentile(ours.latenciesMs, 50),
                percentile(peer.latenciesMs, 50)))
        .append(
            row(
                "reaction max, ms",
                percentile(ours.latenciesMs, 100),
                percentile(peer.latenciesMs, 100)))
        .append(
            row(
                "requests per image change",
                ours.migrationRequests.size() / (double) Math.max(1, ours.latenciesMs.length),
                peer.requestsPerChange))
        .append(row("CPU per image change, ms", ours.cpuMsPerChange(), peer.cpuMsPerChange))
        .append(
            row(
                "CPU per image change in the second half of them, ms",
                ours.cpuMsPerChangeSecondHalf(),
                peer.cpuMsPerChangeSecondHalf));
    if (peer.error != null) {
      s.append("\nThe peer's run failed: ").append(peer.error).append('\n');
    }
    return s.toString();
  }

  private static String row(String name, double ours, double peer) {
    return String.format(
        Locale.ROOT,
        "| %s | %s | %s | %s |%n",
        name,
        value("%.1f", ours),
        value("%.1f", peer),
        value("%.2f", ours / peer));
  }

  /** A measured value, or "—" when it was not measured (NaN, infinite or negative). */
  private static String value(String format, double v) {
    return Double.isNaN(v) || Double.isInfinite(v) || v < 0
        ? "—"
        : String.format(Locale.ROOT, format, v);
  }

  /**
   * Seconds from the process start to its first write: controller-runtime reconciles, and the
   * upstream operator writes a status for every converged Deployment, only once its caches are
   * synced, while its {@code /readyz} answers 200 before. Its caches are filled by watches with
   * {@code sendInitialEvents} (client-go's streaming lists), not by LISTs. NaN when it wrote
   * nothing but its Lease (and leader Event) within 3 s of ready (nothing to write: every status
   * already up to date).
   */
  static double firstWriteSeconds(List<BenchApi.Request> requests, long startEpochNanos) {
    // with --leader-elect the Lease, and the Event that says who leads, are written before the
    // caches are filled: not a reconcile's (the upstream operator sends no other Events)
    java.util.OptionalLong first =
        requests.stream()
            .filter(BenchApi.Request::isWrite)
            .filter(q -> !q.path().contains("/leases") && !q.path().contains("/events"))
            .mapToLong(q -> q.atNanos() - startEpochNanos)
            .filter(nanos -> nanos >= 0)
            .min();
    return first.isPresent() ? first.getAsLong() / 1e9 : Double.NaN;
  }

  /** The first image change's reaction: cold code paths after start-up and the idle time. */
  private static double first(double[] values) {
    return values.length == 0 ? Double.NaN : values[0];
  }

  static double percentile(double[] values, int p) {
    if (values.length == 0) {
      return Double.NaN;
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }
}
