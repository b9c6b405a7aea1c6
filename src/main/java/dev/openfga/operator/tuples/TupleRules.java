package dev.openfga.operator.tuples;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleKey;
import java.util.Optional;

/**
 * Whether an authorization model allows a tuple, as OpenFGA checks it on a Write: the object's type
 * and the relation exist, the user is an object, a userset or a typed wildcard of a type (and
 * relation) the relation may be assigned directly, and the condition is one the model defines and
 * allows there. Pure, over the model's JSON. The problem is worded like OpenFGA's ({@code Invalid
 * tuple '…'. Reason: …}); it names the condition, never its context.
 */
final class TupleRules {
  private TupleRules() {}

  /** What is wrong with {@code t} for {@code model}, or empty when the model allows it. */
  static Optional<String> problem(JsonNode model, Tuple t) {
    Optional<String> reason = reason(model, t);
    if (reason.isEmpty()) {
      return Optional.empty();
    }
    String name = t.condition() == null ? "" : " (condition " + t.condition().name() + ")";
    return Optional.of("Invalid tuple '" + t.key().text() + name + "'. Reason: " + reason.get());
  }

  private static Optional<String> reason(JsonNode model, Tuple t) {
    TupleKey k = t.key();
    int colon = k.object().indexOf(':');
    if (colon <= 0 || colon == k.object().length() - 1 || k.object().endsWith(":*")) {
      return Optional.of("invalid 'object' field format");
    }
    String type = k.object().substring(0, colon);
    JsonNode def = typeDefinition(model, type);
    if (def == null) {
      return Optional.of("type '" + type + "' not found");
    }
    if (!def.path("relations").has(k.relation())) {
      return Optional.of("relation '" + type + "#" + k.relation() + "' not found");
    }
    User user = User.parse(k.user());
    if (user == null) {
      return Optional.of(
          "the 'user' field must be an object (e.g. document:1) or an 'object#relation' or a"
              + " typed wildcard (e.g. group:*)");
    }
    JsonNode userDef = typeDefinition(model, user.type);
    if (userDef == null) {
      return Optional.of("type '" + user.type + "' not found");
    }
    if (user.relation != null && !userDef.path("relations").has(user.relation)) {
      return Optional.of("relation '" + user.type + "#" + user.relation + "' not found");
    }
    String condition = t.condition() == null ? "" : t.condition().name();
    if (!condition.isEmpty() && !model.path("conditions").has(condition)) {
      return Optional.of("undefined condition");
    }
    return allowed(def, k.relation(), user, condition, type);
  }

  /** Whether the relation may be assigned this user directly, with this condition. */
  private static Optional<String> allowed(
      JsonNode def, String relation, User user, String condition, String type) {
    JsonNode direct =
        def.path("metadata").path("relations").path(relation).path("directly_related_user_types");
    boolean typeAllowed = false;
    for (JsonNode entry : direct) {
      if (!entry.path("type").asText().equals(user.type) || !user.matches(entry)) {
        continue;
      }
      typeAllowed = true;
      if (entry.path("condition").asText("").equals(condition)) {
        return Optional.empty();
      }
    }
    String restriction = user.type + (user.relation == null ? "" : "#" + user.relation);
    if (user.wildcard) {
      restriction = user.type + ":*";
    }
    if (!typeAllowed) {
      return Optional.of(
          "type '"
              + restriction
              + "' is not an allowed type restriction for '"
              + type
              + "#"
              + relation
              + "'");
    }
    return Optional.of(
        condition.isEmpty() ? "condition is missing" : "invalid condition for type restriction");
  }

  private static JsonNode typeDefinition(JsonNode model, String type) {
    for (JsonNode def : model.path("type_definitions")) {
      if (def.path("type").asText().equals(type)) {
        return def;
      }
    }
    return null;
  }

  /** A tuple's user: {@code type:id}, {@code type:*} or {@code type:id#relation}. */
  private record User(String type, boolean wildcard, String relation) {
    static User parse(String user) {
      int colon = user.indexOf(':');
      if (colon <= 0 || colon == user.length() - 1) {
        return null;
      }
      String type = user.substring(0, colon);
      String rest = user.substring(colon + 1);
      if (rest.equals("*")) {
        return new User(type, true, null);
      }
      int hash = rest.indexOf('#');
      if (hash == 0 || hash == rest.length() - 1) {
        return null;
      }
      return new User(type, false, hash < 0 ? null : rest.substring(hash + 1));
    }

    /** Whether a directly-related-user-type entry is for this kind of user. */
    boolean matches(JsonNode entry) {
      if (wildcard) {
        return entry.has("wildcard");
      }
      if (relation != null) {
        return relation.equals(entry.path("relation").asText(""));
      }
      return !entry.has("wildcard") && entry.path("relation").asText("").isEmpty();
    }
  }
}
