package dev.openfga.operator.model;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Which database a migration runs against, so that two Deployments sharing one never migrate at
 * once (SPEC section 9). The key is the engine and the URI as the Deployment's container defines
 * it: a literal URI without its credentials and query (so two users of one database match), or the
 * Secret or ConfigMap key the URI comes from. The Job carries a short hash of the key as the label
 * {@link Keys#DATABASE_LABEL}; nothing secret is hashed, and the rule survives an operator restart
 * because it is read from the Jobs themselves.
 */
public final class Database {
  private Database() {}

  private static final Pattern KEYWORD_CREDENTIAL =
      Pattern.compile("(?i)\\b(password|user)\\s*=\\s*('[^']*'|\\S+)");

  /** The label value for the container's database, or empty when it has no datastore URI. */
  public static Optional<String> key(String namespace, Container container) {
    List<EnvVar> env = MigrationJob.list(container.getEnv());
    // the last definition of a name wins in a pod, as the kubelet resolves it
    Optional<EnvVar> uri =
        env.stream().filter(e -> Keys.URI_ENV.equals(e.getName())).reduce((a, b) -> b);
    if (uri.isEmpty()) {
      return Optional.empty();
    }
    String engine = MigrationJob.literalEngine(container).orElse("");
    EnvVar var = uri.get();
    String where;
    if (var.getValueFrom() == null) {
      String value = var.getValue() == null ? "" : var.getValue();
      if (value.isBlank()) {
        return Optional.empty();
      }
      where = "uri:" + withoutCredentials(value);
    } else if (var.getValueFrom().getSecretKeyRef() != null) {
      var ref = var.getValueFrom().getSecretKeyRef();
      where = "secret:" + namespace + "/" + ref.getName() + "/" + ref.getKey();
    } else if (var.getValueFrom().getConfigMapKeyRef() != null) {
      var ref = var.getValueFrom().getConfigMapKeyRef();
      where = "configmap:" + namespace + "/" + ref.getName() + "/" + ref.getKey();
    } else {
      return Optional.empty();
    }
    return Optional.of(hash(engine + "|" + where));
  }

  /**
   * The URI without user, password and query: {@code postgres://u:p@db:5432/fga?x=y} and {@code
   * u:p@tcp(db:3306)/fga?x=y} keep {@code postgres://db:5432/fga} and {@code tcp(db:3306)/fga};
   * keyword strings ({@code host=db password=p}) lose their user and password.
   */
  static String withoutCredentials(String uri) {
    String value = uri.strip();
    int query = value.indexOf('?');
    if (query >= 0) {
      value = value.substring(0, query);
    }
    int scheme = value.indexOf("://");
    String prefix = "";
    if (scheme >= 0) {
      prefix = value.substring(0, scheme + 3);
      value = value.substring(scheme + 3);
    }
    int path = value.indexOf('/');
    int at = (path >= 0 ? value.substring(0, path) : value).lastIndexOf('@');
    if (at < 0 && scheme < 0) {
      at = value.lastIndexOf('@');
    }
    if (at >= 0) {
      value = value.substring(at + 1);
    }
    value = KEYWORD_CREDENTIAL.matcher(value).replaceAll("").replaceAll("\\s+", " ").strip();
    return prefix + value;
  }

  /**
   * Another Deployment's unfinished Job (neither {@code Complete} nor {@code Failed}: its pod may
   * still run {@code openfga migrate}) on the same database, the oldest first; never the Job named
   * {@code ownJob} in {@code namespace}.
   */
  public static Optional<Job> busyWith(
      String database, String namespace, String ownJob, Collection<Job> jobs) {
    return jobs.stream()
        .filter(j -> database.equals(label(j)))
        .filter(
            j ->
                !(namespace.equals(j.getMetadata().getNamespace())
                    && ownJob.equals(j.getMetadata().getName())))
        .filter(j -> !MigrationJob.isComplete(j) && !MigrationJob.hasCondition(j, "Failed"))
        .min(
            Comparator.comparing((Job j) -> String.valueOf(j.getMetadata().getCreationTimestamp()))
                .thenComparing(j -> j.getMetadata().getNamespace())
                .thenComparing(j -> j.getMetadata().getName()));
  }

  /** The Job's database label, or {@code null}. */
  public static String label(Job job) {
    Map<String, String> labels = job.getMetadata().getLabels();
    return labels == null ? null : labels.get(Keys.DATABASE_LABEL);
  }

  private static String hash(String key) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing", e);
    }
  }
}
