package dev.openfga.operator.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleCondition;
import dev.openfga.operator.openfga.TupleKey;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The tuples of {@link InMemoryOpenFga}'s stores, written and read as OpenFGA 1.8 and 1.10 do (as
 * probed against their binaries and read in their sources): a write is checked whole, then applied
 * whole or not at all, with OpenFGA's codes and messages.
 */
final class InMemoryTuples {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** An answer: its HTTP status and body. */
  record Answer(int status, ObjectNode body) {}

  /** Store id → key text → tuple, sorted by key text. */
  private final Map<String, TreeMap<String, Tuple>> stores = new TreeMap<>();

  synchronized SortedMap<String, Tuple> snapshot(String storeId) {
    return new TreeMap<>(stores.getOrDefault(storeId, new TreeMap<>()));
  }

  synchronized void put(String storeId, Tuple t) {
    Tuple stamped = t.timestamp() == null ? new Tuple(t.key(), t.condition(), Instant.now()) : t;
    stores.computeIfAbsent(storeId, k -> new TreeMap<>()).put(t.key().text(), stamped);
  }

  synchronized boolean remove(String storeId, TupleKey k) {
    return stores.getOrDefault(storeId, new TreeMap<>()).remove(k.text()) != null;
  }

  synchronized void drop(String storeId) {
    stores.remove(storeId);
  }

  /** The counts of a write applied: tuples created and deleted. */
  record Applied(int created, int deleted) {}

  /**
   * Checks the write {@code request} whole and, when it passes, applies it at once.
   *
   * @param model the model the writes are checked against (null: none, every tuple accepted)
   * @param options whether {@code on_duplicate} and {@code on_missing} are read (1.10 and later)
   * @param applied gets the counts of what was applied
   */
  synchronized Answer write(
      String storeId,
      JsonNode request,
      JsonNode model,
      boolean options,
      int maxTuplesPerWrite,
      java.util.function.Consumer<Applied> applied) {
    JsonNode w = request.path("writes");
    JsonNode d = request.path("deletes");
    if ((w.has("tuple_keys") && w.path("tuple_keys").isEmpty())
        || (d.has("tuple_keys") && d.path("tuple_keys").isEmpty())) {
      return error(
          400,
          "tuple_keys_too_many_or_too_few_items",
          "invalid WriteRequestWrites.TupleKeys: value must contain at least 1 item(s)");
    }
    List<Tuple> writes = new ArrayList<>();
    w.path("tuple_keys").forEach(t -> writes.add(tuple(t)));
    List<TupleKey> deletes = new ArrayList<>();
    d.path("tuple_keys").forEach(t -> deletes.add(tuple(t).key()));
    if (writes.isEmpty() && deletes.isEmpty()) {
      return error(
          400,
          "invalid_write_input",
          "Invalid input. Make sure you provide at least one write, or at least one delete");
    }
    if (model != null) {
      for (Tuple t : writes) {
        String reason = invalid(model, t);
        if (reason != null) {
          return error(
              400, "validation_error", "Invalid tuple '" + text(t) + "'. Reason: " + reason);
        }
      }
    }
    for (TupleKey k : deletes) {
      if (k.user().isEmpty() || k.user().contains(" ")) {
        return error(
            400,
            "validation_error",
            "Invalid tuple '" + k.text() + "'. Reason: the 'user' field is malformed");
      }
    }
    Set<String> keys = new HashSet<>();
    List<TupleKey> all = new ArrayList<>(deletes);
    writes.forEach(t -> all.add(t.key()));
    for (TupleKey k : all) {
      if (!keys.add(k.text())) {
        return error(
            400,
            "cannot_allow_duplicate_tuples_in_one_request",
            "duplicate tuple in write: " + named(k));
      }
    }
    if (keys.size() > maxTuplesPerWrite) {
      return error(
          400,
          "exceeded_entity_limit",
          "The number of write operations exceeds the allowed limit of " + maxTuplesPerWrite);
    }
    boolean ignoreMissing = options && "ignore".equals(d.path("on_missing").asText());
    boolean ignoreDuplicates = options && "ignore".equals(w.path("on_duplicate").asText());
    TreeMap<String, Tuple> store = stores.computeIfAbsent(storeId, k -> new TreeMap<>());
    List<TupleKey> toDelete = new ArrayList<>();
    for (TupleKey k : deletes) {
      if (store.containsKey(k.text())) {
        toDelete.add(k);
      } else if (!ignoreMissing) {
        return error(
            400,
            "write_failed_due_to_invalid_input",
            "cannot delete a tuple which does not exist: " + named(k) + ": " + INVALID_INPUT);
      }
    }
    List<Tuple> toWrite = new ArrayList<>();
    for (Tuple t : writes) {
      Tuple existing = store.get(t.key().text());
      if (existing == null) {
        toWrite.add(t);
      } else if (!ignoreDuplicates) {
        return error(
            400,
            "write_failed_due_to_invalid_input",
            "cannot write a tuple which already exists: " + named(t.key()) + ": " + INVALID_INPUT);
      } else if (!TupleCondition.same(existing.condition(), t.condition())) {
        return error(
            409,
            "Aborted",
            "transactional write failed due to conflict: attempted to write a tuple which already"
                + " exists with a different condition: "
                + named(t.key()));
      }
    }
    Instant now = Instant.now();
    toDelete.forEach(k -> store.remove(k.text()));
    toWrite.forEach(t -> store.put(t.key().text(), new Tuple(t.key(), t.condition(), now)));
    applied.accept(new Applied(toWrite.size(), toDelete.size()));
    return new Answer(200, JSON.createObjectNode());
  }

  private static final String INVALID_INPUT =
      "tuple to be written already existed or the tuple to be deleted did not exist";

  /** A read: the filter of {@code tuple_key} (none: the whole store), a page, its token. */
  synchronized Answer read(String storeId, JsonNode request) {
    JsonNode size = request.get("page_size");
    int pageSize = size == null || size.isNull() ? 50 : size.asInt();
    if (pageSize < 1 || pageSize > 100) {
      return error(
          400,
          "page_size_invalid",
          "invalid ReadRequest.PageSize: value must be inside range [1, 100]");
    }
    String consistency = request.path("consistency").asText("UNSPECIFIED");
    if (!List.of("UNSPECIFIED", "MINIMIZE_LATENCY", "HIGHER_CONSISTENCY").contains(consistency)) {
      return error(400, "validation_error", "invalid value for enum field consistency");
    }
    JsonNode filter = request.get("tuple_key");
    String object = "";
    String relation = "";
    String user = "";
    if (filter != null && !filter.isNull()) {
      object = filter.path("object").asText("");
      relation = filter.path("relation").asText("");
      user = filter.path("user").asText("");
      int colon = object.indexOf(':');
      String type = colon < 0 ? "" : object.substring(0, colon);
      String id = colon < 0 ? "" : object.substring(colon + 1);
      if (type.isEmpty() || (id.isEmpty() && user.isEmpty())) {
        return error(
            400,
            "validation_error",
            "the 'tuple_key' field was provided but the object type field is required and both"
                + " the object id and user cannot be empty");
      }
    }
    List<Tuple> matching = new ArrayList<>();
    for (Tuple t : stores.getOrDefault(storeId, new TreeMap<>()).values()) {
      TupleKey k = t.key();
      boolean objectMatches =
          object.isEmpty()
              || (object.endsWith(":") ? k.object().startsWith(object) : k.object().equals(object));
      if (objectMatches
          && (relation.isEmpty() || k.relation().equals(relation))
          && (user.isEmpty() || k.user().equals(user))) {
        matching.add(t);
      }
    }
    String token = request.path("continuation_token").asText("");
    int from;
    try {
      from = token.isEmpty() ? 0 : Integer.parseInt(token);
    } catch (NumberFormatException e) {
      from = -1;
    }
    if (from < 0 || from > matching.size()) {
      return error(400, "invalid_continuation_token", "Invalid continuation token");
    }
    int to = Math.min(matching.size(), from + pageSize);
    ObjectNode body = JSON.createObjectNode();
    ArrayNode list = body.putArray("tuples");
    for (Tuple t : matching.subList(from, to)) {
      ObjectNode key = list.addObject();
      ObjectNode k = key.putObject("key");
      k.put("user", t.key().user())
          .put("relation", t.key().relation())
          .put("object", t.key().object());
      if (t.condition() != null) {
        ObjectNode c = k.putObject("condition").put("name", t.condition().name());
        c.set(
            "context",
            t.condition().context() == null ? JSON.createObjectNode() : t.condition().context());
      }
      key.put("timestamp", String.valueOf(t.timestamp()));
    }
    body.put("continuation_token", to < matching.size() ? String.valueOf(to) : "");
    return new Answer(200, body);
  }

  /**
   * Why OpenFGA refuses to write {@code t} under {@code model}, in its words, or null: the user,
   * the object's type, the relation, the type restrictions and the condition, in its order.
   */
  private static String invalid(JsonNode model, Tuple t) {
    TupleKey k = t.key();
    String user = k.user();
    int colon = user.indexOf(':');
    if (colon <= 0 || colon == user.length() - 1) {
      return "the 'user' field must be an object (e.g. document:1) or an 'object#relation' or a"
          + " typed wildcard (e.g. group:*)";
    }
    String userType = user.substring(0, colon);
    int hash = user.indexOf('#');
    String userRelation = hash < 0 ? "" : user.substring(hash + 1);
    if (type(model, userType) == null) {
      return "type '" + userType + "' not found";
    }
    if (!userRelation.isEmpty() && !type(model, userType).path("relations").has(userRelation)) {
      return "relation '" + userType + "#" + userRelation + "' not found";
    }
    int objectColon = k.object().indexOf(':');
    if (objectColon <= 0 || objectColon == k.object().length() - 1) {
      return "invalid 'object' field format";
    }
    String objectType = k.object().substring(0, objectColon);
    JsonNode typeDef = type(model, objectType);
    if (typeDef == null) {
      return "type '" + objectType + "' not found";
    }
    if (!typeDef.path("relations").has(k.relation())) {
      return "relation '" + objectType + "#" + k.relation() + "' not found";
    }
    // a model written without metadata (not one of schema 1.1 from the DSL): no type restrictions
    JsonNode metadata = typeDef.get("metadata");
    JsonNode info = metadata == null ? null : metadata.path("relations").path(k.relation());
    if (info == null) {
      return t.condition() != null && !model.path("conditions").has(t.condition().name())
          ? "undefined condition"
          : null;
    }
    boolean wildcard = user.endsWith(":*");
    List<JsonNode> restrictions = new ArrayList<>();
    info.path("directly_related_user_types").forEach(restrictions::add);
    boolean allowed =
        restrictions.stream()
            .anyMatch(
                r ->
                    r.path("type").asText().equals(userType)
                        && r.path("relation").asText("").equals(userRelation)
                        && r.has("wildcard") == wildcard);
    if (!allowed) {
      String what =
          !userRelation.isEmpty()
              ? "'" + userType + "#" + userRelation + "'"
              : wildcard ? "the typed wildcard '" + user + "'" : "type '" + userType + "'";
      return what
          + " is not an allowed type restriction for '"
          + objectType
          + "#"
          + k.relation()
          + "'";
    }
    if (t.condition() == null) {
      boolean unconditional =
          restrictions.stream()
              .anyMatch(
                  r ->
                      r.path("condition").asText("").isEmpty()
                          && r.path("type").asText().equals(userType)
                          && (r.path("relation").asText("").isEmpty()
                              || r.path("relation").asText().equals(userRelation))
                          && (!r.has("wildcard") || wildcard));
      return unconditional ? null : "condition is missing";
    }
    if (!model.path("conditions").has(t.condition().name())) {
      return "undefined condition";
    }
    boolean conditionAllowed =
        restrictions.stream()
            .anyMatch(
                r ->
                    r.path("type").asText().equals(userType)
                        && r.path("condition").asText("").equals(t.condition().name()));
    return conditionAllowed ? null : "invalid condition for type restriction";
  }

  private static JsonNode type(JsonNode model, String name) {
    for (JsonNode t : model.path("type_definitions")) {
      if (t.path("type").asText().equals(name)) {
        return t;
      }
    }
    return null;
  }

  /** A tuple of a request: {@code {user, relation, object, condition?}}. */
  private static Tuple tuple(JsonNode t) {
    JsonNode c = t.path("condition");
    return Tuple.of(
        new TupleKey(
            t.path("object").asText(""), t.path("relation").asText(""), t.path("user").asText("")),
        c.path("name").asText("").isEmpty()
            ? null
            : new TupleCondition(c.path("name").asText(), c.get("context")));
  }

  /** How OpenFGA names a tuple in a validation message: with its condition's name, if any. */
  private static String text(Tuple t) {
    return t.key().text()
        + (t.condition() == null ? "" : " (condition " + t.condition().name() + ")");
  }

  /** How OpenFGA names a tuple in a write's storage error. */
  private static String named(TupleKey k) {
    return "user: '"
        + k.user()
        + "', relation: '"
        + k.relation()
        + "', object: '"
        + k.object()
        + "'";
  }

  static Answer error(int status, String code, String message) {
    return new Answer(status, JSON.createObjectNode().put("code", code).put("message", message));
  }
}
