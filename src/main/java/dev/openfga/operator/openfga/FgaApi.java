package dev.openfga.operator.openfga;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The few calls of the OpenFGA HTTP API the store and model controllers make, on the JDK's HTTP
 * client (ADR 0017): stores (list, get, create, delete), authorization models (list, write), and
 * tuples (write, read: {@link #tuples}); and for a model's tests in a scratch store: check and
 * list-objects.
 *
 * <p>Timeouts on every call. Reads and deletes are retried on a connection failure, a 429 or a 5xx,
 * with backoff; a create is retried only when it cannot have reached the server (connection
 * refused, or a 429): a lost answer to a create is found by the controller's next read, which
 * adopts what was created instead of creating again. The credentials ({@link Credentials}) are sent
 * as a bearer token and appear in no exception message.
 */
public final class FgaApi {
  private static final ObjectMapper JSON = new ObjectMapper();
  public static final int ATTEMPTS = 4;
  static final Duration FIRST_BACKOFF = Duration.ofMillis(200);
  static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final int PAGE_SIZE = 100;

  private final HttpClient http;
  private final URI base;
  private final Bearer bearer;
  private final Sleeper sleeper;
  private final TupleApi tuples = new TupleApi(this);

  /** The bearer token of each call, or empty for none ({@link Credentials#bearer}). */
  @FunctionalInterface
  public interface Bearer {
    Optional<String> get() throws IOException, InterruptedException;

    /** OpenFGA answered 401 to this token: one fetched from an issuer is not used again. */
    default void refused(String token) {}
  }

  /** Waits between attempts (tests pass one that does not wait). */
  @FunctionalInterface
  public interface Sleeper {
    void sleep(Duration d) throws InterruptedException;
  }

  /**
   * @param base the API URL, e.g. {@code http://openfga.openfga.svc:8080}
   * @param bearer the bearer token for each call (a pre-shared key or an OIDC access token), or
   *     empty for none
   */
  public FgaApi(HttpClient http, URI base, Bearer bearer, Sleeper sleeper) {
    this.http = http;
    String s = base.toString();
    this.base = URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
    this.bearer = bearer;
    this.sleeper = sleeper;
  }

  public FgaApi(HttpClient http, URI base, Bearer bearer) {
    this(http, base, bearer, d -> Thread.sleep(d.toMillis()));
  }

  /** The client the controllers share: HTTP/1.1, a connect timeout. */
  public static HttpClient defaultHttpClient() {
    return HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5))
        .build();
  }

  /** The tuple calls (write, read) on this server, through the same retries and errors. */
  public TupleApi tuples() {
    return tuples;
  }

  /** Every store (all pages). */
  public List<Store> listStores() throws IOException, InterruptedException {
    return all("/stores?page_size=" + PAGE_SIZE, "stores").stream().map(FgaApi::store).toList();
  }

  /** The stores that have exactly this name (OpenFGA does not keep names unique). */
  public List<Store> storesNamed(String name) throws IOException, InterruptedException {
    return listStores().stream().filter(s -> s.name().equals(name)).toList();
  }

  /** The store, or empty when the server does not know it (never created, or deleted). */
  public Optional<Store> getStore(String id) throws IOException, InterruptedException {
    try {
      JsonNode s = send("GET", "/stores/" + segment(id), null, true);
      if (!s.path("deleted_at").asText("").isEmpty()) {
        return Optional.empty();
      }
      return Optional.of(store(s));
    } catch (ApiException e) {
      if (notFound(e)) {
        return Optional.empty();
      }
      throw e;
    }
  }

  public Store createStore(String name) throws IOException, InterruptedException {
    ObjectNode body = JSON.createObjectNode().put("name", name);
    return store(send("POST", "/stores", body, false));
  }

  /** Deletes the store; a store already gone counts as deleted. */
  public void deleteStore(String id) throws IOException, InterruptedException {
    try {
      send("DELETE", "/stores/" + segment(id), null, true);
    } catch (ApiException e) {
      if (!notFound(e)) {
        throw e;
      }
    }
  }

  /** Every authorization model of the store, newest first (all pages). */
  public List<Model> listModels(String storeId) throws IOException, InterruptedException {
    return all(
            "/stores/" + segment(storeId) + "/authorization-models?page_size=50",
            "authorization_models")
        .stream()
        .map(m -> new Model(m.path("id").asText(), m))
        .toList();
  }

  /** The items of the array {@code field} over every page of a list call. */
  private List<JsonNode> all(String path, String field) throws IOException, InterruptedException {
    List<JsonNode> items = new ArrayList<>();
    String token = "";
    do {
      JsonNode page = send("GET", path + continuation(token), null, true);
      page.path(field).forEach(items::add);
      token = page.path("continuation_token").asText("");
    } while (!token.isEmpty());
    return items;
  }

  /**
   * Writes a model (its JSON: {@code schema_version}, {@code type_definitions}, {@code
   * conditions}); returns the new model's id.
   */
  public String writeModel(String storeId, JsonNode model)
      throws IOException, InterruptedException {
    ObjectNode body = JSON.createObjectNode();
    body.set("schema_version", model.path("schema_version"));
    body.set("type_definitions", model.path("type_definitions"));
    if (model.has("conditions")) {
      body.set("conditions", model.path("conditions"));
    }
    JsonNode answer =
        send("POST", "/stores/" + segment(storeId) + "/authorization-models", body, false);
    return answer.path("authorization_model_id").asText();
  }

  /**
   * Writes relationship tuples ({@code user}, {@code relation}, {@code object}[, condition]) as
   * they are, in writes of {@value #PAGE_SIZE}.
   */
  public void writeTuples(String storeId, String modelId, List<JsonNode> tuples)
      throws IOException, InterruptedException {
    for (int from = 0; from < tuples.size(); from += PAGE_SIZE) {
      ArrayNode writes = TupleApi.array();
      tuples.subList(from, Math.min(tuples.size(), from + PAGE_SIZE)).forEach(writes::add);
      this.tuples.write(
          storeId, TupleApi.writeBody(modelId, writes, TupleApi.array(), false, false));
    }
  }

  /**
   * The model's JSON ({@code id}, {@code schema_version}, {@code type_definitions}, {@code
   * conditions}), or empty when the store has no model of this id (OpenFGA answers 400 {@code
   * authorization_model_not_found}). A store that is gone is an error.
   */
  public Optional<JsonNode> model(String storeId, String modelId)
      throws IOException, InterruptedException {
    String path = "/stores/" + segment(storeId) + "/authorization-models/" + segment(modelId);
    try {
      JsonNode m = send("GET", path, null, true).path("authorization_model");
      return m.isObject() ? Optional.of(m) : Optional.empty();
    } catch (ApiException e) {
      if (e.code().equals("authorization_model_not_found")) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /** The store's newest model, or empty when it has none. */
  public Optional<Model> newestModel(String storeId) throws IOException, InterruptedException {
    String path = "/stores/" + segment(storeId) + "/authorization-models?page_size=1";
    JsonNode m = send("GET", path, null, true).path("authorization_models").path(0);
    return m.isObject() ? Optional.of(new Model(m.path("id").asText(), m)) : Optional.empty();
  }

  /** Whether {@code user} has {@code relation} on {@code object} ({@code context}: or null). */
  public boolean check(
      String storeId, String modelId, String user, String relation, String object, JsonNode context)
      throws IOException, InterruptedException {
    ObjectNode body = JSON.createObjectNode().put("authorization_model_id", modelId);
    body.putObject("tuple_key").put("user", user).put("relation", relation).put("object", object);
    if (context != null && !context.isMissingNode() && !context.isNull()) {
      body.set("context", context);
    }
    return send("POST", "/stores/" + segment(storeId) + "/check", body, true)
        .path("allowed")
        .asBoolean(false);
  }

  /** The objects of {@code type} on which {@code user} has {@code relation}. */
  public List<String> listObjects(
      String storeId, String modelId, String user, String relation, String type, JsonNode context)
      throws IOException, InterruptedException {
    ObjectNode body =
        JSON.createObjectNode()
            .put("authorization_model_id", modelId)
            .put("user", user)
            .put("relation", relation)
            .put("type", type);
    if (context != null && !context.isMissingNode() && !context.isNull()) {
      body.set("context", context);
    }
    List<String> objects = new ArrayList<>();
    send("POST", "/stores/" + segment(storeId) + "/list-objects", body, true)
        .path("objects")
        .forEach(o -> objects.add(o.asText()));
    return objects;
  }

  private static boolean notFound(ApiException e) {
    return e.status() == 404 || e.code().contains("not_found");
  }

  private static Store store(JsonNode s) {
    return new Store(
        s.path("id").asText(), s.path("name").asText(), s.path("created_at").asText(""));
  }

  private static String continuation(String token) {
    return token.isEmpty()
        ? ""
        : "&continuation_token=" + URLEncoder.encode(token, StandardCharsets.UTF_8);
  }

  static String segment(String id) {
    if (!id.matches("[A-Za-z0-9_-]+")) {
      throw new IllegalArgumentException("not an OpenFGA id: " + id);
    }
    return id;
  }

  /** One call with its retries; the answer's JSON ({@code {}} for an empty answer). */
  JsonNode send(String method, String path, JsonNode body, boolean idempotent)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(TIMEOUT)
            .header("Accept", "application/json");
    Optional<String> token = bearer.get();
    if (token.isPresent()) {
      request.header("Authorization", "Bearer " + token.get());
    }
    if (body != null) {
      request
          .header("Content-Type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(body.toString()));
    } else {
      request.method(method, HttpRequest.BodyPublishers.noBody());
    }
    Duration backoff = FIRST_BACKOFF;
    for (int attempt = 1; ; attempt++) {
      boolean last = attempt == ATTEMPTS;
      HttpResponse<String> response;
      try {
        response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      } catch (IOException e) {
        boolean notSent = e instanceof ConnectException;
        if (last || !(idempotent || notSent)) {
          throw new IOException(method + " " + base + pathOnly(path) + ": " + transportError(e), e);
        }
        sleeper.sleep(backoff);
        backoff = backoff.multipliedBy(2);
        continue;
      }
      int status = response.statusCode();
      if (status == 401 && token.isPresent()) {
        // e.g. the issuer rotated its keys: the next call asks it for a new token
        bearer.refused(token.get());
      }
      if (status >= 200 && status < 300) {
        String text = response.body();
        try {
          return text == null || text.isBlank() ? JSON.createObjectNode() : JSON.readTree(text);
        } catch (IOException notJson) {
          // the parser's message quotes the body: never copied
          throw new IOException(
              method
                  + " "
                  + base
                  + pathOnly(path)
                  + ": HTTP "
                  + status
                  + ", not an OpenFGA answer body (not JSON)");
        }
      }
      boolean retryable = status == 429 || (status >= 500 && idempotent);
      if (retryable && !last) {
        sleeper.sleep(backoff);
        backoff = backoff.multipliedBy(2);
        continue;
      }
      throw error(method, path, status, response.body());
    }
  }

  private ApiException error(String method, String path, int status, String text) {
    Rendered answer = render(status, text);
    return new ApiException(
        status, answer.code(), method + " " + base + pathOnly(path), answer.text());
  }

  /** The longest {@code code} or {@code message} of an error answer copied into a message. */
  static final int ERROR_FIELD_MAX = 256;

  /** An error answer as it may be shown: OpenFGA's {@code code} (or empty) and the text. */
  record Rendered(String code, String text) {}

  /**
   * What of an error answer goes into a status, an Event or a log line: its HTTP status and, when
   * it is OpenFGA's JSON error (an object with a {@code code} or a {@code message}), those two,
   * each cut to {@value #ERROR_FIELD_MAX} characters without control characters. Any other body (an
   * HTML page of a proxy, a foreign server's text) is never copied: whoever may name a URL must not
   * get a foreign server's words written into the cluster.
   */
  static Rendered render(int status, String text) {
    JsonNode e = null;
    try {
      e = text == null || text.isBlank() ? null : JSON.readTree(text);
    } catch (IOException notJson) {
      // not JSON: not copied
    }
    String code = e != null && e.isObject() ? field(e.get("code")) : "";
    String message = e != null && e.isObject() ? field(e.get("message")) : "";
    if (code.isEmpty() && message.isEmpty()) {
      return new Rendered(
          "",
          "HTTP " + status + (text == null || text.isBlank() ? "" : ", not an OpenFGA error body"));
    }
    return new Rendered(
        code,
        "HTTP "
            + status
            + (code.isEmpty() ? "" : " " + code)
            + (message.isEmpty() ? "" : ": " + message));
  }

  /** A text or number field of an error answer, bounded; empty for anything else. */
  private static String field(JsonNode value) {
    if (value == null || !(value.isTextual() || value.isNumber())) {
      return "";
    }
    String text = value.asText().replaceAll("\\p{Cntrl}", " ").strip();
    return text.length() > ERROR_FIELD_MAX ? text.substring(0, ERROR_FIELD_MAX) + "..." : text;
  }

  /**
   * A failed exchange, for messages: the exception's kind, and its message only when it cannot hold
   * what the server sent (a connection refused, a timeout, an unknown host). A malformed status
   * line or header, or a certificate's names, are the server's words: not copied.
   */
  static String transportError(IOException e) {
    String kind = e.getClass().getSimpleName();
    boolean ours =
        e instanceof ConnectException
            || e instanceof java.net.http.HttpTimeoutException
            || e instanceof java.net.UnknownHostException;
    return ours && e.getMessage() != null ? kind + ": " + e.getMessage() : kind;
  }

  private static String pathOnly(String path) {
    int q = path.indexOf('?');
    return q < 0 ? path : path.substring(0, q);
  }
}
