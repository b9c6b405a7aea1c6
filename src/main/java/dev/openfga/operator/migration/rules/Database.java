package dev.openfga.operator.migration.rules;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
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
 * once (SPEC section 9). A key is the engine and the URI as the Deployment's container defines it:
 * a literal URI without its credentials and query (so two users of one database match), or the
 * Secret or ConfigMap key the URI comes from; with {@code openfga.dev/migration-secret} also that
 * Secret's {@code uri} key, which the Job may connect with instead. The Job and its pods carry
 * short hashes of its keys: the first as the label {@link Keys#DATABASE_LABEL}, all of them in the
 * annotation {@link Keys#DATABASES_ANNOTATION}; two Jobs with a key in common share a database.
 * Nothing secret is hashed, and the rule survives an operator restart because it is read from the
 * Jobs and pods themselves: a pod whose Job was deleted by someone else (kubectl, the garbage
 * collector) still holds its database until it has stopped.
 */
public final class Database {
  private Database() {}

  private static final Pattern KEYWORD_CREDENTIAL =
      Pattern.compile("(?i)\\b(password|user)\\s*=\\s*('[^']*'|\\S+)");

  /**
   * The keys of the databases a Job built from the container may migrate: the container's own URI
   * and, with a migration Secret, that Secret's {@code uri}. Empty when neither is known.
   */
  public static List<String> keys(
      String namespace, Container container, Optional<String> migrationSecret) {
    List<String> keys = new java.util.ArrayList<>();
    key(namespace, container).ifPresent(keys::add);
    String engine = MigrationJob.literalEngine(container).orElse("");
    migrationSecret
        .map(
            secret ->
                hash(engine + "|secret:" + namespace + "/" + secret + "/" + Keys.SECRET_KEY_URI))
        .filter(k -> !keys.contains(k))
        .ifPresent(keys::add);
    return List.copyOf(keys);
  }

  /** The key of the container's own URI, or empty when it has no datastore URI. */
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
   * keyword strings ({@code host=db password=p}) lose their user and password. A URI loses its user
   * info as {@link #userInfoEnd} finds it, also when a password holds {@code @} or an unescaped
   * {@code /}, {@code ?} or {@code #} (which OpenFGA cannot use either), so that no part of the
   * password is hashed. (A password of digits cut short by a {@code ?} still reads as a port.)
   */
  static String withoutCredentials(String uri) {
    String value = uri.strip();
    int scheme = value.indexOf("://");
    String prefix = "";
    int at;
    if (scheme >= 0) {
      prefix = value.substring(0, scheme + 3);
      value = value.substring(scheme + 3);
      at = userInfoEnd(value);
    } else {
      int path = value.indexOf('/');
      at = (path >= 0 ? value.substring(0, path) : value).lastIndexOf('@');
      if (at < 0) {
        at = value.lastIndexOf('@');
      }
    }
    if (at >= 0) {
      value = value.substring(at + 1);
    }
    // the query only after the credentials: a password may hold a '?'
    int query = value.indexOf('?');
    if (query >= 0) {
      value = value.substring(0, query);
    }
    value = KEYWORD_CREDENTIAL.matcher(value).replaceAll("").replaceAll("\\s+", " ").strip();
    return prefix + value;
  }

  /**
   * Where the user info of a URI (after its {@code scheme://}) ends: the {@code @} after which come
   * hosts as Go reads them ({@link #isHostList}) and no other {@code @} before the query; -1 for a
   * URI without user info (an {@code @} only in its query). So a password holding {@code @}, and
   * one an unescaped {@code /}, {@code ?} or {@code #} cut short, never stays in the key.
   */
  static int userInfoEnd(String value) {
    int end = firstOf(value, "/?#");
    String authority = end < 0 ? value : value.substring(0, end);
    int query = value.indexOf('?');
    String beforeQuery = query < 0 ? value : value.substring(0, query);
    if (authority.indexOf('@') < 0 && beforeQuery.indexOf('@') < 0 && isHostList(authority)) {
      return -1;
    }
    for (int at = value.indexOf('@'); at >= 0; at = value.indexOf('@', at + 1)) {
      String rest = value.substring(at + 1);
      int hostEnd = firstOf(rest, "/?#");
      String host = hostEnd < 0 ? rest : rest.substring(0, hostEnd);
      int restQuery = rest.indexOf('?');
      String restBeforeQuery = restQuery < 0 ? rest : rest.substring(0, restQuery);
      if (!host.isEmpty() && isHostList(host) && restBeforeQuery.indexOf('@') < 0) {
        return at;
      }
    }
    return value.lastIndexOf('@');
  }

  /** One host or several ({@code a:5432,b:5432}), each a name or {@code [IPv6]}, with a port. */
  static boolean isHostList(String text) {
    return HOSTS.matcher(text).matches();
  }

  private static final Pattern HOSTS =
      Pattern.compile("(\\[[^\\]]*]|[^:,\\[\\]]*)(:\\d+)?(,(\\[[^\\]]*]|[^:,\\[\\]]*)(:\\d+)?)*");

  private static int firstOf(String value, String chars) {
    for (int i = 0; i < value.length(); i++) {
      if (chars.indexOf(value.charAt(i)) >= 0) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Another Deployment's Job on one of these databases whose pod may still run {@code openfga
   * migrate}: neither {@code Complete} nor {@code Failed}, or with a pod still active or
   * terminating (before Kubernetes 1.31 {@code Failed} can come while the pod still ends), the
   * oldest first; never the Job named {@code ownJob} in {@code namespace}.
   */
  public static Optional<Job> busyWith(
      List<String> databases, String namespace, String ownJob, Collection<Job> jobs) {
    return jobs.stream()
        .filter(j -> sharesOne(databases, j))
        .filter(
            j ->
                !(namespace.equals(j.getMetadata().getNamespace())
                    && ownJob.equals(j.getMetadata().getName())))
        .filter(Database::mayRun)
        .min(
            Comparator.comparing((Job j) -> String.valueOf(j.getMetadata().getCreationTimestamp()))
                .thenComparing(j -> j.getMetadata().getNamespace())
                .thenComparing(j -> j.getMetadata().getName()));
  }

  private static boolean finished(Job job) {
    return MigrationJob.isComplete(job) || MigrationJob.hasCondition(job, "Failed");
  }

  private static boolean mayRun(Job job) {
    boolean finished = finished(job);
    var status = job.getStatus();
    boolean podLeft =
        status != null
            && ((status.getActive() != null && status.getActive() > 0)
                || (status.getTerminating() != null && status.getTerminating() > 0));
    return !finished || podLeft;
  }

  /**
   * A migration pod on one of these databases that may still run {@code openfga migrate}: neither
   * {@code Succeeded} nor {@code Failed}, and not a pod of an unfinished one of {@code jobs}, which
   * {@link #busyWith} judges by their status (a finished Job's pod that has not stopped counts:
   * before Kubernetes 1.29, or without its JobPodReplacementPolicy gate, a Job has no {@code
   * terminating} count to tell it); the oldest first. Its Job is gone, or not yet seen: deleted
   * without waiting for its pods (kubectl's default background or orphan cascade, the garbage
   * collector after its Deployment), which the Jobs alone cannot tell.
   */
  public static Optional<Pod> busyPod(
      List<String> databases, Collection<Pod> pods, Collection<Job> jobs) {
    java.util.Set<String> unfinished = new java.util.HashSet<>();
    jobs.stream().filter(j -> !finished(j)).forEach(j -> unfinished.add(j.getMetadata().getUid()));
    return pods.stream()
        .filter(p -> sharesOne(databases, p))
        .filter(p -> !unfinished.contains(controllerUid(p)))
        .filter(Database::mayRun)
        .min(
            Comparator.comparing((Pod p) -> String.valueOf(p.getMetadata().getCreationTimestamp()))
                .thenComparing(p -> p.getMetadata().getNamespace())
                .thenComparing(p -> p.getMetadata().getName()));
  }

  /**
   * Whether one of {@code pods} is {@code job}'s and {@code Running}: {@code openfga migrate} has
   * started, whatever the Job's ready count says (a mesh proxy not ready keeps the pod from Ready).
   */
  public static boolean hasRunningPod(Job job, Collection<Pod> pods) {
    return pods.stream()
        .anyMatch(
            p ->
                isPodOf(p, job)
                    && p.getStatus() != null
                    && "Running".equals(p.getStatus().getPhase()));
  }

  /** Whether {@code pod} is {@code job}'s (its controller). */
  public static boolean isPodOf(Pod pod, Job job) {
    String uid = job.getMetadata().getUid();
    return uid != null && uid.equals(controllerUid(pod));
  }

  /** The UID of the pod's controller (its Job), empty for none (orphaned). */
  private static String controllerUid(Pod pod) {
    var owners = pod.getMetadata().getOwnerReferences();
    return owners == null
        ? ""
        : owners.stream()
            .filter(r -> Boolean.TRUE.equals(r.getController()))
            .map(r -> r.getUid())
            .findFirst()
            .orElse("");
  }

  private static boolean mayRun(Pod pod) {
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return !"Succeeded".equals(phase) && !"Failed".equals(phase);
  }

  /** The name of the Job that made the pod, from the Job controller's labels; empty for none. */
  public static String jobName(Pod pod) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    if (labels == null) {
      return "";
    }
    String name = labels.get(Keys.JOB_NAME_LABEL);
    return name != null ? name : labels.getOrDefault(Keys.LEGACY_JOB_NAME_LABEL, "");
  }

  /** Whether the Job (or migration pod) migrates one of these databases. */
  public static boolean sharesOne(List<String> databases, HasMetadata object) {
    return keysOf(object).stream().anyMatch(databases::contains);
  }

  /**
   * The database keys a Job or a migration pod carries: its annotation, else its label; empty for
   * none.
   */
  public static List<String> keysOf(HasMetadata object) {
    ObjectMeta metadata = object.getMetadata();
    Map<String, String> annotations = metadata.getAnnotations();
    String all = annotations == null ? null : annotations.get(Keys.DATABASES_ANNOTATION);
    if (all != null && !all.isBlank()) {
      return List.of(all.split(","));
    }
    Map<String, String> labels = metadata.getLabels();
    String label = labels == null ? null : labels.get(Keys.DATABASE_LABEL);
    return label == null ? List.of() : List.of(label);
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
