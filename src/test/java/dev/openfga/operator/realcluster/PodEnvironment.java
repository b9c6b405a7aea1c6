package dev.openfga.operator.realcluster;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarSource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A container's environment as the kubelet computes it: {@code envFrom} first, then {@code env} in
 * order, with {@code valueFrom} Secret, ConfigMap and field references resolved and {@code $(NAME)}
 * references to earlier variables expanded ({@code $$} escapes).
 */
final class PodEnvironment {
  private static final Pattern REFERENCE =
      Pattern.compile("\\$\\$|\\$\\(([A-Za-z_][A-Za-z0-9_.-]*)\\)");

  /**
   * A Secret or ConfigMap the container needs is missing: the kubelet's {@code
   * CreateContainerConfigError}.
   */
  static final class ConfigError extends Exception {
    private static final long serialVersionUID = 1L;

    ConfigError(String message) {
      super(message);
    }
  }

  private PodEnvironment() {}

  static Map<String, String> resolve(KubernetesClient client, Pod pod, Container container)
      throws ConfigError {
    String namespace = pod.getMetadata().getNamespace();
    Map<String, String> env = new LinkedHashMap<>();
    for (EnvFromSource from : nullSafe(container.getEnvFrom())) {
      String prefix = from.getPrefix() == null ? "" : from.getPrefix();
      Map<String, String> values = Map.of();
      if (from.getConfigMapRef() != null) {
        values =
            configMap(
                client,
                namespace,
                from.getConfigMapRef().getName(),
                optional(from.getConfigMapRef().getOptional()));
      } else if (from.getSecretRef() != null) {
        values =
            secret(
                client,
                namespace,
                from.getSecretRef().getName(),
                optional(from.getSecretRef().getOptional()));
      }
      values.forEach((k, v) -> env.put(prefix + k, v));
    }
    for (EnvVar variable : nullSafe(container.getEnv())) {
      if (variable.getValueFrom() == null) {
        env.put(
            variable.getName(),
            expand(variable.getValue() == null ? "" : variable.getValue(), env));
        continue;
      }
      String value = valueFrom(client, pod, variable.getValueFrom());
      if (value != null) {
        env.put(variable.getName(), value);
      }
    }
    return env;
  }

  /** The container's args with {@code $(NAME)} expanded against its environment. */
  static List<String> args(Container container, Map<String, String> env) {
    return nullSafe(container.getArgs()).stream().map(a -> expand(a, env)).toList();
  }

  private static String valueFrom(KubernetesClient client, Pod pod, EnvVarSource from)
      throws ConfigError {
    String namespace = pod.getMetadata().getNamespace();
    if (from.getSecretKeyRef() != null) {
      var ref = from.getSecretKeyRef();
      return key(
          secret(client, namespace, ref.getName(), optional(ref.getOptional())),
          ref.getKey(),
          "Secret " + ref.getName(),
          optional(ref.getOptional()));
    }
    if (from.getConfigMapKeyRef() != null) {
      var ref = from.getConfigMapKeyRef();
      return key(
          configMap(client, namespace, ref.getName(), optional(ref.getOptional())),
          ref.getKey(),
          "ConfigMap " + ref.getName(),
          optional(ref.getOptional()));
    }
    if (from.getFieldRef() != null) {
      return switch (from.getFieldRef().getFieldPath()) {
        case "metadata.name" -> pod.getMetadata().getName();
        case "metadata.namespace" -> namespace;
        case "metadata.uid" -> pod.getMetadata().getUid();
        case "spec.nodeName" -> pod.getSpec().getNodeName();
        case "spec.serviceAccountName" -> pod.getSpec().getServiceAccountName();
        case "status.podIP", "status.hostIP" -> "127.0.0.1";
        default ->
            throw new ConfigError("unsupported fieldRef " + from.getFieldRef().getFieldPath());
      };
    }
    throw new ConfigError("unsupported valueFrom " + from);
  }

  private static String key(Map<String, String> data, String key, String what, boolean optional)
      throws ConfigError {
    String value = data.get(key);
    if (value == null && !optional) {
      throw new ConfigError("couldn't find key " + key + " in " + what);
    }
    return value;
  }

  private static Map<String, String> secret(
      KubernetesClient client, String namespace, String name, boolean optional) throws ConfigError {
    Secret secret = client.secrets().inNamespace(namespace).withName(name).get();
    if (secret == null) {
      if (optional) {
        return Map.of();
      }
      throw new ConfigError("secret \"" + name + "\" not found");
    }
    Map<String, String> data = new LinkedHashMap<>();
    if (secret.getData() != null) {
      secret
          .getData()
          .forEach(
              (k, v) ->
                  data.put(k, new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8)));
    }
    if (secret.getStringData() != null) {
      data.putAll(secret.getStringData());
    }
    return data;
  }

  private static Map<String, String> configMap(
      KubernetesClient client, String namespace, String name, boolean optional) throws ConfigError {
    ConfigMap map = client.configMaps().inNamespace(namespace).withName(name).get();
    if (map == null) {
      if (optional) {
        return Map.of();
      }
      throw new ConfigError("configmap \"" + name + "\" not found");
    }
    return map.getData() == null ? Map.of() : map.getData();
  }

  static String expand(String value, Map<String, String> env) {
    Matcher m = REFERENCE.matcher(value);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String replacement;
      if (m.group().equals("$$")) {
        replacement = "$";
      } else {
        replacement = env.getOrDefault(m.group(1), m.group());
      }
      m.appendReplacement(out, Matcher.quoteReplacement(replacement));
    }
    m.appendTail(out);
    return out.toString();
  }

  private static boolean optional(Boolean value) {
    return Boolean.TRUE.equals(value);
  }

  private static <T> List<T> nullSafe(List<T> list) {
    return list == null ? List.of() : list;
  }
}
