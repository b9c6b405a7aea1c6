package dev.openfga.operator.kube;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Shrinks a cached fabric8 model object in place: every empty list and map in it (fabric8 gives
 * each model object a map for unknown fields and an empty list for every list field, used or not)
 * becomes the one shared immutable empty list or map, and the other lists lose their spare
 * capacity. Those empty lists and maps are a good part of a cached Deployment skeleton
 * (docs/performance.md, change 11).
 *
 * <p>Only for objects nothing changes any more: the informer's stored objects, which the reconcile
 * reads and never changes (writes go through patches; the Job is built by copying). A change to a
 * compacted empty list or map throws {@link UnsupportedOperationException}.
 */
public final class Compaction {
  private Compaction() {}

  private static final String MODEL = "io.fabric8.kubernetes.api.model";

  private static final Map<Class<?>, List<Field>> FIELDS = new ConcurrentHashMap<>();

  /** Compacts {@code o} and every model object it holds; returns {@code o}. */
  public static <T> T compact(T o) {
    walk(o);
    return o;
  }

  private static void walk(Object o) {
    if (o == null || !o.getClass().getName().startsWith(MODEL)) {
      return;
    }
    try {
      for (Field f : FIELDS.computeIfAbsent(o.getClass(), Compaction::fieldsOf)) {
        Object value = f.get(o);
        if (value instanceof List<?> list) {
          if (list.isEmpty()) {
            f.set(o, List.of());
          } else {
            list.forEach(Compaction::walk);
            if (list instanceof ArrayList<?> array) {
              array.trimToSize();
            }
          }
        } else if (value instanceof Map<?, ?> map) {
          if (map.isEmpty()) {
            f.set(o, Map.of());
          } else {
            map.values().forEach(Compaction::walk);
          }
        } else {
          walk(value);
        }
      }
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("cannot compact " + o.getClass().getName(), e);
    }
  }

  /** Lists, maps and model objects; not the strings, numbers and booleans, which hold nothing. */
  private static boolean canHoldListOrMap(Class<?> type) {
    return List.class.isAssignableFrom(type)
        || Map.class.isAssignableFrom(type)
        || type == Object.class
        || type.getName().startsWith(MODEL);
  }

  private static List<Field> fieldsOf(Class<?> kind) {
    List<Field> fields = new ArrayList<>();
    for (Class<?> c = kind; c != null && c != Object.class; c = c.getSuperclass()) {
      for (Field f : c.getDeclaredFields()) {
        if (!Modifier.isStatic(f.getModifiers()) && canHoldListOrMap(f.getType())) {
          f.setAccessible(true);
          fields.add(f);
        }
      }
    }
    return List.copyOf(fields);
  }
}
