package dev.openfga.operator.openfga;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * OpenFGA's tuple calls, {@code write} and {@code read}, through {@link FgaApi}'s one HTTP path
 * (its timeouts, retries, credentials and errors): request bodies built field by field, read pages
 * parsed into {@link Tuple}s. Reads are at higher consistency, so that what was just written is in
 * them, and are retried as any read; a write is not retried once it may have been sent.
 */
public final class TupleApi {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The most tuples a read page holds, and OpenFGA's default limit of writes and deletes. */
  public static final int PAGE_SIZE = 100;

  private final FgaApi api;

  TupleApi(FgaApi api) {
    this.api = api;
  }

  /**
   * One atomic write: all of it or, on any error, none of it. OpenFGA takes at most {@value
   * #PAGE_SIZE} writes and deletes together ({@link ApiException#entityLimit}). Without {@code
   * ignoreDuplicates} a tuple that exists fails it, without {@code ignoreMissing} a delete of one
   * that does not ({@link ApiException#duplicateOrMissing}); servers before 1.10 ignore both flags.
   * With them, a tuple that exists with another condition fails it ({@link ApiException#conflict}).
   *
   * @param modelId the model the writes are checked against; null: the store's newest
   */
  public void write(
      String storeId,
      String modelId,
      List<Tuple> writes,
      List<TupleKey> deletes,
      boolean ignoreDuplicates,
      boolean ignoreMissing)
      throws IOException, InterruptedException {
    ArrayNode w = array();
    writes.forEach(t -> w.add(tuple(t)));
    ArrayNode d = array();
    deletes.forEach(k -> d.add(key(k)));
    write(storeId, writeBody(modelId, w, d, ignoreDuplicates, ignoreMissing));
  }

  void write(String storeId, ObjectNode body) throws IOException, InterruptedException {
    api.send("POST", "/stores/" + FgaApi.segment(storeId) + "/write", body, false);
  }

  /** A page of {@code object}'s tuples (every relation), {@value #PAGE_SIZE} at most. */
  public TuplePage readObject(String storeId, String object, String continuationToken)
      throws IOException, InterruptedException {
    return read(storeId, JSON.createObjectNode().put("object", object), continuationToken);
  }

  /**
   * A page of the tuples of {@code user} on objects of {@code type} (every relation), {@value
   * #PAGE_SIZE} at most.
   */
  public TuplePage readUserOfType(String storeId, String type, String user, String token)
      throws IOException, InterruptedException {
    return read(
        storeId, JSON.createObjectNode().put("object", type + ":").put("user", user), token);
  }

  /** A page of every tuple of the store, {@value #PAGE_SIZE} at most. */
  public TuplePage readAll(String storeId, String continuationToken)
      throws IOException, InterruptedException {
    return read(storeId, null, continuationToken);
  }

  /** The tuple of this key, with its condition and timestamp, or empty when there is none. */
  public Optional<Tuple> readOne(String storeId, TupleKey key)
      throws IOException, InterruptedException {
    return read(storeId, key(key), "").tuples().stream()
        .filter(t -> t.key().equals(key))
        .findFirst();
  }

  private TuplePage read(String storeId, ObjectNode filter, String token)
      throws IOException, InterruptedException {
    ObjectNode body = readBody(filter, PAGE_SIZE, token);
    return page(api.send("POST", "/stores/" + FgaApi.segment(storeId) + "/read", body, true));
  }

  /** {@code {user, relation, object}}: a key as a write's delete or a read's filter names it. */
  static ObjectNode key(TupleKey k) {
    return JSON.createObjectNode()
        .put("user", k.user())
        .put("relation", k.relation())
        .put("object", k.object());
  }

  /** A tuple to write: its key and, when it has one, {@code condition: {name, context?}}. */
  static ObjectNode tuple(Tuple t) {
    ObjectNode n = key(t.key());
    if (t.condition() != null) {
      ObjectNode c = n.putObject("condition").put("name", t.condition().name());
      if (t.condition().context() != null) {
        c.set("context", t.condition().context());
      }
    }
    return n;
  }

  static ArrayNode array() {
    return JSON.createArrayNode();
  }

  /**
   * The body of a write: {@code on_duplicate: ignore} inside {@code writes} and {@code on_missing:
   * ignore} inside {@code deletes} when asked; an empty {@code writes} or {@code deletes} is left
   * out (OpenFGA refuses an empty one); no {@code authorization_model_id} for the newest model.
   */
  static ObjectNode writeBody(
      String modelId,
      ArrayNode writes,
      ArrayNode deletes,
      boolean ignoreDuplicates,
      boolean ignoreMissing) {
    ObjectNode body = JSON.createObjectNode();
    if (modelId != null) {
      body.put("authorization_model_id", modelId);
    }
    if (!writes.isEmpty()) {
      ObjectNode w = body.putObject("writes");
      w.set("tuple_keys", writes);
      if (ignoreDuplicates) {
        w.put("on_duplicate", "ignore");
      }
    }
    if (!deletes.isEmpty()) {
      ObjectNode d = body.putObject("deletes");
      d.set("tuple_keys", deletes);
      if (ignoreMissing) {
        d.put("on_missing", "ignore");
      }
    }
    return body;
  }

  /** The body of a read at higher consistency ({@code filter}: null for the whole store). */
  static ObjectNode readBody(ObjectNode filter, int pageSize, String continuationToken) {
    ObjectNode body = JSON.createObjectNode();
    if (filter != null) {
      body.set("tuple_key", filter);
    }
    body.put("page_size", pageSize);
    if (continuationToken != null && !continuationToken.isEmpty()) {
      body.put("continuation_token", continuationToken);
    }
    return body.put("consistency", "HIGHER_CONSISTENCY");
  }

  /** A read's answer: {@code {tuples: [{key, timestamp}], continuation_token}}. */
  static TuplePage page(JsonNode answer) {
    List<Tuple> tuples = new ArrayList<>();
    for (JsonNode t : answer.path("tuples")) {
      tuples.add(tuple(t));
    }
    return new TuplePage(tuples, answer.path("continuation_token").asText(""));
  }

  /** One tuple of a read: {@code {key: {user, relation, object, condition?}, timestamp}}. */
  static Tuple tuple(JsonNode t) {
    JsonNode k = t.path("key");
    TupleKey key =
        new TupleKey(
            k.path("object").asText(), k.path("relation").asText(), k.path("user").asText());
    JsonNode c = k.path("condition");
    TupleCondition condition =
        c.path("name").asText("").isEmpty()
            ? null
            : new TupleCondition(c.path("name").asText(), c.get("context"));
    return new Tuple(key, condition, timestamp(t.path("timestamp").asText("")));
  }

  private static Instant timestamp(String text) {
    if (text.isEmpty()) {
      return null;
    }
    try {
      return Instant.parse(text);
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}
