package dev.openfga.operator.chart;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Fields that the Kubernetes model did not know. fabric8 keeps every field it cannot map in an
 * object's {@code additionalProperties} (and writes them back out), so a typo such as {@code
 * readinesProbe} parses without error; this walks the whole object graph and lists them.
 */
final class UnknownFields {
  private UnknownFields() {}

  /** Each unknown field as {@code path.to.object: [names]}; empty when there are none. */
  static List<String> in(Object object) {
    List<String> found = new ArrayList<>();
    walk(object, "", found);
    return found;
  }

  private static void walk(Object value, String path, List<String> found) {
    if (value == null) {
      return;
    }
    if (value instanceof Map<?, ?> map) {
      map.forEach((k, v) -> walk(v, path + "." + k, found));
      return;
    }
    if (value instanceof Collection<?> items) {
      int i = 0;
      for (Object item : items) {
        walk(item, path + "[" + i++ + "]", found);
      }
      return;
    }
    if (!value.getClass().getName().startsWith("io.fabric8.")) {
      return;
    }
    for (Class<?> type = value.getClass(); type != Object.class; type = type.getSuperclass()) {
      for (Field field : type.getDeclaredFields()) {
        if (Modifier.isStatic(field.getModifiers())) {
          continue;
        }
        boolean additional = field.getName().equals("additionalProperties");
        if (!additional && !field.isAnnotationPresent(JsonProperty.class)) {
          continue;
        }
        Object fieldValue;
        try {
          field.setAccessible(true);
          fieldValue = field.get(value);
        } catch (ReflectiveOperationException | RuntimeException e) {
          throw new AssertionError("cannot read " + type.getName() + "." + field.getName(), e);
        }
        if (additional) {
          if (fieldValue instanceof Map<?, ?> extra && !extra.isEmpty()) {
            found.add((path.isEmpty() ? "." : path) + ": " + extra.keySet());
          }
        } else {
          String name = field.getAnnotation(JsonProperty.class).value();
          walk(fieldValue, path + "." + (name.isEmpty() ? field.getName() : name), found);
        }
      }
    }
  }
}
