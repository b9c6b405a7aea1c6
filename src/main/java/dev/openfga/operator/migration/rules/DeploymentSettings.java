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
    boolean optedIn = "true".equals(a.get(Keys.MIGRATION_ENABLED));
    List<String> problems = new ArrayList<>();

    String container = Keys.DEFAULT_CONTAINER;
    if (a.containsKey(Keys.CONTAINER_NAME)) {
      String value = a.get(Keys.CONTAINER_NAME);
      if (value == null || value.isBlank()) {
        problems.add(Messages.annotation(Keys.CONTAINER_NAME, value, "must name a container"));
        container = null;
      } else if (!DNS_LABEL.matcher(value).matches()) {
        problems.add(
            Messages.annotation(Keys.CONTAINER_NAME, value, "is not a valid container name"));
        container = null;
      } else {
        container = value;
      }
    }

    Optional<Integer> replicas = Optional.empty();
    String replicasValue = a.get(Keys.DESIRED_REPLICAS);
    if (replicasValue != null && !replicasValue.isBlank()) {
      try {
        int parsed = Integer.parseInt(replicasValue.strip());
        if (parsed < 0) {
          problems.add(
              Messages.annotation(Keys.DESIRED_REPLICAS, replicasValue, "must be an integer >= 0"));
        } else {
          replicas = Optional.of(parsed);
        }
      } catch (NumberFormatException e) {
        problems.add(
            Messages.annotation(Keys.DESIRED_REPLICAS, replicasValue, "must be an integer >= 0"));
      }
    }

    Optional<String> serviceAccount = Optional.empty();
    String saValue = a.get(Keys.MIGRATION_SERVICE_ACCOUNT);
    if (saValue != null && !saValue.isBlank()) {
      if (saValue.length() <= MAX_VALUE_LENGTH && DNS_SUBDOMAIN.matcher(saValue).matches()) {
        serviceAccount = Optional.of(saValue);
      } else {
        problems.add(
            Messages.annotation(
                Keys.MIGRATION_SERVICE_ACCOUNT, saValue, "is not a valid ServiceAccount name"));
      }
    }

    Optional<Instant> retryAfter = Optional.empty();
    String retryValue = a.get(Keys.RETRY_AFTER);
    if (retryValue != null && !retryValue.isBlank()) {
      retryAfter = Timestamps.parse(retryValue);
      if (retryAfter.isEmpty()) {
        problems.add(
            Messages.annotation(
                Keys.RETRY_AFTER, retryValue, "is not an RFC 3339 time; it is ignored"));
      }
    }
    Optional<String> secret = Optional.empty();
    String secretValue = a.get(Keys.MIGRATION_SECRET);
    if (secretValue != null && !secretValue.isBlank()) {
      if (secretValue.length() <= MAX_VALUE_LENGTH
          && DNS_SUBDOMAIN.matcher(secretValue).matches()) {
        secret = Optional.of(secretValue);
      } else {
        problems.add(
            Messages.annotation(Keys.MIGRATION_SECRET, secretValue, "is not a valid Secret name"));
      }
    }

    List<String> sidecars = new ArrayList<>();
    String sidecarsValue = a.get(Keys.MIGRATION_SIDECARS);
    if (sidecarsValue != null && !sidecarsValue.isBlank()) {
      if (sidecarsValue.length() > MAX_VALUE_LENGTH) {
        problems.add(Messages.annotation(Keys.MIGRATION_SIDECARS, sidecarsValue, "is too long"));
      } else {
        // every entry must name a container: an empty one (a,,b or a trailing comma) too
        for (String part : sidecarsValue.split(",", -1)) {
          String sidecar = part.strip();
          if (!DNS_LABEL.matcher(sidecar).matches()) {
            problems.add(
                Messages.annotation(
                    Keys.MIGRATION_SIDECARS,
                    sidecarsValue,
                    "must be a comma-separated list of container names"));
            sidecars.clear();
            break;
          }
          if (!sidecars.contains(sidecar)) {
            sidecars.add(sidecar);
          }
        }
      }
    }

    boolean mesh = "true".equals(a.get(Keys.MIGRATION_MESH));

    Optional<String> requestedAt = Optional.empty();
    String requestValue = a.get(Keys.MIGRATE_REQUESTED_AT);
    if (requestValue != null && !requestValue.isBlank()) {
      if (Timestamps.parse(requestValue.strip()).isPresent()) {
        requestedAt = Optional.of(requestValue.strip());
      } else {
        problems.add(
            Messages.annotation(
                Keys.MIGRATE_REQUESTED_AT, requestValue, "is not an RFC 3339 time; it is ignored"));
      }
    }
    return new DeploymentSettings(
        optedIn,
        container,
        replicas,
        serviceAccount,
        retryAfter,
        secret,
        List.copyOf(sidecars),
        mesh,
        requestedAt,
        List.copyOf(problems));
  }
}
