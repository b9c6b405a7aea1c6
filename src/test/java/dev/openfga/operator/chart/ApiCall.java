package dev.openfga.operator.chart;

import java.util.Arrays;
import java.util.Optional;

/**
 * One request to the Kubernetes API as RBAC sees it: verb, API group, resource (with its
 * subresource), namespace (null when cluster-wide) and object name (null for collections).
 */
record ApiCall(String verb, String group, String resource, String namespace, String name) {

  /**
   * The RBAC view of an HTTP request, or empty for a non-resource path (discovery, {@code
   * /version}).
   */
  static Optional<ApiCall> of(String method, String pathAndQuery) {
    int q = pathAndQuery.indexOf('?');
    String path = q < 0 ? pathAndQuery : pathAndQuery.substring(0, q);
    String query = q < 0 ? "" : pathAndQuery.substring(q + 1);
    String[] segments = path.replaceAll("^/+", "").split("/");
    String group;
    String[] rest;
    if (segments[0].equals("api") && segments.length > 2) {
      group = "";
      rest = Arrays.copyOfRange(segments, 2, segments.length);
    } else if (segments[0].equals("apis") && segments.length > 3) {
      group = segments[1];
      rest = Arrays.copyOfRange(segments, 3, segments.length);
    } else {
      return Optional.empty();
    }
    String namespace = null;
    if (rest[0].equals("namespaces") && rest.length > 2) {
      namespace = rest[1];
      rest = Arrays.copyOfRange(rest, 2, rest.length);
    }
    String resource = rest[0] + (rest.length > 2 ? "/" + rest[2] : "");
    String name = rest.length > 1 ? rest[1] : null;
    boolean watch =
        Arrays.stream(query.split("&"))
            .anyMatch(p -> p.equals("watch=true") || p.equals("watch=1"));
    String verb =
        switch (method) {
          case "GET" -> name != null ? "get" : watch ? "watch" : "list";
          case "POST" -> "create";
          case "PUT" -> "update";
          case "PATCH" -> "patch";
          case "DELETE" -> name != null ? "delete" : "deletecollection";
          default -> throw new IllegalArgumentException("HTTP method " + method);
        };
    return Optional.of(new ApiCall(verb, group, resource, namespace, name));
  }

  /** {@code apps/deployments/status} style, {@code core} for the core group. */
  String groupResource() {
    return (group.isEmpty() ? "core" : group) + "/" + resource;
  }

  @Override
  public String toString() {
    return verb
        + " "
        + groupResource()
        + (name == null ? "" : " " + name)
        + (namespace == null ? " (cluster-wide)" : " in " + namespace);
  }
}
