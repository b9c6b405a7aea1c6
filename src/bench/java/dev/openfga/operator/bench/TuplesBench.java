package dev.openfga.operator.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.realcluster.BenchOpenFga;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.tuples.FGATuples;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The FGATuples benchmark ({@code --tuples N}, docs/performance.md "FGATuples: 10,000 tuples"):
 * for each OpenFGA version and datastore ({@code --openfga-versions}, {@code --openfga}), a real
 * {@code openfga run} on 127.0.0.1 (the memory datastore, or PostgreSQL after {@code openfga
 * migrate}) behind a {@link CountingProxy}, the packaged operator with {@code --stores-and-models},
 * one FGAStore, a model written to its store through OpenFGA's API, and one FGATuples of N tuples
 * from a ConfigMap ({@code spec.tuplesFrom}: 10,000 inline tuples exceed the CRD's 5,000). Measures
 * the time from the create to {@code InSync=True} with {@code status.written == N}, OpenFGA's
 * requests by kind (counted at the proxy) and the Kubernetes ones (the audit log), the operator's
 * heap and RSS; then an annotation touch (the fast path: no OpenFGA request) and a re-check of the
 * unchanged set forced by an old {@code status.verifiedAt} (reads, no Write).
 */
final class TuplesBench {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(2))
          .build();
  private static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);

  /** The model: documents with viewers; the tuples are {@code document:dNNN#viewer@user:uNNNNN}. */
  private static final String MODEL =
      """
      {"schema_version":"1.1","type_definitions":[
        {"type":"user"},
        {"type":"document","relations":{"viewer":{"this":{}},"editor":{"this":{}}},
         "metadata":{"relations":{
           "viewer":{"directly_related_user_types":[{"type":"user"}]},
           "editor":{"directly_related_user_types":[{"type":"user"}]}}}}]}
      """;

  private final OperatorBench.Options options;
  private final Api api;
  private final OperatorBench.Variant variant;
  private final StringBuilder report = new StringBuilder();
  private int run;

  TuplesBench(OperatorBench.Options options, Api api, OperatorBench.Variant variant) {
    this.options = options;
    this.api = api;
    this.variant = variant;
  }

  /** Every version × datastore; the report, also written to {@code tuples-results.md}. */
  String run() throws Exception {
    if (api instanceof RealApi) {
      installCrds(api.client());
    }
    BenchOpenFga.Pg pg = null;
    try {
      List<String> lines = new ArrayList<>();
      for (String version : options.openfgaVersions) {
        for (String datastore : options.openfgaDatastores) {
          if (datastore.equals("postgres") && pg == null) {
            pg = new BenchOpenFga.Pg();
            report.insert(0, "PostgreSQL " + pg.version() + " (fsync off)\n");
          }
          for (int n : options.tuples) {
            String line = measure(version, datastore, pg, n);
            System.out.println(line);
            lines.add(line);
          }
        }
      }
      report
          .append("\n| OpenFGA | datastore | tuples | time to InSync s | OpenFGA requests to InSync |")
          .append(" tuples in Writes | Kubernetes requests to InSync | heap used MiB (metrics) |")
          .append(" heap after GC MiB | RSS MiB | peak RSS MiB | CPU s to InSync |")
          .append(" annotation touch: OpenFGA requests | re-check: s, OpenFGA requests |\n")
          .append("|---|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|---|---|\n");
      lines.forEach(l -> report.append(l).append("\n"));
      return report.toString();
    } finally {
      if (pg != null) {
        pg.close();
      }
    }
  }

  /** One version and datastore: a table row. */
  private String measure(String version, String datastore, BenchOpenFga.Pg pg, int n)
      throws Exception {
    String label = version.replace('.', '-') + "-" + datastore + "-" + n;
    run++;
    Path openfga = BenchOpenFga.openfga(version);
    List<String> store = new ArrayList<>(List.of("--datastore-engine", datastore));
    if (datastore.equals("postgres")) {
      String[] uris = pg.createDatabase("tuples_" + run);
      String out =
          exec(
              List.of(
                  openfga.toString(),
                  "migrate",
                  "--datastore-engine",
                  "postgres",
                  "--datastore-uri",
                  uris[0]),
              Duration.ofMinutes(2));
      if (out == null) {
        throw new IllegalStateException("openfga migrate failed");
      }
      store.addAll(List.of("--datastore-uri", uris[1]));
    }
    int http = freePort();
    int metrics = freePort();
    List<String> cmd = new ArrayList<>(List.of(openfga.toString(), "run"));
    cmd.addAll(store);
    cmd.addAll(
        List.of(
            "--http-addr",
            "127.0.0.1:" + http,
            "--grpc-addr",
            "127.0.0.1:" + freePort(),
            "--metrics-addr",
            "127.0.0.1:" + metrics,
            "--playground-enabled=false",
            "--log-level",
            "warn"));
    Process server =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(options.out.resolve("openfga-" + label + ".log").toFile())
            .start();
    String fgaUrl = "http://127.0.0.1:" + http;
    try (CountingProxy proxy = CountingProxy.start(fgaUrl)) {
      awaitHealthy(server, fgaUrl);
      List<String> args = new ArrayList<>(List.of("--stores-and-models", "true"));
      args.addAll(List.of("--openfga-servers", proxy.url()));
      args.addAll(options.operatorArgs);
      Path log = options.out.resolve("tuples-" + label + ".log");
      KubernetesClient c = api.client();
      String storeName = "store-" + run;
      String tuplesName = "tuples-" + run;
      String source = "tuples-source-" + run;
      MemoryCgroup cgroup =
          options.memoryCgroup ? MemoryCgroup.create(options.containerMemory, "tuples-" + run) : null;
      try (cgroup;
          OperatorProcess p =
              OperatorProcess.start(
                  variant.home(),
                  variant.flags(),
                  variant.jar(),
                  api.operatorEnv(),
                  true,
                  log,
                  args,
                  cgroup)) {
        p.awaitReady(Duration.ofSeconds(120));
        String storeId = createStore(c, storeName, proxy.url());
        postJson(fgaUrl + "/stores/" + storeId + "/authorization-models", MODEL);
        c.resource(sourceConfigMap(source, n)).create();
        Idle before = idle(p, proxy);
        proxy.take();
        api.clearRequests();
        String grpcBefore = get("http://127.0.0.1:" + metrics + "/metrics");
        double cpu0 = p.cpuSeconds();
        long t0 = System.nanoTime();
        c.resource(tuples(tuplesName, storeName, source)).create();
        FGATuples synced = awaitInSync(c, tuplesName, n, Duration.ofMinutes(15), p);
        double toInSync = (System.nanoTime() - t0) / 1e9;
        double cpu = p.cpuSeconds() - cpu0;
        // the reconcile the operator's own status write wakes: the fast path, nothing to OpenFGA
        Thread.sleep(3000);
        CountingProxy.Snapshot sync = proxy.take();
        String grpc = grpcDelta(grpcBefore, get("http://127.0.0.1:" + metrics + "/metrics"));
        List<BenchApi.Request> kube = api.requests();
        String heapMetrics = heapFromMetrics(p.metrics());
        long[] rss = p.rssKiB();
        long[] heap = p.heapAfterGc();

        // an annotation touch: a reconcile that finds the set unchanged and recently verified
        api.clearRequests();
        double base = reconciles(p);
        c.resources(FGATuples.class)
            .withName(tuplesName)
            .edit(
                t -> {
                  t.getMetadata().getAnnotations().put("bench/touched", "1");
                  return t;
                });
        awaitReconciles(p, base + 1, Duration.ofSeconds(30));
        Thread.sleep(2000);
        CountingProxy.Snapshot touch = proxy.take();
        List<BenchApi.Request> touchKube = api.requests();

        // a re-check of the unchanged set: verifiedAt older than the 5 minutes of RECHECK
        api.clearRequests();
        String old = "2000-01-01T00:00:00Z";
        long t1 = System.nanoTime();
        c.resources(FGATuples.class)
            .withName(tuplesName)
            .subresource("status")
            .patch(MERGE, "{\"status\":{\"verifiedAt\":\"" + old + "\"}}");
        FGATuples rechecked = awaitVerified(c, tuplesName, old, Duration.ofMinutes(5));
        double recheck = (System.nanoTime() - t1) / 1e9;
        Thread.sleep(3000);
        CountingProxy.Snapshot again = proxy.take();
        List<BenchApi.Request> againKube = api.requests();
        Idle after = idle(p, proxy);
        long[] rssEnd = p.rssKiB();

        report
            .append("\n### ")
            .append(version)
            .append(", ")
            .append(datastore)
            .append(", ")
            .append(n)
            .append(" tuples\n\n")
            .append(
                String.format(
                    Locale.ROOT,
                    "- to InSync: %.2f s; status desired %d, written %d, preExisting %d;"
                        + " conditions %s%n",
                    toInSync,
                    synced.getStatus().getDesired(),
                    synced.getStatus().getWritten(),
                    synced.getStatus().getPreExisting(),
                    conditions(synced)))
            .append("- OpenFGA requests to InSync (proxy): ")
            .append(sync.summary())
            .append("; tuple keys in successful Writes: ")
            .append(sync.tuplesWritten())
            .append(" written, ")
            .append(sync.tuplesDeleted())
            .append(" deleted\n")
            .append("- OpenFGA's own grpc_server_handled_total over the same span: ")
            .append(grpc)
            .append("\n- Kubernetes requests of the operator to InSync: ")
            .append(kubeSummary(kube))
            .append("\n- heap (jvm_memory_used_bytes{area=\"heap\"}) at InSync: ")
            .append(heapMetrics)
            .append(
                String.format(
                    Locale.ROOT,
                    " MiB; after GC.run %.1f MiB used of %.1f committed; RSS %.0f MiB"
                        + " (anon %.0f, file %.0f), VmHWM %.0f MiB%n",
                    heap[0] / 1024.0,
                    heap[1] / 1024.0,
                    rss[0] / 1024.0,
                    rss[2] / 1024.0,
                    rss[3] / 1024.0,
                    rss[1] / 1024.0))
            .append("- annotation touch: OpenFGA ")
            .append(touch.summary())
            .append("; Kubernetes ")
            .append(kubeSummary(touchKube))
            .append("\n")
            .append(
                String.format(
                    Locale.ROOT,
                    "- re-check (status.verifiedAt set to %s): verified again in %.2f s; OpenFGA"
                        + " %s; tuple keys written %d; Kubernetes %s; status written %d%n",
                    old,
                    recheck,
                    again.summary(),
                    again.tuplesWritten(),
                    kubeSummary(againKube),
                    rechecked.getStatus().getWritten()))
            .append(
                options.tuplesIdleSeconds == 0
                    ? ""
                    : "- idle, before the FGATuples: "
                        + before.text()
                        + "\n- idle, the synced set (its source read every 30 s): "
                        + after.text()
                        + "\n")
            .append(
                String.format(
                    Locale.ROOT,
                    "- at the end: RSS %.0f MiB, VmHWM %.0f MiB%s%n",
                    rssEnd[0] / 1024.0,
                    rssEnd[1] / 1024.0,
                    cgroup == null ? "" : "; " + cgroup.summary()));
        return String.format(
            Locale.ROOT,
            "| %s | %s | %d | %.2f | %d (%d Write) | %d | %d (%d writes) | %s | %.1f | %.0f | %.0f |"
                + " %.1f | %d | %.2f, %d (%d Write) |",
            version,
            datastore,
            n,
            toInSync,
            sync.total(),
            sync.of("/write"),
            sync.tuplesWritten(),
            kube.size(),
            kube.stream().filter(BenchApi.Request::isWrite).count(),
            heapMetrics,
            heap[0] / 1024.0,
            rss[0] / 1024.0,
            Math.max(rss[1], rssEnd[1]) / 1024.0,
            cpu,
            touch.total(),
            recheck,
            again.total(),
            again.of("/write"));
      } finally {
        cleanUp(c, tuplesName, storeName, source);
      }
    } finally {
      server.destroy();
      if (!server.waitFor(20, TimeUnit.SECONDS)) {
        server.destroyForcibly();
        server.waitFor();
      }
    }
  }

  // ---- the objects ----

  private String createStore(KubernetesClient c, String name, String url) throws Exception {
    FGAStore s = new FGAStore();
    s.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(Workload.NS).build());
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName("bench-" + name);
    spec.setDeletionPolicy(FGAStore.DeletionPolicy.Retain);
    FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
    ref.setUrl(url);
    spec.setOpenfgaRef(ref);
    s.setSpec(spec);
    c.resources(FGAStore.class).resource(s).create();
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline) {
      FGAStore got = c.resources(FGAStore.class).withName(name).get();
      if (got.getStatus() != null
          && got.getStatus().getStoreId() != null
          && Conditions.isTrue(got.getStatus().getConditions(), Conditions.READY)) {
        return got.getStatus().getStoreId();
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("FGAStore " + name + " not ready within 60 s");
  }

  /** {@code objects} documents × N/objects users, viewer: as JSON, one ConfigMap key. */
  private io.fabric8.kubernetes.api.model.ConfigMap sourceConfigMap(String name, int n) {
    int objects = Math.min(options.tuplesObjects, n);
    int users = (n + objects - 1) / objects;
    ArrayNode list = JSON.createArrayNode();
    for (int i = 0; i < n; i++) {
      ObjectNode t = list.addObject();
      t.put("user", String.format(Locale.ROOT, "user:u%05d", i % users));
      t.put("relation", "viewer");
      t.put("object", String.format(Locale.ROOT, "document:d%03d", i / users));
    }
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(Workload.NS)
        .endMetadata()
        .addToData("tuples.json", list.toString())
        .build();
  }

  private static FGATuples tuples(String name, String store, String source) {
    FGATuples t = new FGATuples();
    t.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withNamespace(Workload.NS)
            .withAnnotations(new java.util.HashMap<>(Map.of("bench/run", name)))
            .build());
    FGATuples.Spec spec = new FGATuples.Spec();
    spec.setStoreRef(new FGAStore.NameRef(store));
    FGATuples.TuplesFrom from = new FGATuples.TuplesFrom();
    from.setConfigMapKeyRef(new FGAModel.KeyRef(source, "tuples.json"));
    spec.setTuplesFrom(from);
    t.setSpec(spec);
    return t;
  }

  private static FGATuples awaitInSync(
      KubernetesClient c, String name, int n, Duration timeout, OperatorProcess p)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    FGATuples t = null;
    while (System.nanoTime() < deadline) {
      if (!p.process.isAlive()) {
        throw new IllegalStateException("the operator exited with " + p.process.exitValue());
      }
      t = c.resources(FGATuples.class).withName(name).get();
      if (t.getStatus() != null
          && Conditions.isTrue(t.getStatus().getConditions(), Conditions.IN_SYNC)
          && t.getStatus().getWritten() != null
          && t.getStatus().getWritten() + t.getStatus().getPreExisting() == n) {
        return t;
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException(
        "FGATuples "
            + name
            + " not InSync within "
            + timeout
            + ": "
            + (t == null ? "gone" : conditions(t)));
  }

  private static FGATuples awaitVerified(
      KubernetesClient c, String name, String old, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      FGATuples t = c.resources(FGATuples.class).withName(name).get();
      if (t.getStatus() != null
          && t.getStatus().getVerifiedAt() != null
          && !old.equals(t.getStatus().getVerifiedAt())) {
        return t;
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("FGATuples " + name + " not verified again within " + timeout);
  }

  private static String conditions(FGATuples t) {
    if (t.getStatus() == null) {
      return "no status";
    }
    StringBuilder s = new StringBuilder();
    t.getStatus()
        .getConditions()
        .forEach(
            k ->
                s.append(s.length() == 0 ? "" : "; ")
                    .append(k.getType())
                    .append('=')
                    .append(k.getStatus())
                    .append(' ')
                    .append(k.getReason()));
    return s.toString();
  }

  /** Deletes the run's objects: after the operator stopped, its finalizers are taken off. */
  private void cleanUp(KubernetesClient c, String tuples, String store, String source) {
    try {
      for (Class<? extends HasMetadata> kind : List.of(FGATuples.class, FGAStore.class)) {
        String name = kind == FGATuples.class ? tuples : store;
        var r = c.resources(kind).withName(name);
        if (r.get() != null) {
          r.patch(MERGE, "{\"metadata\":{\"finalizers\":null}}");
          r.delete();
        }
      }
      c.configMaps().withName(source).delete();
      c.configMaps().withName(tuples + "-tuples-record").delete();
    } catch (RuntimeException e) {
      System.out.println("clean-up of " + tuples + ": " + e.getMessage());
    }
  }

  // ---- CRDs ----

  /**
   * The chart's CRDs for FGAStore, FGAModel and FGATuples (the template lines taken out); when the
   * chart has no FGATuples CRD yet, a permissive one (any spec and status, a status subresource).
   */
  static void installCrds(KubernetesClient c) throws IOException {
    Path templates = Path.of("charts/openfga-operator/templates");
    List<String> texts = new ArrayList<>();
    for (String f : List.of("crd-fgastores.yaml", "crd-fgamodels.yaml", "crd-fgatuples.yaml")) {
      Path file = templates.resolve(f);
      if (Files.exists(file)) {
        // from its apiVersion on (the template's opening comment spans lines), no template line
        String text = Files.readString(file);
        texts.add(
            text.substring(text.indexOf("\napiVersion:") + 1)
                .lines()
                .filter(l -> !l.contains("{{"))
                .reduce("", (a, b) -> a + b + "\n"));
      } else if (f.equals("crd-fgatuples.yaml")) {
        System.out.println("no " + file + ": a permissive FGATuples CRD instead");
        texts.add(PERMISSIVE_TUPLES_CRD);
      }
    }
    for (String text : texts) {
      CustomResourceDefinition crd =
          c.getKubernetesSerialization().unmarshal(text, CustomResourceDefinition.class);
      c.resource(crd).forceConflicts().serverSideApply();
      c.apiextensions()
          .v1()
          .customResourceDefinitions()
          .withName(crd.getMetadata().getName())
          .waitUntilCondition(
              d ->
                  d.getStatus() != null
                      && d.getStatus().getConditions() != null
                      && d.getStatus().getConditions().stream()
                          .anyMatch(
                              k -> "Established".equals(k.getType()) && "True".equals(k.getStatus())),
              1,
              TimeUnit.MINUTES);
    }
  }

  static final String PERMISSIVE_TUPLES_CRD =
      """
      apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      metadata:
        name: fgatuples.openfga.dev
      spec:
        group: openfga.dev
        scope: Namespaced
        names: {kind: FGATuples, listKind: FGATuplesList, plural: fgatuples, singular: fgatuples}
        versions:
          - name: v1alpha1
            served: true
            storage: true
            subresources: {status: {}}
            schema:
              openAPIV3Schema:
                type: object
                properties:
                  spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
                  status: {type: object, x-kubernetes-preserve-unknown-fields: true}
      """;

  // ---- helpers ----

  private static void awaitHealthy(Process server, String url) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline) {
      if (!server.isAlive()) {
        throw new IllegalStateException("openfga exited with " + server.exitValue());
      }
      try {
        HttpResponse<Void> r =
            HTTP.send(
                HttpRequest.newBuilder(URI.create(url + "/healthz")).build(),
                HttpResponse.BodyHandlers.discarding());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("openfga not healthy within 60 s");
  }

  private static String postJson(String url, String body) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() / 100 != 2) {
      throw new IllegalStateException("POST " + url + ": " + r.statusCode() + " " + r.body());
    }
    return r.body();
  }

  private static String get(String url) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /** The change of OpenFGA's grpc_server_handled_total per method and code between two scrapes. */
  static String grpcDelta(String before, String after) {
    Map<String, Double> b = grpcHandled(before);
    Map<String, Double> a = grpcHandled(after);
    StringBuilder s = new StringBuilder();
    a.forEach(
        (k, v) -> {
          double d = v - b.getOrDefault(k, 0.0);
          if (d > 0) {
            s.append(s.length() == 0 ? "" : ", ").append((long) d).append(' ').append(k);
          }
        });
    return s.length() == 0 ? "none" : s.toString();
  }

  private static Map<String, Double> grpcHandled(String metrics) {
    Map<String, Double> m = new TreeMap<>();
    var p =
        java.util.regex.Pattern.compile(
            "^grpc_server_handled_total\\{grpc_code=\"(\\w+)\",grpc_method=\"(\\w+)\".*\\} (\\S+)$",
            java.util.regex.Pattern.MULTILINE);
    var matcher = p.matcher(metrics);
    while (matcher.find()) {
      m.put(matcher.group(2) + " " + matcher.group(1), Double.parseDouble(matcher.group(3)));
    }
    return m;
  }

  /** jvm_memory_used_bytes{area="heap"} summed over the pools, in MiB. */
  static String heapFromMetrics(String metrics) {
    double sum = 0;
    for (String line : metrics.split("\n")) {
      if (line.startsWith("jvm_memory_used_bytes{") && line.contains("area=\"heap\"")) {
        String[] parts = line.trim().split(" ");
        sum += Double.parseDouble(parts[parts.length - 1]);
      }
    }
    return String.format(Locale.ROOT, "%.1f", sum / (1024 * 1024));
  }

  private static String kubeSummary(List<BenchApi.Request> requests) {
    Map<String, Integer> counts = BenchApi.countByKind(requests);
    if (counts.isEmpty()) {
      return "none";
    }
    StringBuilder s = new StringBuilder();
    counts.forEach(
        (k, v) -> s.append(s.length() == 0 ? "" : ", ").append(v).append(' ').append(k));
    return s.toString();
  }

  /** What the operator did while left alone for {@code --tuples-idle} seconds. */
  private record Idle(
      int seconds,
      double reconciles,
      double cpuSeconds,
      CountingProxy.Snapshot openfga,
      List<BenchApi.Request> kube) {
    String text() {
      return String.format(
          Locale.ROOT,
          "%d s, %.0f reconciles, operator CPU %.3f s (%.2f ms a second); OpenFGA %s; Kubernetes %s",
          seconds,
          reconciles,
          cpuSeconds,
          cpuSeconds * 1000 / seconds,
          openfga.summary(),
          kubeSummary(kube));
    }
  }

  /** The operator left alone for {@code --tuples-idle} seconds (none: nothing measured). */
  private Idle idle(OperatorProcess p, CountingProxy proxy) throws Exception {
    int seconds = options.tuplesIdleSeconds;
    if (seconds == 0) {
      return null;
    }
    proxy.take();
    api.clearRequests();
    double r0 = reconciles(p);
    double cpu0 = p.cpuSeconds();
    Thread.sleep(seconds * 1000L);
    double cpu = p.cpuSeconds() - cpu0;
    double looks = reconciles(p) - r0;
    return new Idle(seconds, looks, cpu, proxy.take(), api.requests());
  }

  private static double reconciles(OperatorProcess p) throws Exception {
    String m = p.metrics();
    return OperatorProcess.sample(m, "operator_sdk_reconciliations_success_total")
        + OperatorProcess.sample(m, "operator_sdk_reconciliations_failed_total");
  }

  private static void awaitReconciles(OperatorProcess p, double target, Duration timeout)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (reconciles(p) >= target) {
        return;
      }
      Thread.sleep(20);
    }
    throw new IllegalStateException("no reconcile within " + timeout);
  }

  /** Runs a command to its end; its output, or null when it failed. */
  private static String exec(List<String> cmd, Duration timeout) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      System.out.println(String.join(" ", cmd.subList(0, 2)) + " failed:\n" + out);
      return null;
    }
    return out;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }
}
