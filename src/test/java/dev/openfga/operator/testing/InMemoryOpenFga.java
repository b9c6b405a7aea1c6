package dev.openfga.operator.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
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
 * The part of the OpenFGA HTTP API the FGAStore and FGAModel controllers use, in memory: stores
 * (list, get, create, delete), their authorization models (list, write), tuples written (and
 * forgotten) and checks that all answer {@link #allowed}, counted and logged, slow if asked;
 * deletes that fail, and look-ups held until several have arrived. For {@link FakeOpenFga}.
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
   * name>} for each check.
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
      status = 204;
    } else if (path.length == 2) {
      body.put("id", id)
          .put("name", stores.get(id))
          .put("created_at", createdAt.getOrDefault(id, CREATED_AT));
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
      exchange.getRequestBody().readAllBytes();
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

  private String newId() {
    return String.format("01HVMMBCMGZNT3SED4Z17E%04d", ids.incrementAndGet());
  }
}
