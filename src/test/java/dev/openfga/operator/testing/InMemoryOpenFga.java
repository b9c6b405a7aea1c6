package dev.openfga.operator.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleKey;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The part of the OpenFGA HTTP API the operator's controllers use, in memory: stores (list, get,
 * create, delete), their authorization models (list, get, write), their tuples (written and read as
 * OpenFGA 1.8 and 1.10 do: {@link InMemoryTuples}), and checks that all answer {@link #allowed},
 * counted and logged, slow if asked; deletes and writes that fail, and look-ups held until several
 * have arrived. For {@link FakeOpenFga}.
 */
public final class InMemoryOpenFga implements HttpHandler {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The {@code created_at} of a store a test put in {@link #stores} itself: long ago. */
  private static final String CREATED_AT = "2024-01-01T00:00:00Z";

  /** Store id → name. */
  public final Map<String, String> stores = new ConcurrentHashMap<>();

  /** Store id → when it was created ({@code created_at}; a test may set it for a store it puts). */
  public final Map<String, String> createdAt = new ConcurrentHashMap<>();

  /**
   * When set, run after a store is created, before the answer is sent: what happens between the
   * create and the operator's next step (e.g. a fault injected into its status write).
   */
  public volatile Runnable afterCreate;

  /** Store id → its models, newest first. */
  private final Map<String, List<ObjectNode>> models = new ConcurrentHashMap<>();

  private final AtomicInteger ids = new AtomicInteger();

  /** Stores created so far (the operator's and its tests' scratch stores). */
  public final AtomicInteger created = new AtomicInteger();

  /** Checks asked so far (answered or not). */
  public final AtomicInteger checks = new AtomicInteger();

  /**
   * What was asked, in order: {@code create <name>} for each store created, {@code check <store
   * name>} for each check, {@code write +<writes> -<deletes>} for each write request.
   */
  public final List<String> log = new CopyOnWriteArrayList<>();

  /** How long each check takes to answer: a slow server (its own threads wait, not the test's). */
  public volatile long checkMillis;

  /** What every check answers. */
  public volatile boolean allowed = true;

  /**
   * When set, a POST of a store's {@code check} or {@code authorization-models} (the last path
   * segment named here) is refused with 400, as OpenFGA refuses a relation the model does not
   * define or a model it cannot accept.
   */
  public volatile String refused;

  /** Authorization models written so far (to any store). */
  public final AtomicInteger modelsWritten = new AtomicInteger();

  /**
   * When set, a POST of a store's {@code check} (the last path segment named here) gets no answer:
   * the connection is closed, as a server that crashed or a proxy that timed out would.
   */
  public volatile String unanswered;

  /**
   * When set, every check answers 400 {@code authorization_model_not_found} naming its model, as
   * OpenFGA does while a read replica has not caught up with a model just written.
   */
  public volatile boolean modelNotYetReplicated;

  /** Requests refused so far ({@link #refused}). */
  public final AtomicInteger refusals = new AtomicInteger();

  /** DELETE requests still to be answered 503 before the server deletes again. */
  public final AtomicInteger failingDeletes = new AtomicInteger();

  /**
   * When set, each look-up of the stores ({@code GET /stores}) waits until this many have arrived,
   * or 2 s: two look-ups the operator sends at once are answered at once.
   */
  public volatile CountDownLatch lookups;

  /**
   * When set, every request is answered 502 with this body (not JSON), as a proxy in front of a
   * server that is down answers with its own page.
   */
  public volatile String foreignPage;

  /**
   * The OpenFGA version answered like: {@code 1.10.0} and later read a write's {@code on_duplicate}
   * and {@code on_missing}; {@code 1.8.16} drops them unread and answers as without them.
   */
  public volatile String version = "1.10.0";

  /** The most writes and deletes one write request may hold (OpenFGA's default: 100). */
  public volatile int maxTuplesPerWrite = 100;

  /** Write requests received (applied or not); read requests received. */
  public final AtomicInteger writeRequests = new AtomicInteger();

  public final AtomicInteger readRequests = new AtomicInteger();

  /** Tuples created by writes (not those skipped as duplicates); tuples deleted by writes. */
  public final AtomicInteger tuplesWritten = new AtomicInteger();

  public final AtomicInteger tuplesDeleted = new AtomicInteger();

  /**
   * When 0 or more: the number of write requests still answered before one fails. Each write
   * request counts it down; the one that finds it at 0 is answered 500 {@code internal_error}
   * without applying anything, and it stays at -1 after.
   */
  public final AtomicInteger failWritesAfter = new AtomicInteger(-1);

  /** While true, every write request is answered 500 {@code internal_error}, nothing applied. */
  public volatile boolean writesDown;

  /**
   * When set, run after a write is applied, before its answer is sent (e.g. the operator crashing
   * between its writes).
   */
  public volatile Runnable afterWrite;

  private final InMemoryTuples tuples = new InMemoryTuples();

  /** The store's tuples now: key text ({@code object#relation@user}) → tuple, sorted. */
  public Map<String, Tuple> tuples(String storeId) {
    return tuples.snapshot(storeId);
  }

  /**
   * Puts a tuple into the store as the application would, out of band (none of the counters move;
   * without a timestamp it gets now's); one of the same key is replaced.
   */
  public void putTuple(String storeId, Tuple t) {
    tuples.put(storeId, t);
  }

  /** Deletes a tuple from the store as the application would, out of band. */
  public void removeTuple(String storeId, TupleKey k) {
    tuples.remove(storeId, k);
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    String page = foreignPage;
    if (page != null) {
      exchange.getRequestBody().readAllBytes();
      byte[] out = page.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "text/html");
      exchange.sendResponseHeaders(502, out.length);
      try (OutputStream o = exchange.getResponseBody()) {
        o.write(out);
      }
      return;
    }
    String[] path = exchange.getRequestURI().getPath().replaceAll("^/+", "").split("/");
    String method = exchange.getRequestMethod();
    int status = 200;
    ObjectNode body = JSON.createObjectNode();
    String id = path.length > 1 ? path[1] : null;
    if (method.equals("POST") && path.length == 3 && path[2].equals("check")) {
      checks.incrementAndGet();
      log.add("check " + stores.get(id));
      if (checkMillis > 0) {
        try {
          Thread.sleep(checkMillis);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    if (method.equals("DELETE") && failingDeletes.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      exchange.sendResponseHeaders(503, -1);
      exchange.close();
      return;
    }
    if (id == null && method.equals("GET")) {
      CountDownLatch held = lookups;
      if (held != null) {
        held.countDown();
        try {
          held.await(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      ArrayNode list = body.putArray("stores");
      stores.forEach(
          (i, name) ->
              list.addObject()
                  .put("id", i)
                  .put("name", name)
                  .put("created_at", createdAt.getOrDefault(i, CREATED_AT)));
    } else if (id == null && method.equals("POST")) {
      String name = JSON.readTree(exchange.getRequestBody()).path("name").asText();
      String id2 = newId();
      String at = java.time.Instant.now().toString();
      createdAt.put(id2, at);
      stores.put(id2, name);
      created.incrementAndGet();
      log.add("create " + name);
      body.put("id", id2).put("name", name).put("created_at", at);
      status = 201;
      Runnable after = afterCreate;
      if (after != null) {
        after.run();
      }
    } else if (!stores.containsKey(id)) {
      status = 404;
      body.put("code", "store_id_not_found");
    } else if (method.equals("POST") && path.length == 3 && path[2].equals(unanswered)) {
      exchange.getRequestBody().readAllBytes();
      exchange.close();
      return;
    } else if (method.equals("POST") && path.length == 3 && path[2].equals(refused)) {
      exchange.getRequestBody().readAllBytes();
      refusals.incrementAndGet();
      status = 400;
      body.put("code", "validation_error").put("message", "refused by the test");
    } else if (path.length == 2 && method.equals("DELETE")) {
      stores.remove(id);
      tuples.drop(id);
      status = 204;
    } else if (path.length == 2) {
      body.put("id", id)
          .put("name", stores.get(id))
          .put("created_at", createdAt.getOrDefault(id, CREATED_AT));
    } else if (path.length == 4 && path[2].equals("authorization-models") && method.equals("GET")) {
      ObjectNode model = model(id, path[3]);
      if (model == null) {
        status = 400;
        body = modelNotFound(path[3]);
      } else {
        body.set("authorization_model", model);
      }
    } else if (path[2].equals("authorization-models") && method.equals("GET")) {
      ArrayNode list = body.putArray("authorization_models");
      models.getOrDefault(id, List.of()).forEach(list::add);
    } else if (path[2].equals("authorization-models") && method.equals("POST")) {
      ObjectNode model = (ObjectNode) JSON.readTree(exchange.getRequestBody());
      String written = newId();
      model.put("id", written);
      modelsWritten.incrementAndGet();
      models.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>()).add(0, model);
      body.put("authorization_model_id", written);
      status = 201;
    } else if (path[2].equals("write") && method.equals("POST")) {
      InMemoryTuples.Answer answer = write(id, JSON.readTree(exchange.getRequestBody()));
      status = answer.status();
      body = answer.body();
    } else if (path[2].equals("read") && method.equals("POST")) {
      readRequests.incrementAndGet();
      InMemoryTuples.Answer answer = tuples.read(id, JSON.readTree(exchange.getRequestBody()));
      status = answer.status();
      body = answer.body();
    } else if (path[2].equals("check") && method.equals("POST") && modelNotYetReplicated) {
      String model =
          JSON.readTree(exchange.getRequestBody()).path("authorization_model_id").asText();
      status = 400;
      body.put("code", "authorization_model_not_found")
          .put("message", "Authorization Model '" + model + "' not found");
    } else if (path[2].equals("check") && method.equals("POST")) {
      exchange.getRequestBody().readAllBytes();
      body.put("allowed", allowed);
    } else {
      status = 404;
    }
    byte[] out = status == 204 ? new byte[0] : body.toString().getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(status, out.length == 0 ? -1 : out.length);
    try (OutputStream o = exchange.getResponseBody()) {
      o.write(out);
    }
  }

  /**
   * A write: counted and logged ({@code write +N -M}), failed if {@link #failWritesAfter} says so,
   * checked against the model it names (else the store's newest; none: every tuple accepted), then
   * applied whole or not at all.
   */
  private InMemoryTuples.Answer write(String id, JsonNode request) {
    writeRequests.incrementAndGet();
    log.add(
        "write +"
            + request.path("writes").path("tuple_keys").size()
            + " -"
            + request.path("deletes").path("tuple_keys").size());
    if (failWritesAfter.getAndUpdate(n -> n >= 0 ? n - 1 : n) == 0 || writesDown) {
      return new InMemoryTuples.Answer(500, JSON.createObjectNode().put("code", "internal_error"));
    }
    JsonNode model = null;
    if (!request.path("writes").path("tuple_keys").isEmpty()) {
      String named = request.path("authorization_model_id").asText("");
      List<ObjectNode> all = models.getOrDefault(id, List.of());
      model = named.isEmpty() ? (all.isEmpty() ? null : all.get(0)) : model(id, named);
      if (!named.isEmpty() && model == null) {
        return new InMemoryTuples.Answer(400, modelNotFound(named));
      }
    }
    InMemoryTuples.Answer answer =
        tuples.write(
            id,
            request,
            model,
            readsWriteOptions(version),
            maxTuplesPerWrite,
            applied -> {
              tuplesWritten.addAndGet(applied.created());
              tuplesDeleted.addAndGet(applied.deleted());
            });
    Runnable after = afterWrite;
    if (answer.status() == 200 && after != null) {
      after.run();
    }
    return answer;
  }

  /** Whether OpenFGA {@code version} reads {@code on_duplicate} and {@code on_missing} (1.10+). */
  private static boolean readsWriteOptions(String version) {
    String[] parts = version.split("\\.");
    int major = Integer.parseInt(parts[0]);
    int minor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
    return major > 1 || (major == 1 && minor >= 10);
  }

  private ObjectNode model(String storeId, String modelId) {
    return models.getOrDefault(storeId, List.of()).stream()
        .filter(m -> m.path("id").asText().equals(modelId))
        .findFirst()
        .orElse(null);
  }

  private static ObjectNode modelNotFound(String modelId) {
    return JSON.createObjectNode()
        .put("code", "authorization_model_not_found")
        .put("message", "Authorization Model '" + modelId + "' not found");
  }

  private String newId() {
    return String.format("01HVMMBCMGZNT3SED4Z17E%04d", ids.incrementAndGet());
  }
}
