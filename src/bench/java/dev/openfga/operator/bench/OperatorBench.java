package dev.openfga.operator.bench;

import dev.openfga.operator.kube.Names;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

/**
 * The operator benchmark (docs/performance.md): one local mock API server holding N opted-in,
 * converged OpenFGA Deployments plus 5,000 other Deployments and 5,000 ConfigMaps, and the packaged
 * operator started against it as a separate process, once per JVM variant and N. Prints two tables
 * and writes them, with the machine, to {@code target/bench/results.md}.
 *
 * <pre>
 * ./mvnw -B -q -Pbench verify                                  # the image's JVM settings, N = 10, 100, 1000
 * ./mvnw -B -q -Pbench verify -Dbench.skipJmh=true -Dbench.args="--compare"   # every variant at N = 1000
 * </pre>
 */
public final class OperatorBench {
  private static final PatchContext MERGE_PATCH = PatchContext.of(PatchType.JSON_MERGE);
  private static final String JOBS_PATH = "/apis/batch/v1/namespaces/" + Workload.NS + "/jobs";

  /**
   * JVM options of the image, as build-runtime.sh composes them: jvm.options, plus jvm-25.options
   * on Java 25 and newer (java @argfiles: one flag a line, {@code #} comments).
   */
  static final Path IMAGE_OPTIONS = Path.of("src/main/image/jvm.options");

  static final Path IMAGE_OPTIONS_25 = Path.of("src/main/image/jvm-25.options");

  private final Options options;
  private final Api api;
  private final List<Result> results = new ArrayList<>();
  private final Map<String, Path> caches = new LinkedHashMap<>();
  private int loaded;
  private int versionCounter = 1;
  private String exampleCycle = "";
  private String footprint = "";
  private final StringBuilder comparisons = new StringBuilder();

  private OperatorBench(Options options, Api api) {
    this.options = options;
    this.api = api;
  }

  /** The mock web server logs every request at INFO; held here so the level sticks. */
  private static final java.util.logging.Logger MOCK_LOG =
      java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

  public static void main(String[] args) throws Exception {
    MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
    Options o = Options.parse(args);
    Files.createDirectories(o.out);
    try (Api api = o.realApi ? new RealApi() : new BenchApi()) {
      OperatorBench bench = new OperatorBench(o, api);
      bench.run();
    }
    System.exit(0);
  }

  private void run() throws Exception {
    List<Variant> variants = new ArrayList<>();
    for (String name : options.variants) {
      variants.add(variant(name));
    }
    System.out.println(machine(variants));
    if (!options.tuples.isEmpty()) {
      System.out.printf(Locale.ROOT, "API %s at %s%n", api.describe(), api.url());
      String report =
          machine(variants).lines().filter(l -> !l.startsWith("Workload:")).map(l -> l + "\n")
                  .reduce("", String::concat)
              + "API: "
              + api.describe()
              + "\nOperator: "
              + variants.get(0).name()
              + " ("
              + String.join(" ", variants.get(0).flags())
              + ")\n"
              + new TuplesBench(options, api, variants.get(0)).run();
      System.out.println();
      System.out.println(report);
      Files.writeString(options.out.resolve("tuples-results.md"), report);
      return;
    }
    if (options.footprint) {
      footprint = footprint(variants.get(0));
      System.out.println(footprint);
    }
    System.out.printf(
        Locale.ROOT,
        "API %s at %s; loading %d other Deployments and %d other ConfigMaps...%n",
        api.describe(),
        api.url(),
        options.others,
        options.others);
    long t = System.nanoTime();
    parallel(options.others, i -> api.client().resource(Workload.other(i)).create());
    parallel(options.others, i -> api.client().resource(Workload.otherConfigMap(i)).create());
    System.out.printf(Locale.ROOT, "loaded in %.1f s%n", (System.nanoTime() - t) / 1e9);
    for (int n : options.sizes) {
      load(n);
      for (Variant v : variants) {
        if (v.cache != Cache.NONE && !caches.containsKey(v.name)) {
          train(v, n);
        }
        for (int rep = 0; rep < options.repeat; rep++) {
          Result r = measure(v, n);
          results.add(r);
          System.out.println(r.line());
        }
      }
      if (options.peerCommand != null) {
        measurePeer(n);
      }
    }
    String report = report(variants) + comparisons;
    System.out.println();
    System.out.println(report);
    Files.writeString(options.out.resolve("results.md"), report);
  }

  /** The peer's run at this N, and the comparison with the first variant's last run. */
  private void measurePeer(int n) throws Exception {
    if (!(api instanceof RealApi real)) {
      throw new IllegalArgumentException("--peer-command needs --api real");
    }
    for (int rep = 0; rep < options.repeat; rep++) {
      PeerRun.Result peer =
          PeerRun.measure(
              options.peerCommand,
              real,
              n,
              options.changes,
              options.idleSeconds,
              versionCounter,
              options.out.resolve("peer-" + n + "-" + rep + ".log"));
      versionCounter += options.changes;
      Result ours =
          results.stream()
              .filter(r -> r.n == n && r.error == null)
              .reduce((a, b) -> b)
              .orElse(null);
      if (ours == null) {
        System.out.println("peer N=" + n + ": no run of ours to compare with");
        continue;
      }
      String table = PeerRun.table(ours, peer);
      comparisons.append(table);
      System.out.println(table);
    }
  }

  // ---- loading ----

  private void load(int n) throws Exception {
    if (n <= loaded) {
      return;
    }
    long t = System.nanoTime();
    int from = loaded;
    parallel(
        n - from,
        k -> {
          Deployment d = api.client().resource(Workload.openfga(from + k)).create();
          ConfigMap record = Workload.statusRecord(d, currentVersion(d));
          return api.client().resource(record).create();
        });
    loaded = n;
    System.out.printf(
        Locale.ROOT,
        "%d opted-in Deployments with status records in %.1f s%n",
        n - from,
        (System.nanoTime() - t) / 1e9);
  }

  private static String currentVersion(Deployment d) {
    String image = d.getSpec().getTemplate().getSpec().getContainers().get(0).getImage();
    return image.substring(image.lastIndexOf(':') + 1);
  }

  private static void parallel(int count, IntFunction<Object> create) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Object>> futures = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        int k = i;
        futures.add(pool.submit(() -> create.apply(k)));
      }
      for (Future<Object> f : futures) {
        f.get();
      }
    } finally {
      pool.shutdown();
    }
  }

  // ---- one measurement ----

  private Result measure(Variant v, int n) throws Exception {
    for (int attempt = 1; ; attempt++) {
      Result r = new Result(v.name, n);
      try {
        measure(v, n, r);
      } catch (Exception e) {
        r.error = e.getClass().getSimpleName() + ": " + e.getMessage();
        Path log = options.out.resolve(v.name.replace(':', '-') + "-" + n + ".log");
        // The JDK HTTP client's cleartext HTTP/2 upgrade sometimes trips over the mock server
        // ("protocol error: Frame type(...) exceeds MAX_FRAME_SIZE") on its first connection. A
        // real API server speaks TLS, where HTTP/2 is negotiated instead: start once more.
        if (attempt == 1 && Files.exists(log) && Files.readString(log).contains("MAX_FRAME_SIZE")) {
          System.out.println(v.name + " N=" + n + ": h2c upgrade failed against the mock; again");
          continue;
        }
      }
      return r;
    }
  }

  private void measure(Variant v, int n, Result r) throws Exception {
    r.loadBefore = loadAverage();
    api.clearRequests();
    Path log = options.out.resolve(v.name.replace(':', '-') + "-" + n + ".log");
    List<String> flags = new ArrayList<>(v.flags);
    if (options.nmt) {
      flags.add("-XX:NativeMemoryTracking=summary");
    }
    if (options.jfr) {
      flags.add(
          "-XX:StartFlightRecording=settings=profile,filename="
              + options.out.resolve(v.name.replace(':', '-') + "-" + n + ".jfr").toAbsolutePath());
    }
    if (v.cache == Cache.CDS) {
      flags.add("-XX:SharedArchiveFile=" + caches.get(v.name));
    } else if (v.cache == Cache.AOT) {
      flags.add("-XX:AOTCache=" + caches.get(v.name));
    }
    MemoryCgroup cgroup =
        options.memoryCgroup
            ? MemoryCgroup.create(options.containerMemory, v.name.replaceAll("[^A-Za-z0-9]", "-"))
            : null;
    try (cgroup;
        OperatorProcess p =
            OperatorProcess.start(
                v.home,
                flags,
                v.jar,
                api.operatorEnv(),
                !options.metricsOff,
                log,
                options.operatorArgs,
                cgroup)) {
      try {
        r.readyMs = p.awaitReady(Duration.ofSeconds(90));
      } catch (Exception e) {
        if (p.process.isAlive()) {
          r.hwmKiB = p.rssKiB()[1];
        }
        String log1 = Files.readString(log);
        throw new IllegalStateException(
            log1.contains("OutOfMemoryError") ? "OutOfMemoryError before ready" : e.getMessage());
      }
      r.cpuAtReady = p.cpuSeconds();
      r.cpuByThreadAtReady = p.cpuByThread();
      if (options.metricsOff) {
        // no reconcile count to wait for: let the start-up reconciles run out
        Thread.sleep(SETTLE.toMillis());
        r.reconciledMs = Double.NaN;
      } else {
        r.reconciledMs = awaitReconciles(p, n, 0, Duration.ofSeconds(300));
      }
      r.startup = api.requests();
      r.startEpochNanos = p.startEpochNanos;
      Thread.sleep(options.idleSeconds * 1000L);
      int before = api.requestCount();
      r.idleRequests = api.requestCount() - r.startup.size();
      // An event for every converged Deployment (the Deployment controller writes status): each is
      // a reconcile that must find nothing to do, as a resync does.
      double reconciles = options.metricsOff ? 0 : reconciles(p);
      double cpuBeforeWave = p.cpuSeconds();
      long waveStart = System.nanoTime();
      parallel(
          n,
          i ->
              api.client()
                  .apps()
                  .deployments()
                  .withName(Workload.openfgaName(i))
                  .subresource("status")
                  .patch(
                      MERGE_PATCH,
                      "{\"status\":{\"observedGeneration\":" + (5 + versionCounter) + "}}"));
      if (options.metricsOff) {
        Thread.sleep(SETTLE.toMillis());
      } else {
        awaitReconciles(p, n, reconciles, Duration.ofSeconds(300));
      }
      r.waveMs = (System.nanoTime() - waveStart) / 1e6;
      r.waveCpuSeconds = p.cpuSeconds() - cpuBeforeWave;
      Thread.sleep(500);
      List<BenchApi.Request> all = api.requests();
      r.waveRequests = all.subList(before, all.size());
      long[] heap = p.heapAfterGc();
      Thread.sleep(1000);
      long[] rss = p.rssKiB();
      r.rssKiB = rss[0];
      r.hwmKiB = rss[1];
      r.rssAnonKiB = rss[2];
      r.rssFileKiB = rss[3];
      r.heapUsedKiB = heap[0];
      r.heapCommittedKiB = heap[1];
      r.metaspaceKiB = heap[2];
      r.threads = p.threads();
      r.cpuAtSync = p.cpuSeconds();
      if (options.histo) {
        Files.writeString(
            options.out.resolve(v.name.replace(':', '-') + "-" + n + ".histo.txt"),
            p.jcmd("GC.class_histogram"));
        Files.writeString(
            options.out.resolve(v.name.replace(':', '-') + "-" + n + ".threads.txt"),
            p.jcmd("Thread.print"));
      }
      if (options.nmt) {
        Files.writeString(
            options.out.resolve(v.name.replace(':', '-') + "-" + n + ".nmt.txt"),
            p.jcmd("VM.native_memory", "summary"));
        Files.writeString(
            options.out.resolve(v.name.replace(':', '-') + "-" + n + ".smaps.txt"),
            ProcStats.smaps(p.pid()));
      }
      int loopStart = api.requestCount();
      double cpuBeforeChanges = p.cpuSeconds();
      var threadsBeforeChanges = ProcStats.cpuByThreadGroup(p.pid());
      double systemBeforeChanges = ProcStats.userAndSystemSeconds(p.pid())[1];
      double[][] changes = imageChanges(p, n, options.changes);
      r.changesCpuSeconds = p.cpuSeconds() - cpuBeforeChanges;
      r.secondHalfCpuSeconds = p.cpuSeconds() - changes[2][0];
      r.cpuByThreadInChanges = ProcStats.cpuByThreadSince(threadsBeforeChanges, p.pid());
      r.changesSystemSeconds = ProcStats.userAndSystemSeconds(p.pid())[1] - systemBeforeChanges;
      r.latenciesMs = changes[0];
      r.operatorShareMs = changes[1];
      r.exampleCycle = exampleCycle;
      all = api.requests();
      r.migrationRequests = all.subList(loopStart, all.size());
      Thread.sleep(500);
      r.cpuTotal = p.cpuSeconds();
      r.hwmKiB = Math.max(r.hwmKiB, p.rssKiB()[1]);
      r.rssAfterChangesKiB = p.rssKiB()[0];
      r.loadAfter = loadAverage();
      if (cgroup != null) {
        r.cgroup = "; " + cgroup.summary();
      }
      p.stop(Duration.ofSeconds(30));
    }
  }

  /** With {@code --metrics-off}: how long the reconciles of a wave are given, not counted. */
  private static final Duration SETTLE = Duration.ofSeconds(3);

  /** Reconciles finished so far, from JOSDK's metrics. */
  private static double reconciles(OperatorProcess p) throws Exception {
    String m = p.metrics();
    double success = OperatorProcess.sample(m, "operator_sdk_reconciliations_success_total");
    double failed = OperatorProcess.sample(m, "operator_sdk_reconciliations_failed_total");
    return success + failed;
  }

  /** Waits until {@code n} more reconciles finished; returns ms since the process started. */
  private static double awaitReconciles(OperatorProcess p, int n, double base, Duration timeout)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (reconciles(p) >= base + n) {
        return (System.nanoTime() - p.startNanos) / 1e6;
      }
      Thread.sleep(20);
    }
    throw new IllegalStateException(
        "only " + (reconciles(p) - base) + " of " + n + " reconciles within " + timeout);
  }

  /**
   * Image changes, one at a time: patch the image, wait for the Job POST, let the Job complete (the
   * status a Job controller writes), wait for the operator to record the version and send its
   * Event, then delete the Job (as its TTL would). Returns the reaction times (Deployment PATCH
   * arrival → Job POST arrival at the API) in ms, the operator's own share of them, and the
   * process's CPU seconds when half of the changes were done.
   */
  private double[][] imageChanges(OperatorProcess p, int n, int changes) throws Exception {
    double[] latencies = new double[changes];
    double[] operatorShare = new double[changes];
    double[] cpuAtHalf = new double[1];
    KubernetesClient c = api.client();
    for (int i = 0; i < changes; i++) {
      if (i == changes / 2) {
        cpuAtHalf[0] = p.cpuSeconds();
      }
      String dep = Workload.openfgaName(i % n);
      String version = "v2." + (versionCounter++) + ".0";
      String job = Names.job(dep);
      CompletableFuture<BenchApi.Request> created =
          api.next(
              r -> r.method().equals("POST") && r.path().startsWith(JOBS_PATH) && r.code() == 201);
      AtomicInteger events = new AtomicInteger();
      CompletableFuture<BenchApi.Request> settled =
          api.next(
              r ->
                  r.method().equals("POST")
                      && r.path().contains("/events")
                      && events.incrementAndGet() == 2);
      Workload.setVersion(c, dep, version);
      String depPath = "/apis/apps/v1/namespaces/bench/deployments/" + dep;
      long t0 = api.harnessArrival("PATCH", depPath);
      BenchApi.Request post = created.get(30, TimeUnit.SECONDS);
      latencies[i] = (post.atNanos() - t0) / 1e6;
      // the mock's own time on the way: answering the image PATCH (the watch event goes out
      // with it) and the operator's reads before its POST
      long apiNanos = api.harnessTook("PATCH", depPath);
      for (BenchApi.Request q : api.requests()) {
        if (q.atNanos() >= t0 && q.atNanos() < post.atNanos()) {
          apiNanos += q.tookNanos();
        }
      }
      operatorShare[i] = latencies[i] - apiNanos / 1e6;
      try {
        if (options.jobStatusAfter > 0) {
          lateJobController(p, dep);
        }
        Workload.podStarted(c, job);
        Workload.podSucceeded(c, job);
        Workload.completeJob(c, job);
        settled.get(30, TimeUnit.SECONDS);
        c.batch().v1().jobs().withName(job).delete();
      } finally {
        // a running pod left behind would hold the database of the next variant's Deployments
        Workload.podDeleted(c, job);
      }
      if (i == 0) {
        List<BenchApi.Request> all = api.requests();
        exampleCycle =
            all.stream()
                .filter(q -> q.atNanos() >= t0)
                .map(BenchApi.Request::kind)
                .collect(Collectors.joining(" → "));
      }
      Thread.sleep(20);
    }
    return new double[][] {latencies, operatorShare, cpuAtHalf};
  }

  /**
   * With {@code --job-status-after S}: a Job controller that gets to the new Job only after S
   * seconds (a busy controller manager; the API server here has none). The Deployment's status is
   * written then, as the Deployment controller does during a rollout, and the reconcile it wakes,
   * which finds the Job S seconds old and still without a status, is waited for.
   */
  private void lateJobController(OperatorProcess p, String dep) throws Exception {
    Thread.sleep(options.jobStatusAfter * 1000L);
    double base = options.metricsOff ? 0 : reconciles(p);
    api.client()
        .apps()
        .deployments()
        .withName(dep)
        .subresource("status")
        .patch(
            MERGE_PATCH, "{\"status\":{\"observedGeneration\":" + (1000 + versionCounter) + "}}");
    if (options.metricsOff) {
      Thread.sleep(SETTLE.toMillis());
    } else {
      awaitReconciles(p, 1, base, Duration.ofSeconds(30));
    }
  }

  /**
   * Heap per cached Deployment, full and trimmed ({@code CacheFootprint}), in a JVM of the
   * variant's version and object layout flags with a heap large enough for the full objects.
   */
  private String footprint(Variant v) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(v.home.resolve("bin/java").toString());
    v.flags.stream()
        .filter(f -> f.startsWith("-XX:+Use") || f.startsWith("-XX:-Use"))
        .forEach(cmd::add);
    cmd.addAll(
        List.of(
            "-Xmx512m",
            "-cp",
            System.getProperty("java.class.path"),
            "dev.openfga.operator.migration.CacheFootprint",
            "1000"));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor();
    return "Heap per cached Deployment (CacheFootprint, "
        + v.home.getFileName()
        + " "
        + cmd.stream().filter(f -> f.startsWith("-XX:")).collect(Collectors.joining(" "))
        + "):\n"
        + out.lines().map(l -> "    " + l).collect(Collectors.joining("\n"))
        + "\n";
  }

  // ---- CDS / AOT training ----

  private void train(Variant v, int n) throws Exception {
    Path cache =
        options
            .out
            .resolve(v.name.replace(':', '-') + (v.cache == Cache.CDS ? ".jsa" : ".aot"))
            .toAbsolutePath();
    Files.deleteIfExists(cache);
    List<String> flags = new ArrayList<>(v.flags);
    flags.add(
        v.cache == Cache.CDS ? "-XX:ArchiveClassesAtExit=" + cache : "-XX:AOTCacheOutput=" + cache);
    Path log = options.out.resolve(v.name.replace(':', '-') + "-training.log");
    long t = System.nanoTime();
    try (OperatorProcess p =
        OperatorProcess.start(
            v.home, flags, v.jar, api.operatorEnv(), !options.metricsOff, log, List.of(), null)) {
      p.awaitReady(Duration.ofSeconds(120));
      if (options.metricsOff) {
        Thread.sleep(SETTLE.toMillis());
      } else {
        awaitReconciles(p, n, 0, Duration.ofSeconds(300));
      }
      imageChanges(p, n, Math.min(20, options.changes));
      p.stop(Duration.ofSeconds(120));
    }
    if (!Files.exists(cache)) {
      throw new IllegalStateException("training run wrote no " + cache + "; see " + log);
    }
    caches.put(v.name, cache);
    System.out.printf(
        Locale.ROOT,
        "trained %s: %s (%d MiB) in %.1f s%n",
        v.name,
        cache.getFileName(),
        Files.size(cache) >> 20,
        (System.nanoTime() - t) / 1e9);
  }

  // ---- variants ----

  enum Cache {
    NONE,
    CDS,
    AOT
  }

  record Variant(String name, Path home, List<String> flags, Cache cache, Path jar) {}

  /**
   * A variant by name: {@code jdk17-defaults} and {@code jdk25-defaults} (no flags: what the JVM
   * takes on this machine), {@code image17}, {@code image17-cds}, {@code image25}, {@code
   * image25-aot} (the image's flags, in a container with {@code --container-memory}, plus an AppCDS
   * archive or AOT cache from a training run), or {@code
   * label=17|25|image17|image25|JAVA_HOME:flags...} ({@code image17}/{@code image25}: the image's
   * flags and container first) where the flag {@code +CDS} or {@code +AOT} adds a trained archive
   * and a "flag" {@code NAME=value} (no dash) sets an environment variable of the operator's
   * process. {@code image} is the Jib image's own runtime, flags and AOT cache, built from the jar
   * as {@code ./mvnw -Pimage verify} builds them ({@link #image}). The prefix {@code before:} runs
   * it with the baseline jar.
   */
  private Variant variant(String spec) throws Exception {
    Path jar = options.jar;
    String name = spec;
    String prefix = "";
    int colon = spec.indexOf(':');
    int eq = spec.indexOf('=');
    if (colon > 0 && (eq < 0 || colon < eq)) {
      prefix = spec.substring(0, colon);
      jar = prefix.equals("before") ? options.baselineJar : options.jars.get(prefix);
      if (jar == null) {
        throw new IllegalArgumentException(
            spec + ": no jar " + prefix + " (--baseline-jar, --jars)");
      }
      name = spec.substring(colon + 1);
    }
    // A container's memory limit is what the JVM sizes itself by (MaxRAM is that limit without
    // a cgroup); without it the JVM would size the heap by the whole machine's memory.
    List<String> container = List.of("-XX:MaxRAM=" + options.containerMemory);
    Variant v;
    if (name.contains("=")) {
      String label = name.substring(0, name.indexOf('='));
      String[] jdkAndFlags = name.substring(name.indexOf('=') + 1).split(":", 2);
      List<String> flags =
          jdkAndFlags.length > 1 && !jdkAndFlags[1].isBlank()
              ? Arrays.asList(jdkAndFlags[1].trim().split("\\s+"))
              : List.of();
      Cache cache = Cache.NONE;
      if (flags.contains("+AOT")) {
        cache = Cache.AOT;
      } else if (flags.contains("+CDS")) {
        cache = Cache.CDS;
      }
      flags = flags.stream().filter(f -> !f.equals("+AOT") && !f.equals("+CDS")).toList();
      String jdk = jdkAndFlags[0];
      if (jdk.equals("image")) {
        // the image as it ships (its runtime, jvm.options, AOT cache), then these flags
        Variant image = image(prefix.isEmpty() ? label : prefix + "-" + label, jar);
        return new Variant(
            prefix.isEmpty() ? label : prefix + ":" + label,
            image.home,
            concat(image.flags, flags),
            Cache.NONE,
            image.jar);
      }
      if (jdk.startsWith("image")) {
        // image17 / image25: the image's flags and the container's size, then these flags.
        flags = concat(concat(imageFlags(Integer.parseInt(jdk.substring(5))), container), flags);
        jdk = jdk.substring(5);
      }
      v = new Variant(label, home(jdk), flags, cache, jar);
    } else {
      v =
          switch (name) {
            case "jdk17-defaults" -> new Variant(name, options.jdk17, List.of(), Cache.NONE, jar);
            case "jdk25-defaults" -> new Variant(name, options.jdk25, List.of(), Cache.NONE, jar);
            case "image17" ->
                new Variant(
                    name, options.jdk17, concat(imageFlags(17), container), Cache.NONE, jar);
            case "image17-cds" ->
                new Variant(name, options.jdk17, concat(imageFlags(17), container), Cache.CDS, jar);
            case "image25" ->
                new Variant(
                    name, options.jdk25, concat(imageFlags(25), container), Cache.NONE, jar);
            case "image25-aot" ->
                new Variant(name, options.jdk25, concat(imageFlags(25), container), Cache.AOT, jar);
            case "image" -> image(prefix.isEmpty() ? name : prefix + "-" + name, jar);
            default -> throw new IllegalArgumentException("unknown variant " + name);
          };
    }
    String label = prefix.isEmpty() ? v.name : prefix + ":" + v.name;
    return new Variant(label, v.home, v.flags, v.cache, v.jar);
  }

  /**
   * The image's own runtime, flags and AOT cache, built into {@code target/bench/<dir>} as the
   * profile {@code image} builds them: {@code build-runtime.sh} (a jlink'd runtime of Java 25, the
   * image's {@code jvm.options}), then the image's training run ({@code AotTraining}, against the
   * mock API server). The operator runs from that folder's runtime and jar, with the cache named
   * where it is and not at {@code /app}, in a {@code --container-memory} container.
   */
  private Variant image(String dir, Path jar) throws Exception {
    // build-runtime.sh replaces the runtime and app folders of an earlier run
    Path out = options.out.resolve(dir).toAbsolutePath();
    Process build =
        new ProcessBuilder(
                "bash",
                "src/main/image/build-runtime.sh",
                "--jdk",
                options.jdk25.toString(),
                "--jar",
                jar.toString(),
                "--options-dir",
                "src/main/image",
                "--out",
                out.toString())
            .redirectErrorStream(true)
            .redirectOutput(options.out.resolve(dir + "-build.log").toFile())
            .start();
    if (build.waitFor() != 0) {
      throw new IllegalStateException(
          "build-runtime.sh failed; see " + options.out.resolve(dir + "-build.log"));
    }
    Path home = out.resolve("runtime/opt/java");
    // the image's runtime has no jcmd, which the benchmark reads the JVM's figures with
    Files.createSymbolicLink(home.resolve("bin/jcmd"), options.jdk25.resolve("bin/jcmd"));
    dev.openfga.operator.image.AotTraining.main(new String[] {out.toString()});
    Path app = out.resolve("app");
    if (!Files.isRegularFile(app.resolve("openfga-operator.aot"))) {
      throw new IllegalStateException(
          "no AOT cache in " + app + ": the variant image needs a JDK 25 (--jdk25)");
    }
    List<String> flags =
        List.of(
            "@" + app.resolve("jvm.options"),
            "-XX:MaxRAM=" + options.containerMemory,
            "-XX:AOTCache=" + app.resolve("openfga-operator.aot"));
    return new Variant("image", home, flags, Cache.NONE, app.resolve("openfga-operator.jar"));
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  private Path home(String jdk) {
    return switch (jdk) {
      case "17" -> options.jdk17;
      case "25" -> options.jdk25;
      default -> Path.of(jdk);
    };
  }

  /** The image's flags for a Java version, as build-runtime.sh puts them together. */
  static List<String> imageFlags(int feature) throws IOException {
    List<String> lines = new ArrayList<>(Files.readAllLines(IMAGE_OPTIONS));
    if (feature >= 25 && Files.exists(IMAGE_OPTIONS_25)) {
      lines.addAll(Files.readAllLines(IMAGE_OPTIONS_25));
    }
    return lines.stream()
        .map(String::trim)
        .filter(l -> !l.isEmpty() && !l.startsWith("#"))
        .toList();
  }

  // ---- report ----

  private String machine(List<Variant> variants) throws IOException {
    StringBuilder s = new StringBuilder();
    String cpu =
        Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
            .filter(l -> l.startsWith("model name"))
            .findFirst()
            .map(l -> l.substring(l.indexOf(':') + 1).trim())
            .orElse("?");
    String mem =
        Files.readAllLines(Path.of("/proc/meminfo")).stream()
            .filter(l -> l.startsWith("MemTotal"))
            .findFirst()
            .map(l -> (Long.parseLong(l.replaceAll("\\D", "")) >> 20) + " GiB")
            .orElse("?");
    s.append("Machine: ")
        .append(Runtime.getRuntime().availableProcessors())
        .append(" cores (")
        .append(cpu)
        .append("), ")
        .append(mem)
        .append(" memory, Linux ")
        .append(System.getProperty("os.version"))
        .append("\n");
    for (Path home : variants.stream().map(Variant::home).distinct().toList()) {
      s.append("JDK: ").append(home).append(" = ").append(jdkVersion(home)).append("\n");
    }
    s.append("Workload: N opted-in OpenFGA Deployments (converged, with status records) + ")
        .append(options.others)
        .append(" other Deployments + ")
        .append(options.others)
        .append(" other ConfigMaps in namespace ")
        .append(Workload.NS)
        .append("; every object with managedFields and the last-applied annotation; ")
        .append(options.changes)
        .append(" image changes per run\n");
    return s.toString();
  }

  private static String jdkVersion(Path home) throws IOException {
    Path release = home.resolve("release");
    if (!Files.exists(release)) {
      return "?";
    }
    Map<String, String> r = new LinkedHashMap<>();
    for (String l : Files.readAllLines(release)) {
      int eq = l.indexOf('=');
      if (eq > 0) {
        r.put(l.substring(0, eq), l.substring(eq + 1).replace("\"", ""));
      }
    }
    return r.getOrDefault("IMPLEMENTOR", "")
        + " "
        + r.getOrDefault("JAVA_RUNTIME_VERSION", r.getOrDefault("JAVA_VERSION", "?"));
  }

  private String report(List<Variant> variants) throws IOException {
    StringBuilder s = new StringBuilder();
    s.append(machine(variants)).append("\n");
    if (!footprint.isEmpty()) {
      s.append(footprint).append("\n");
    }
    for (Variant v : variants) {
      s.append("- `")
          .append(v.name)
          .append("`: ")
          .append(v.home.getFileName())
          .append(", jar ")
          .append(v.jar.getFileName())
          .append(", flags `")
          .append(String.join(" ", v.flags))
          .append(
              v.cache == Cache.NONE
                  ? ""
                  : v.cache == Cache.CDS ? " -XX:SharedArchiveFile=…" : " -XX:AOTCache=…")
          .append("`\n");
    }
    s.append("\n")
        .append(
            "| variant | N | start→ready s | of it the API answering the Deployment list s |"
                + " all reconciled s | RSS MiB | RSS anon / file MiB |"
                + " peak RSS MiB | heap used MiB | heap committed MiB | metaspace MiB | threads |"
                + " CPU s at sync | CPU s total |\n")
        .append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Result r : results) {
      if (r.error != null) {
        s.append(
            String.format(
                Locale.ROOT,
                "| %s | %d | failed: %s | | | | | %.0f | | | | | | |%n",
                r.variant,
                r.n,
                r.error,
                r.hwmKiB / 1024.0));
        continue;
      }
      s.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %.2f | %.2f | %.2f | %.0f | %.0f / %.0f | %.0f | %.1f | %.0f | %.1f | %d |"
                  + " %.1f | %.1f |%n",
              r.variant,
              r.n,
              r.readyMs / 1000,
              r.deploymentListSeconds(),
              r.reconciledMs / 1000,
              r.rssKiB / 1024.0,
              r.rssAnonKiB / 1024.0,
              r.rssFileKiB / 1024.0,
              r.hwmKiB / 1024.0,
              r.heapUsedKiB / 1024.0,
              r.heapCommittedKiB / 1024.0,
              r.metaspaceKiB / 1024.0,
              r.threads,
              r.cpuAtSync,
              r.cpuTotal));
    }
    s.append("\n")
        .append(
            "| variant | N | reaction p50 ms | p99 ms | max ms | of it the operator's own p50 / p99 ms"
                + " | API answer p50 ms |"
                + " start-up requests | writes at start-up | requests while idle |"
                + " requests for N converged events | operator CPU ms per converged event |"
                + " requests per image change |\n")
        .append("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|\n");
    for (Result r : results) {
      if (r.error != null) {
        continue;
      }
      s.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %.1f | %.1f | %.1f | %.1f / %.1f | %.1f | %s | %d | %d | %d | %.2f | %s |%n",
              r.variant,
              r.n,
              percentile(r.latenciesMs, 50),
              percentile(r.latenciesMs, 99),
              percentile(r.latenciesMs, 100),
              percentile(r.operatorShareMs, 50),
              percentile(r.operatorShareMs, 99),
              percentile(
                  r.migrationRequests.stream().mapToDouble(q -> q.tookNanos() / 1e6).toArray(), 50),
              summary(r.startup, 1),
              r.startup.stream().filter(BenchApi.Request::isWrite).count(),
              r.idleRequests,
              r.waveRequests.size(),
              r.waveCpuSeconds * 1000 / r.n,
              summary(r.migrationRequests, r.latenciesMs.length)));
    }
    s.append("\nThe operator's requests in one image change (the first of each run):\n\n");
    results.stream()
        .filter(r -> r.error == null)
        .map(r -> "    " + r.variant + ": " + r.exampleCycle + "\n")
        .distinct()
        .forEach(s::append);
    s.append("\nList and watch requests of the operator (the label selectors):\n\n");
    results.stream()
        .flatMap(r -> r.startup.stream())
        .filter(q -> q.kind().startsWith("LIST") || q.kind().startsWith("WATCH"))
        .map(
            q ->
                "    "
                    + q.method()
                    + " "
                    + q.path()
                        .replaceAll("resourceVersion=\\d+", "…")
                        .replaceAll("continue=[^&]*", "continue=…"))
        .distinct()
        .forEach(l -> s.append(l).append("\n"));
    return s.toString();
  }

  /** "3 LIST deployments, 1 WATCH jobs" — per {@code divisor} (e.g. per image change). */
  private static String summary(List<BenchApi.Request> requests, int divisor) {
    Map<String, Integer> counts = BenchApi.countByKind(requests);
    if (counts.isEmpty()) {
      return "none";
    }
    return counts.entrySet().stream()
        .map(
            e ->
                (divisor == 1
                        ? Integer.toString(e.getValue())
                        : String.format(Locale.ROOT, "%.2f", e.getValue() / (double) divisor))
                    + " "
                    + e.getKey())
        .collect(Collectors.joining(", "));
  }

  /** The 1-minute load average: other work on the machine shows here. */
  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    } catch (IOException e) {
      return "?";
    }
  }

  static double percentile(double[] values, double p) {
    if (values.length == 0) {
      return Double.NaN;
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int rank = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank))];
  }

  static final class Result {
    final String variant;
    final int n;
    double readyMs;
    double reconciledMs;
    double cpuAtReady;
    String cpuByThreadAtReady = "";
    String cpuByThreadInChanges = "";
    long startEpochNanos;

    /**
     * When, after the process started, the first request arrived and each kind of start-up list or
     * watch was received and answered: "first request S s, LIST deployments FROM–TO s, ..." (a
     * watch's answer is open-ended: its span is its arrival).
     */
    String timeline() {
      if (startup.isEmpty()) {
        return "";
      }
      StringBuilder s = new StringBuilder();
      s.append(
          String.format(
              Locale.ROOT,
              "first request %.2fs",
              (startup.get(0).atNanos() - startEpochNanos) / 1e9));
      Map<String, long[]> spans = new LinkedHashMap<>();
      for (BenchApi.Request q : startup) {
        if (q.kind().startsWith("LIST ") || q.kind().startsWith("WATCH ")) {
          long[] span = spans.computeIfAbsent(q.kind(), k -> new long[] {Long.MAX_VALUE, 0});
          span[0] = Math.min(span[0], q.atNanos());
          span[1] = Math.max(span[1], q.atNanos() + q.tookNanos());
        }
      }
      spans.forEach(
          (kind, span) ->
              s.append(
                  String.format(
                      Locale.ROOT,
                      ", %s %.2f–%.2fs",
                      kind,
                      (span[0] - startEpochNanos) / 1e9,
                      (span[1] - startEpochNanos) / 1e9)));
      return s.toString();
    }

    double cpuAtSync;
    double cpuTotal;
    double waveMs;
    double waveCpuSeconds;
    double changesCpuSeconds;
    double secondHalfCpuSeconds;
    double changesSystemSeconds;

    double cpuMsPerChange() {
      return changesCpuSeconds * 1000 / latenciesMs.length;
    }

    double cpuMsPerChangeSecondHalf() {
      return secondHalfCpuSeconds * 1000 / (latenciesMs.length - latenciesMs.length / 2);
    }

    long rssKiB;
    long hwmKiB;
    long rssAfterChangesKiB;
    long rssAnonKiB;
    long rssFileKiB;
    long heapUsedKiB;
    long heapCommittedKiB;
    long metaspaceKiB;
    int threads;
    int idleRequests;
    List<BenchApi.Request> startup = List.of();
    List<BenchApi.Request> waveRequests = List.of();
    List<BenchApi.Request> migrationRequests = List.of();
    double[] latenciesMs = new double[0];
    double[] operatorShareMs = new double[0];
    String exampleCycle = "";
    String error;
    String loadBefore = "";
    String loadAfter = "";

    /** With --memory-cgroup: the cgroup's peak, limit hits and OOM kills. */
    String cgroup = "";

    Result(String variant, int n) {
      this.variant = variant;
      this.n = n;
    }

    /**
     * How long the API took to answer the operator's paged list of Deployments at start-up (the
     * pages are asked one after the other, so this is time the operator waited before ready).
     */
    double deploymentListSeconds() {
      return startup.stream()
              .filter(q -> q.kind().equals("LIST deployments"))
              .mapToLong(BenchApi.Request::tookNanos)
              .sum()
          / 1e9;
    }

    String line() {
      if (error != null) {
        return String.format(
            Locale.ROOT,
            "%-24s N=%-5d FAILED (%s), peak RSS %.0f MiB",
            variant,
            n,
            error,
            hwmKiB / 1024.0);
      }
      return String.format(
          Locale.ROOT,
          "%-24s N=%-5d ready %.2fs (list %.2fs) reconciled %.2fs RSS %.0f MiB (peak %.0f) heap %.1f MiB"
              + " meta %.1f MiB threads %d CPU %.1fs/%.1fs first %.1f ms p50 %.1f ms p95 %.1f ms"
              + " p99 %.1f ms; writes at"
              + " start %d, converged-event requests %d; load %s→%s%s\n    CPU at ready %.2fs: %s\n"
              + "    CPU in the image changes %.2fs (%.2fs of it in the kernel; %.1f ms per change, %.1f ms in"
              + " the second half): %s\n"
              + "    %s",
          variant,
          n,
          readyMs / 1000,
          deploymentListSeconds(),
          reconciledMs / 1000,
          rssKiB / 1024.0,
          hwmKiB / 1024.0,
          heapUsedKiB / 1024.0,
          metaspaceKiB / 1024.0,
          threads,
          cpuAtSync,
          cpuTotal,
          latenciesMs.length == 0 ? Double.NaN : latenciesMs[0],
          percentile(latenciesMs, 50),
          percentile(latenciesMs, 95),
          percentile(latenciesMs, 99),
          startup.stream().filter(BenchApi.Request::isWrite).count(),
          waveRequests.size(),
          loadBefore,
          loadAfter,
          cgroup,
          cpuAtReady,
          cpuByThreadAtReady,
          changesCpuSeconds,
          changesSystemSeconds,
          cpuMsPerChange(),
          cpuMsPerChangeSecondHalf(),
          cpuByThreadInChanges,
          timeline());
    }
  }

  static final class Options {
    Path jar = Path.of("target/openfga-operator-all.jar");
    Path baselineJar;
    Map<String, Path> jars = new LinkedHashMap<>();
    Path out = Path.of("target/bench");
    List<Integer> sizes = List.of(10, 100, 1000);
    // the image as it ships: its own runtime, jvm.options and AOT cache (issue 12 asks for them)
    List<String> variants = List.of("image");
    int changes = 200;

    /** Seconds a new Job waits for its status (a Job controller that gets to it late); 0: none. */
    int jobStatusAfter;

    int others = 5000;
    int idleSeconds = 5;
    int repeat = 1;
    boolean nmt;
    boolean metricsOff;
    boolean realApi = true;
    String peerCommand;
    boolean jfr;
    boolean histo;
    boolean footprint = true;
    List<String> operatorArgs = List.of();
    Path jdk17 = Path.of(System.getProperty("java.home"));
    Path jdk25 = jdk25();
    String containerMemory = "128m";
    boolean memoryCgroup;

    /** With {@code --tuples N[,N...]}: the FGATuples benchmark ({@link TuplesBench}) instead. */
    List<Integer> tuples = List.of();

    /** The documents the tuples are spread over ({@code --tuples-objects}). */
    int tuplesObjects = 100;

    /**
     * With {@code --tuples-idle S}: the operator's CPU over S seconds with no FGATuples, then over S
     * seconds with the synced, unchanged {@code tuplesFrom} set (looked at every 30 s).
     */
    int tuplesIdleSeconds;

    List<String> openfgaDatastores = List.of("memory", "postgres");
    List<String> openfgaVersions = List.of("v1.10.0");

    /**
     * A JDK 25: {@code $JAVA25_HOME}, else a JDK 25 installed beside the one running the benchmark
     * (its {@code release} file says so), else the running one; {@code --jdk25} wins.
     */
    static Path jdk25() {
      String env = System.getenv("JAVA25_HOME");
      if (env != null && !env.isBlank()) {
        return Path.of(env);
      }
      Path running = Path.of(System.getProperty("java.home"));
      try (var siblings = java.nio.file.Files.list(running.getParent())) {
        return siblings
            .filter(
                dir -> {
                  try {
                    return java.nio.file.Files.readString(dir.resolve("release"))
                        .contains("JAVA_VERSION=\"25");
                  } catch (java.io.IOException e) {
                    return false;
                  }
                })
            .sorted()
            .findFirst()
            .orElse(running);
      } catch (java.io.IOException | RuntimeException e) {
        return running;
      }
    }

    static Options parse(String[] args) {
      Options o = new Options();
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        switch (a) {
          case "--jar" -> o.jar = Path.of(args[++i]);
          case "--baseline-jar" -> o.baselineJar = Path.of(args[++i]);
          case "--jars" -> {
            for (String named : args[++i].split(",")) {
              o.jars.put(
                  named.substring(0, named.indexOf('=')),
                  Path.of(named.substring(named.indexOf('=') + 1)));
            }
          }
          case "--out" -> o.out = Path.of(args[++i]);
          case "--sizes" ->
              o.sizes = Arrays.stream(args[++i].split(",")).map(Integer::valueOf).toList();
          case "--variants" -> o.variants = List.of(args[++i].split(","));
          case "--changes" -> o.changes = Integer.parseInt(args[++i]);
          case "--job-status-after" -> o.jobStatusAfter = Integer.parseInt(args[++i]);
          case "--others" -> o.others = Integer.parseInt(args[++i]);
          case "--idle" -> o.idleSeconds = Integer.parseInt(args[++i]);
          case "--repeat" -> o.repeat = Integer.parseInt(args[++i]);
          case "--nmt" -> o.nmt = true;
          case "--jfr" -> o.jfr = true;
          case "--histo" -> o.histo = true;
          case "--no-footprint" -> o.footprint = false;
          case "--metrics-off" -> o.metricsOff = true;
          case "--migration-pods" -> Workload.migrationPods = true;
          case "--peer-command" -> o.peerCommand = args[++i];
          case "--api" -> {
            String kind = args[++i];
            if (!kind.equals("mock") && !kind.equals("real")) {
              throw new IllegalArgumentException("--api mock|real, not " + kind);
            }
            o.realApi = kind.equals("real");
          }
          case "--operator-args" -> o.operatorArgs = List.of(args[++i].trim().split("\\s+"));
          case "--jdk17" -> o.jdk17 = Path.of(args[++i]);
          case "--jdk25" -> o.jdk25 = Path.of(args[++i]);
          case "--container-memory" -> o.containerMemory = args[++i];
          case "--memory-cgroup" -> o.memoryCgroup = true;
          case "--tuples" ->
              o.tuples = Arrays.stream(args[++i].split(",")).map(Integer::valueOf).toList();
          case "--tuples-objects" -> o.tuplesObjects = Integer.parseInt(args[++i]);
          case "--tuples-idle" -> o.tuplesIdleSeconds = Integer.parseInt(args[++i]);
          case "--openfga" -> o.openfgaDatastores = List.of(args[++i].split(","));
          case "--openfga-versions" -> o.openfgaVersions = List.of(args[++i].split(","));
          case "--compare" -> {
            o.sizes = List.of(1000);
            o.variants =
                List.of(
                    "jdk17-defaults",
                    "image17",
                    "image17-cds",
                    "jdk25-defaults",
                    "image25",
                    "image25-aot",
                    "image");
          }
          default -> throw new IllegalArgumentException("unknown argument " + a);
        }
      }
      return o;
    }
  }
}
