package dev.openfga.operator.tuples;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleCondition;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.tuples.TuplesObservation.Desired;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The tuples an FGATuples declares, from {@code spec.tuples} or from the text of a ConfigMap key
 * ({@code spec.tuplesFrom}: a YAML or JSON list of tuples, or an object whose {@code tuples} is
 * that list, as in an {@code .fga.yaml} store file), checked for the fields each needs and for
 * duplicates; with the hash of the whole set. A problem names the tuple by its place, never by its
 * condition's context.
 */
final class DeclaredTuples {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What OpenFGA accepts in a tuple field (no whitespace; the lengths OpenFGA allows). */
  private static final Pattern OBJECT = Pattern.compile("[^\\s#:@*]{1,254}:[^\\s#:*]+");

  private static final Pattern RELATION = Pattern.compile("[^:#@*\\s]{1,50}");
  private static final Pattern USER =
      Pattern.compile("[^\\s#:@*]{1,254}:([^\\s#:*]+(#[^:#@*\\s]{1,50})?|\\*)");
  private static final Pattern CONDITION = Pattern.compile("[^*\\s]{2,50}");

  private DeclaredTuples() {}

  /** The tuples of {@code spec.tuples}. */
  static Desired fromSpec(List<FGATuples.TupleSpec> specs) {
    JsonNode list = JSON.valueToTree(specs == null ? List.of() : specs);
    return of(list, "spec.tuples");
  }

  /** The tuples of a ConfigMap key's text ({@code where} names it). */
  static Desired fromText(String text, boolean json, String where) {
    JsonNode node;
    try {
      node = (json ? JSON : YAML).readTree(text);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      // the parser's message may quote the text (a condition's context): only where it stopped
      var at = e.getLocation();
      String place =
          at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
      return new Desired.Invalid(
          TuplesReason.InvalidSource,
          where + " does not read as " + (json ? "JSON" : "YAML") + place);
    }
    if (node != null && node.isObject() && node.has("tuples")) {
      node = node.get("tuples");
    }
    if (node == null || node.isNull() || node.isMissingNode()) {
      return of(JSON.createArrayNode(), where);
    }
    return of(node, where);
  }

  private static Desired of(JsonNode list, String where) {
    if (!list.isArray()) {
      return new Desired.Invalid(
          TuplesReason.InvalidSource, where + " must be a list of tuples (user, relation, object)");
    }
    SortedMap<TupleKey, Tuple> tuples = new TreeMap<>();
    for (int i = 0; i < list.size(); i++) {
      JsonNode t = list.get(i);
      String at = where + "[" + i + "]";
      String problem = problem(t);
      if (problem != null) {
        return new Desired.Invalid(TuplesReason.InvalidSource, at + ": " + problem);
      }
      TupleKey key =
          new TupleKey(
              t.get("object").asText(), t.get("relation").asText(), t.get("user").asText());
      JsonNode c = t.path("condition");
      TupleCondition condition =
          c.isObject() ? new TupleCondition(c.get("name").asText(), c.get("context")) : null;
      if (tuples.put(key, Tuple.of(key, condition)) != null) {
        return new Desired.Invalid(
            TuplesReason.InvalidSource, at + ": " + key.text() + " is declared twice");
      }
    }
    return new Desired.Valid(tuples, hash(tuples));
  }

  /** What is wrong with one declared tuple's fields, or null. */
  private static String problem(JsonNode t) {
    if (!t.isObject()) {
      return "not a tuple (an object with user, relation, object)";
    }
    for (String field : List.of("user", "relation", "object")) {
      if (!t.path(field).isTextual() || t.path(field).asText().isEmpty()) {
        return "has no " + field;
      }
    }
    if (!OBJECT.matcher(t.get("object").asText()).matches()) {
      return "object " + t.get("object").asText() + " is not type:id";
    }
    if (!RELATION.matcher(t.get("relation").asText()).matches()) {
      return "relation " + t.get("relation").asText() + " is not a relation name";
    }
    String user = t.get("user").asText();
    if (user.length() > 512 || !USER.matcher(user).matches()) {
      return "user " + user + " is not type:id, type:id#relation or type:*";
    }
    JsonNode c = t.path("condition");
    if (!c.isMissingNode() && !c.isNull()) {
      if (!c.isObject() || !CONDITION.matcher(c.path("name").asText("")).matches()) {
        return "condition needs a name (2 to 50 characters, no whitespace)";
      }
      if (c.has("context") && !c.get("context").isObject() && !c.get("context").isNull()) {
        return "condition.context must be an object";
      }
    }
    return null;
  }

  /** {@code sha256:} of the tuples in key order with their conditions. */
  static String hash(SortedMap<TupleKey, Tuple> tuples) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      for (Tuple t : tuples.values()) {
        digest.update(t.key().text().getBytes(StandardCharsets.UTF_8));
        if (t.condition() != null) {
          digest.update(("|" + t.condition().name() + "|").getBytes(StandardCharsets.UTF_8));
          if (t.condition().context() != null) {
            digest.update(t.condition().context().toString().getBytes(StandardCharsets.UTF_8));
          }
        }
        digest.update((byte) '\n');
      }
      return "sha256:" + HexFormat.of().formatHex(digest.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is always available", e);
    }
  }
}
