package dev.openfga.operator.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An RFC 6902 JSON Patch that first sets {@code metadata.resourceVersion} to the value the operator
 * observed. The API server takes a resourceVersion in a patch as a precondition and answers 409
 * Conflict if anyone changed the object since, so nothing written concurrently by another
 * controller or a person is ever overwritten. (A {@code test} operation would do the same on a real
 * API server, but the mock API server the tests use cannot answer a failed {@code test}.)
 */
public final class JsonPatch {
  private final List<Map<String, Object>> ops = new ArrayList<>();

  private JsonPatch() {}

  public static JsonPatch guardedBy(HasMetadata observed) {
    return new JsonPatch()
        .add("/metadata/resourceVersion", observed.getMetadata().getResourceVersion());
  }

  /** Adds or replaces (JSON Patch {@code add} replaces an existing member). */
  public JsonPatch add(String path, Object value) {
    return op("add", path, value);
  }

  public JsonPatch remove(String path) {
    Map<String, Object> op = new LinkedHashMap<>();
    op.put("op", "remove");
    op.put("path", path);
    ops.add(op);
    return this;
  }

  /** Sets a key of a map-valued field ({@code labels}, {@code annotations}), creating the map. */
  public JsonPatch put(String mapPath, Map<String, String> current, String key, String value) {
    if (current == null) {
      Map<String, String> map = new LinkedHashMap<>();
      map.put(key, value);
      return add(mapPath, map);
    }
    return add(mapPath + "/" + escape(key), value);
  }

  public boolean changesSomething() {
    return ops.size() > 1;
  }

  public String json() {
    return Serialization.asJson(ops);
  }

  public static String escape(String key) {
    return key.replace("~", "~0").replace("/", "~1");
  }

  private JsonPatch op(String kind, String path, Object value) {
    Map<String, Object> op = new LinkedHashMap<>();
    op.put("op", kind);
    op.put("path", path);
    op.put("value", value);
    ops.add(op);
    return this;
  }
}
