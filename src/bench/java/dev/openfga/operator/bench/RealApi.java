package dev.openfga.operator.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.openfga.operator.realcluster.ControlPlane;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * A real kube-apiserver with etcd (the real-cluster tier's binaries, no controller manager), on
 * 127.0.0.1 with TLS. The operator's requests are recorded from the API server's own audit log: the
 * time each request was received ({@code requestReceivedTimestamp}) and, for requests that end, how
 * long the server took ({@code stageTimestamp} of {@code ResponseComplete} minus that). The
 * operator authenticates as {@link ControlPlane#BENCH_USER} (cluster-admin, so that a peer operator
 * with other RBAC needs runs too); the harness as {@code admin}, whose Deployment patches are
 * audited too (the start of a reaction).
 */
final class RealApi implements Api {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static final String POLICY =
      """
      apiVersion: audit.k8s.io/v1
      kind: Policy
      omitStages: ["RequestReceived"]
      rules:
      - level: Metadata
        users: ["%s"]
      - level: Metadata
        users: ["admin"]
        verbs: ["patch"]
        resources: [{group: "apps", resources: ["deployments"]}]
      - level: None
      """
          .formatted(ControlPlane.BENCH_USER);

  private final Path dir;
  private final Path auditLog;
  private final ControlPlane plane;
  private final KubernetesClient client;
  private final List<BenchApi.Request> requests = new CopyOnWriteArrayList<>();
  private final Map<String, long[]> harness = new ConcurrentHashMap<>();
  private final List<Waiter> waiters = new CopyOnWriteArrayList<>();
  private final Set<String> seen = new HashSet<>();
  private final AtomicLong pagedLists = new AtomicLong();
  private final Thread tailer;
  private volatile boolean closed;

  private record Waiter(Predicate<BenchApi.Request> match, CompletableFuture<BenchApi.Request> f) {}

  RealApi() throws IOException {
    dir = Files.createTempDirectory("bench-audit-");
    Path policy = dir.resolve("audit-policy.yaml");
    Files.writeString(policy, POLICY);
    auditLog = dir.resolve("audit.log");
    plane =
        ControlPlane.apiServerOnly(
            List.of(
                "--audit-policy-file=" + policy,
                "--audit-log-path=" + auditLog,
                "--audit-log-format=json",
                "--audit-log-mode=blocking",
                "--audit-log-maxsize=0",
                // the bench writes thousands of objects quickly
                "--max-requests-inflight=800",
                "--max-mutating-requests-inflight=400"));
    client =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(plane.adminConfig())
                    .withNamespace(Workload.NS)
                    .withUserAgent(BenchApi.HARNESS_AGENT)
                    .withRequestTimeout(120_000)
                    .build())
            .build();
    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(Workload.NS).endMetadata().build())
        .create();
    tailer = new Thread(this::tail, "audit-tailer");
    tailer.setDaemon(true);
    tailer.start();
  }

  @Override
  public String describe() {
    return "kube-apiserver "
        + ControlPlane.VERSION
        + " with etcd (no controller manager), requests recorded from its audit log";
  }

  @Override
  public String url() {
    return plane.url();
  }

  @Override
  public Map<String, String> operatorEnv() {
    return Map.of(
        "KUBERNETES_MASTER", plane.url(),
        "KUBERNETES_CERTS_CA_FILE", plane.caFile().toString(),
        "KUBERNETES_AUTH_TOKEN", plane.benchToken());
  }

  /** A kubeconfig for a peer operator: the same user as ours. */
  Path kubeconfig() {
    return plane.kubeconfig(ControlPlane.BENCH_USER, plane.benchToken());
  }

  @Override
  public KubernetesClient client() {
    return client;
  }

  @Override
  public List<BenchApi.Request> requests() {
    return new ArrayList<>(requests);
  }

  @Override
  public int requestCount() {
    return requests.size();
  }

  @Override
  public void clearRequests() {
    requests.clear();
  }

  /** The harness's last request per method and path, taken by {@link #harnessArrival}. */
  private final Map<String, long[]> lastHarness = new ConcurrentHashMap<>();

  /** Waits (up to 5 s) until the audit log shows the harness's request that just returned. */
  @Override
  public long harnessArrival(String method, String pathPrefix) {
    String key = method + " " + pathPrefix;
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (System.nanoTime() < deadline) {
      long[] entry = harness.remove(key);
      if (entry != null) {
        lastHarness.put(key, entry);
        return entry[0];
      }
      sleep(2);
    }
    throw new IllegalStateException("no audit entry for the harness's " + key);
  }

  @Override
  public long harnessTook(String method, String pathPrefix) {
    long[] entry = lastHarness.get(method + " " + pathPrefix);
    return entry == null ? 0 : entry[1];
  }

  @Override
  public CompletableFuture<BenchApi.Request> next(Predicate<BenchApi.Request> match) {
    CompletableFuture<BenchApi.Request> f = new CompletableFuture<>();
    waiters.add(new Waiter(match, f));
    return f;
  }

  @Override
  public long pagedLists() {
    return pagedLists.get();
  }

  /** Reads the audit log as it grows, one JSON event a line. */
  private void tail() {
    long position = 0;
    StringBuilder partial = new StringBuilder();
    while (!closed) {
      try {
        if (Files.exists(auditLog)) {
          try (RandomAccessFile file = new RandomAccessFile(auditLog.toFile(), "r")) {
            long length = file.length();
            if (length > position) {
              byte[] bytes = new byte[(int) (length - position)];
              file.seek(position);
              file.readFully(bytes);
              position = length;
              partial.append(new String(bytes, StandardCharsets.UTF_8));
              int newline;
              while ((newline = partial.indexOf("\n")) >= 0) {
                String line = partial.substring(0, newline);
                partial.delete(0, newline + 1);
                if (!line.isBlank()) {
                  event(JSON.readTree(line));
                }
              }
            }
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      sleep(1);
    }
  }

  private void event(JsonNode e) {
    String stage = e.path("stage").asText();
    String id = e.path("auditID").asText();
    // a watch is logged when its response starts and again when it ends: keep the first
    if (!seen.add(id)) {
      return;
    }
    long received = nanos(e.path("requestReceivedTimestamp").asText());
    long took =
        stage.equals("ResponseComplete") ? nanos(e.path("stageTimestamp").asText()) - received : 0;
    String method =
        switch (e.path("verb").asText()) {
          case "create" -> "POST";
          case "update" -> "PUT";
          case "patch" -> "PATCH";
          case "delete", "deletecollection" -> "DELETE";
          default -> "GET";
        };
    String uri = e.path("requestURI").asText();
    int code = e.path("responseStatus").path("code").asInt(200);
    String user = e.path("user").path("username").asText();
    if (user.equals("admin")) {
      int q = uri.indexOf('?');
      harness.put(method + " " + (q < 0 ? uri : uri.substring(0, q)), new long[] {received, took});
      return;
    }
    if (method.equals("GET") && uri.contains("limit=")) {
      pagedLists.incrementAndGet();
    }
    BenchApi.Request r = new BenchApi.Request(received, took, method, uri, code);
    requests.add(r);
    for (Waiter w : waiters) {
      if (w.match().test(r)) {
        waiters.remove(w);
        w.f().complete(r);
      }
    }
  }

  /** An RFC 3339 time with microseconds as nanoseconds since the epoch. */
  private static long nanos(String time) {
    Instant t = Instant.parse(time);
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    closed = true;
    client.close();
    plane.close();
  }
}
