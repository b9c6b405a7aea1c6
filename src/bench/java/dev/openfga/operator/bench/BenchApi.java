package dev.openfga.operator.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReviewBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.InetAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * The local API server: fabric8's mock in CRUD mode on 127.0.0.1, with every request of the
 * operator recorded at arrival (method, path, time, how long the mock took), list paging ({@code
 * limit}/{@code continue}, which the mock lacks, from a snapshot taken at the first page as a real
 * API server does), and waiters for "the next request like this". Requests of the harness itself
 * carry the user agent {@link #HARNESS_AGENT} and are not recorded.
 */
final class BenchApi implements Api {
  static final String HARNESS_AGENT = "openfga-bench-harness";
  private static final ObjectMapper JSON = Serialization.jsonMapper();

  /** One request of the operator. */
  record Request(long atNanos, long tookNanos, String method, String path, int code) {
    /**
     * {@code LIST deployments}, {@code GET jobs/{name}}, {@code PATCH deployments/{name}/status}.
     */
    String kind() {
      return BenchApi.kind(method, path);
    }

    boolean isWrite() {
      return !method.equals("GET");
    }
  }

  private record Waiter(Predicate<Request> match, CompletableFuture<Request> result) {}

  private record Snapshot(ObjectNode list, ArrayNode items) {}

  private final Recorder dispatcher = new Recorder();
  private final KubernetesMockServer server;
  private final KubernetesClient client;

  BenchApi() throws Exception {
    server =
        new KubernetesMockServer(
            new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
    server.init(InetAddress.getByName("127.0.0.1"), 0);
    Config config =
        new ConfigBuilder(Config.empty())
            .withMasterUrl(url())
            .withTrustCerts(true)
            .withNamespace(Workload.NS)
            .withUserAgent(HARNESS_AGENT)
            .withRequestTimeout(120_000)
            .build();
    client = new KubernetesClientBuilder().withConfig(config).build();
  }

  @Override
  public String describe() {
    return "fabric8's mock API server (CRUD mode, in the harness's JVM), requests recorded at arrival";
  }

  @Override
  public String url() {
    return "http://127.0.0.1:" + server.getPort();
  }

  @Override
  public Map<String, String> operatorEnv() {
    return Map.of("KUBERNETES_MASTER", url(), "KUBERNETES_TRUST_CERTIFICATES", "true");
  }

  @Override
  public KubernetesClient client() {
    return client;
  }

  /** The operator's requests recorded so far (a copy). */
  @Override
  public List<Request> requests() {
    return new ArrayList<>(dispatcher.requests);
  }

  @Override
  public int requestCount() {
    return dispatcher.requests.size();
  }

  @Override
  public void clearRequests() {
    dispatcher.requests.clear();
  }

  /** When the harness's last request to this path arrived (nanoTime), or 0. */
  @Override
  public long harnessArrival(String method, String pathPrefix) {
    return dispatcher.harnessArrivals.getOrDefault(method + " " + pathPrefix, 0L);
  }

  /** How long the mock took to answer the harness's last request to this path (ns), or 0. */
  @Override
  public long harnessTook(String method, String pathPrefix) {
    return dispatcher.harnessTook.getOrDefault(method + " " + pathPrefix, 0L);
  }

  /** Completes with the next operator request that matches. */
  @Override
  public CompletableFuture<Request> next(Predicate<Request> match) {
    CompletableFuture<Request> f = new CompletableFuture<>();
    dispatcher.waiters.add(new Waiter(match, f));
    return f;
  }

  /** Operator list requests that asked for pages. */
  @Override
  public long pagedLists() {
    return dispatcher.pagedLists.get();
  }

  @Override
  public void close() {
    client.close();
    server.destroy();
  }

  /** Counts by {@link Request#kind()}, sorted. */
  static Map<String, Integer> countByKind(List<Request> requests) {
    Map<String, Integer> counts = new TreeMap<>();
    for (Request r : requests) {
      counts.merge(r.kind(), 1, Integer::sum);
    }
    return counts;
  }

  static String kind(String method, String fullPath) {
    int q = fullPath.indexOf('?');
    String path = q < 0 ? fullPath : fullPath.substring(0, q);
    String query = q < 0 ? "" : fullPath.substring(q + 1);
    String[] s = path.split("/");
    // /api/v1/namespaces/ns/RES[/NAME[/SUB]] or /apis/G/V/namespaces/ns/RES[/NAME[/SUB]]
    int i = path.startsWith("/apis/") ? 4 : 3;
    String resource;
    String rest = "";
    if (s.length > i + 1 && s[i].equals("namespaces")) {
      resource = s.length > i + 2 ? s[i + 2] : "namespaces";
      if (s.length > i + 3) {
        rest = "/{name}";
      }
      if (s.length > i + 4) {
        rest += "/" + s[i + 4];
      }
    } else {
      resource = s.length > i ? s[i] : path;
      if (s.length > i + 1) {
        rest = "/{name}";
      }
    }
    String verb = method;
    if (method.equals("GET") && rest.isEmpty()) {
      verb = query.contains("watch=true") ? "WATCH" : "LIST";
    }
    return verb + " " + resource + rest;
  }

  private static Map<String, String> query(String path) {
    Map<String, String> q = new LinkedHashMap<>();
    int at = path.indexOf('?');
    if (at < 0) {
      return q;
    }
    for (String part : path.substring(at + 1).split("&")) {
      int eq = part.indexOf('=');
      if (eq > 0) {
        q.put(
            part.substring(0, eq),
            URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return q;
  }

  private static String withoutPaging(String path) {
    int at = path.indexOf('?');
    if (at < 0) {
      return path;
    }
    StringBuilder kept = new StringBuilder();
    for (String part : path.substring(at + 1).split("&")) {
      if (part.startsWith("limit=") || part.startsWith("continue=")) {
        continue;
      }
      kept.append(kept.length() == 0 ? "?" : "&").append(part);
    }
    return path.substring(0, at) + kept;
  }

  private final class Recorder extends KubernetesCrudDispatcher {
    final List<Request> requests = new CopyOnWriteArrayList<>();
    final List<Waiter> waiters = new CopyOnWriteArrayList<>();
    final Map<String, Long> harnessArrivals = new ConcurrentHashMap<>();
    final Map<String, Long> harnessTook = new ConcurrentHashMap<>();
    final Map<String, Snapshot> snapshots = new ConcurrentHashMap<>();
    final AtomicLong pagedLists = new AtomicLong();
    final AtomicLong tokens = new AtomicLong();

    Recorder() {
      super(List.of());
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      long at = System.nanoTime();
      String agent = request.getHeader("User-Agent");
      boolean harness = agent != null && agent.startsWith(HARNESS_AGENT);
      String key = null;
      if (harness) {
        String path = request.getPath();
        int q = path.indexOf('?');
        key = request.getMethod() + " " + (q < 0 ? path : path.substring(0, q));
        harnessArrivals.put(key, at);
      }
      MockResponse response = super.dispatch(request);
      if (harness) {
        harnessTook.put(key, System.nanoTime() - at);
      } else {
        Request r =
            new Request(
                at,
                System.nanoTime() - at,
                request.getMethod(),
                request.getPath(),
                response.code());
        requests.add(r);
        for (Waiter w : waiters) {
          if (w.match().test(r)) {
            waiters.remove(w);
            w.result().complete(r);
          }
        }
      }
      return response;
    }

    @Override
    public MockResponse handleCreate(RecordedRequest request) {
      if (request.getPath().contains("/selfsubjectrulesreviews")) {
        var review =
            new SelfSubjectRulesReviewBuilder()
                .withNewMetadata()
                .endMetadata()
                .withNewStatus()
                .withIncomplete(false)
                .addNewResourceRule()
                .withApiGroups("coordination.k8s.io")
                .withResources("leases")
                .withVerbs("get", "list", "watch", "create", "update", "patch")
                .endResourceRule()
                .endStatus()
                .build();
        return new MockResponse().setResponseCode(201).setBody(Serialization.asJson(review));
      }
      return super.handleCreate(request);
    }

    /** Lists with {@code limit}: served in pages from a snapshot taken at the first page. */
    @Override
    public MockResponse handleGet(String path) {
      Map<String, String> q = query(path);
      if (!q.containsKey("limit") || "true".equals(q.get("watch"))) {
        return super.handleGet(path);
      }
      int limit = Integer.parseInt(q.get("limit"));
      try {
        Snapshot snapshot;
        int from;
        String token = q.get("continue");
        if (token != null && !token.isEmpty()) {
          String[] parts = token.split(":");
          snapshot = snapshots.get(parts[0]);
          from = Integer.parseInt(parts[1]);
          if (snapshot == null) {
            return new MockResponse().setResponseCode(410);
          }
        } else {
          MockResponse full = super.handleGet(withoutPaging(path));
          if (full.code() != 200) {
            return full;
          }
          JsonNode list = JSON.readTree(full.getBody().getBytes());
          if (!list.has("items")) {
            return new MockResponse().setResponseCode(200).setBody(list.toString());
          }
          pagedLists.incrementAndGet();
          snapshot = new Snapshot((ObjectNode) list, (ArrayNode) list.get("items"));
          from = 0;
        }
        int to = Math.min(snapshot.items().size(), from + limit);
        ObjectNode page = snapshot.list().deepCopy();
        page.remove("items");
        ArrayNode items = page.putArray("items");
        for (int i = from; i < to; i++) {
          items.add(snapshot.items().get(i));
        }
        ObjectNode meta =
            page.has("metadata") ? (ObjectNode) page.get("metadata") : page.putObject("metadata");
        if (to < snapshot.items().size()) {
          String id = token != null && !token.isEmpty() ? token.split(":")[0] : null;
          if (id == null) {
            id = Long.toString(tokens.incrementAndGet());
            snapshots.put(id, snapshot);
          }
          meta.put("continue", id + ":" + to);
        } else {
          meta.remove("continue");
          if (token != null && !token.isEmpty()) {
            snapshots.remove(token.split(":")[0]);
          }
        }
        return new MockResponse().setResponseCode(200).setBody(page.toString());
      } catch (Exception e) {
        return new MockResponse().setResponseCode(500).setBody(String.valueOf(e));
      }
    }
  }
}
