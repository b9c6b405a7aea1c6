package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Timestamps;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What the {@code openfga.dev/} annotations of a Deployment ask for, with one problem per value
 * that cannot be used. A bad value never crashes anything: the planner reports it and goes on
 * without that setting where that is safe.
 */
public record DeploymentSettings(
    boolean optedIn,
    String containerName,
    Optional<Integer> desiredReplicas,
    Optional<String> serviceAccount,
    Optional<Instant> retryAfter,
    Optional<String> migrationSecret,
    List<String> sidecars,
    boolean mesh,
    Optional<String> requestedAt,
    List<String> problems) {

  /** Longest annotation value read; anything longer is reported, not parsed. */
  static final int MAX_VALUE_LENGTH = 253;

  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  public static boolean isDiscovered(Deployment deployment) {
    Map<String, String> labels = deployment.getMetadata().getLabels();
    return labels != null
        && Keys.PART_OF_OPENFGA.equals(labels.get(Keys.PART_OF))
        && Keys.COMPONENT_SERVER.equals(labels.get(Keys.COMPONENT));
  }

  public static DeploymentSettings of(Deployment deployment) {
    Map<String, String> annotations = deployment.getMetadata().getAnnotations();
    Map<String, String> a = annotations == null ? Map.of() : annotations;
    List<String> problems = new ArrayList<>();
    // in this order: the problems are reported in the order of the values
    return new DeploymentSettings(
        "true".equals(a.get(Keys.MIGRATION_ENABLED)),
        containerName(a, problems),
        desiredReplicas(a, problems),
        objectName(a, Keys.MIGRATION_SERVICE_ACCOUNT, "ServiceAccount", problems),
        retryAfter(a, problems),
        objectName(a, Keys.MIGRATION_SECRET, "Secret", problems),
        sidecars(a, problems),
        "true".equals(a.get(Keys.MIGRATION_MESH)),
        requestedAt(a, problems),
        List.copyOf(problems));
  }

  /** The container to migrate with: the annotation's, else the default; null when unusable. */
  private static String containerName(Map<String, String> a, List<String> problems) {
    if (!a.containsKey(Keys.CONTAINER_NAME)) {
      return Keys.DEFAULT_CONTAINER;
    }
    String value = a.get(Keys.CONTAINER_NAME);
    if (value == null || value.isBlank()) {
      problems.add(Messages.annotation(Keys.CONTAINER_NAME, value, "must name a container"));
      return null;
    }
    if (!DNS_LABEL.matcher(value).matches()) {
      problems.add(
          Messages.annotation(Keys.CONTAINER_NAME, value, "is not a valid container name"));
      return null;
    }
    return value;
  }

  private static Optional<Integer> desiredReplicas(Map<String, String> a, List<String> problems) {
    String value = a.get(Keys.DESIRED_REPLICAS);
    if (value == null || value.isBlank()) {
      return Optional.empty();
    }
    try {
      int parsed = Integer.parseInt(value.strip());
      if (parsed >= 0) {
        return Optional.of(parsed);
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    problems.add(Messages.annotation(Keys.DESIRED_REPLICAS, value, "must be an integer >= 0"));
    return Optional.empty();
  }

  /** The name of a ServiceAccount or Secret, when it is a valid one. */
  private static Optional<String> objectName(
      Map<String, String> a, String key, String kind, List<String> problems) {
    String value = a.get(key);
    if (value == null || value.isBlank()) {
      return Optional.empty();
    }
    if (value.length() <= MAX_VALUE_LENGTH && DNS_SUBDOMAIN.matcher(value).matches()) {
      return Optional.of(value);
    }
    problems.add(Messages.annotation(key, value, "is not a valid " + kind + " name"));
    return Optional.empty();
  }

  /** The retry deadline; an unparseable one is reported and ignored. */
  private static Optional<Instant> retryAfter(Map<String, String> a, List<String> problems) {
    String value = a.get(Keys.RETRY_AFTER);
    if (value == null || value.isBlank()) {
      return Optional.empty();
    }
    Optional<Instant> at = Timestamps.parse(value);
    if (at.isEmpty()) {
      problems.add(
          Messages.annotation(Keys.RETRY_AFTER, value, "is not an RFC 3339 time; it is ignored"));
    }
    return at;
  }

  /** A re-run request, as written (stripped); an unparseable one is reported and ignored. */
  private static Optional<String> requestedAt(Map<String, String> a, List<String> problems) {
    String value = a.get(Keys.MIGRATE_REQUESTED_AT);
    if (value == null || value.isBlank()) {
      return Optional.empty();
    }
    if (Timestamps.parse(value.strip()).isPresent()) {
      return Optional.of(value.strip());
    }
    problems.add(
        Messages.annotation(
            Keys.MIGRATE_REQUESTED_AT, value, "is not an RFC 3339 time; it is ignored"));
    return Optional.empty();
  }

  /** The database proxies named, each once; none when any entry is not a container name. */
  private static List<String> sidecars(Map<String, String> a, List<String> problems) {
    String value = a.get(Keys.MIGRATION_SIDECARS);
    if (value == null || value.isBlank()) {
      return List.of();
    }
    if (value.length() > MAX_VALUE_LENGTH) {
      problems.add(Messages.annotation(Keys.MIGRATION_SIDECARS, value, "is too long"));
      return List.of();
    }
    List<String> sidecars = new ArrayList<>();
    // every entry must name a container: an empty one (a,,b or a trailing comma) too
    for (String part : value.split(",", -1)) {
      String sidecar = part.strip();
      if (!DNS_LABEL.matcher(sidecar).matches()) {
        problems.add(
            Messages.annotation(
                Keys.MIGRATION_SIDECARS,
                value,
                "must be a comma-separated list of container names"));
        return List.of();
      }
      if (!sidecars.contains(sidecar)) {
        sidecars.add(sidecar);
      }
    }
    return List.copyOf(sidecars);
  }
}
