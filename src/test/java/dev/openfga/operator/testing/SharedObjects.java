package dev.openfga.operator.testing;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds mutable objects two fabric8 object graphs have in common (the same instance reachable from
 * both). Strings, boxed primitives and enums are immutable and ignored; immutable JDK collections
 * are looked through.
 */
public final class SharedObjects {
  private SharedObjects() {}

  /** The paths (in {@code a}) of every mutable object also reachable from {@code b}. */
  public static List<String> between(Object a, Object b) {
    Map<Object, String> inA = collect(a);
    Map<Object, String> inB = collect(b);
    List<String> shared = new ArrayList<>();
    inA.forEach(
        (object, path) -> {
          if (inB.containsKey(object)) {
            shared.add(path + " (" + object.getClass().getSimpleName() + ")");
          }
        });
    return shared;
  }

  private static Map<Object, String> collect(Object root) {
    Map<Object, String> seen = new IdentityHashMap<>();
    visit(root, "$", seen);
    return seen;
  }

  private static void visit(Object o, String path, Map<Object, String> seen) {
    if (o == null
        || o instanceof String
        || o instanceof Number
        || o instanceof Boolean
        || o instanceof Character
        || o.getClass().isEnum()) {
      return;
    }
    String type = o.getClass().getName();
    boolean immutableJdk =
        type.startsWith("java.util.ImmutableCollections")
            || type.startsWith("java.util.Collections$");
    if (!immutableJdk) {
      if (seen.containsKey(o)) {
        return;
      }
      seen.put(o, path);
    }
    if (o instanceof Map<?, ?> map) {
      map.forEach((k, v) -> visit(v, path + "[" + k + "]", seen));
      return;
    }
    if (o instanceof Collection<?> collection) {
      int i = 0;
      for (Object item : collection) {
        visit(item, path + "[" + i++ + "]", seen);
      }
      return;
    }
    if (!type.startsWith("io.fabric8.")) {
      return;
    }
    for (Class<?> c = o.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
      for (Field field : c.getDeclaredFields()) {
        if (Modifier.isStatic(field.getModifiers())) {
          continue;
        }
        field.setAccessible(true);
        try {
          visit(field.get(o), path + "." + field.getName(), seen);
        } catch (IllegalAccessException e) {
          throw new IllegalStateException(e);
        }
      }
    }
  }
}
