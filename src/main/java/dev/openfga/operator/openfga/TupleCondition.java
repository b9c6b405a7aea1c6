package dev.openfga.operator.openfga;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;

/**
 * A tuple's condition: its name and its context (a JSON object, or null for none). Two conditions
 * are the same as OpenFGA compares them: the same name, and contexts equal with numbers compared by
 * value ({@code 3} is {@code 3.0}: OpenFGA keeps numbers as doubles); no context is an empty one.
 */
public record TupleCondition(String name, JsonNode context) {

  public TupleCondition {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("a condition needs a name");
    }
    if (context != null && (context.isNull() || context.isMissingNode())) {
      context = null;
    }
  }

  /** Whether {@code a} and {@code b} (either may be null: no condition) are the same condition. */
  public static boolean same(TupleCondition a, TupleCondition b) {
    if (a == null || b == null) {
      return a == b;
    }
    return a.name.equals(b.name) && sameValue(a.context, b.context);
  }

  private static boolean sameValue(JsonNode a, JsonNode b) {
    boolean aEmpty = a == null || (a.isObject() && a.isEmpty());
    boolean bEmpty = b == null || (b.isObject() && b.isEmpty());
    if (aEmpty || bEmpty) {
      return aEmpty && bEmpty;
    }
    if (a.isNumber() && b.isNumber()) {
      return a.doubleValue() == b.doubleValue();
    }
    if (a.isObject() && b.isObject()) {
      if (a.size() != b.size()) {
        return false;
      }
      for (var it = a.fieldNames(); it.hasNext(); ) {
        String f = it.next();
        if (!b.has(f) || !sameValue(a.get(f), b.get(f))) {
          return false;
        }
      }
      return true;
    }
    if (a.isArray() && b.isArray()) {
      if (a.size() != b.size()) {
        return false;
      }
      for (int i = 0; i < a.size(); i++) {
        if (!sameValue(a.get(i), b.get(i))) {
          return false;
        }
      }
      return true;
    }
    return Objects.equals(a, b);
  }
}
