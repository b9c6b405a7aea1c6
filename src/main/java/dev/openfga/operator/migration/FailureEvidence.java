package dev.openfga.operator.migration;

import dev.openfga.operator.kube.OperatorClient;
import dev.openfga.operator.migration.rules.FailureLog;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.MigrationJob;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Reads what a failed migration Job's pod left behind — its exit code and reason and the {@code
 * Error:} lines of {@code openfga migrate} ({@link FailureLog}) — once, while the pod still exists,
 * so that the evidence outlives the Job, and masks credentials before anything is copied. The
 * failed pod is listed here directly, by its Job's UID (the migration-pod informer of {@link
 * MigrationReconciler} serves the one-migration-per-database rule).
 *
 * <p>The reads are bounded: a client of their own that never retries and gives up after {@link
 * #TIMEOUT} (a failing {@code pods/log}, e.g. a node whose kubelet is unreachable, would otherwise
 * be retried about 11 times, for minutes, while the failure waits to be recorded).
 */
public final class FailureEvidence {
  /** The most of the log kept. */
  static final int MAX_BYTES = 2048;

  /** The most of the log read: the Error: line is followed by about 20 lines of usage text. */
  static final int READ_LINES = 200;

  static final int READ_BYTES = 32 * 1024;

  /** How long one read of the pod list or the log may take. */
  static final java.time.Duration TIMEOUT = java.time.Duration.ofSeconds(5);

  private final KubernetesClient operatorClient;
  private final int lines;

  /** The bounded client, made at the first read (most processes never read a failed pod). */
  private KubernetesClient bounded;

  private boolean closed;

  /**
   * @param client the operator's client; the reads use a copy of its configuration without retries
   *     and with a short timeout, made when first needed
   */
  public FailureEvidence(KubernetesClient client, int lines) {
    this.operatorClient = client;
    this.lines = lines;
  }

  private synchronized KubernetesClient client() {
    if (closed) {
      throw new IllegalStateException("closed");
    }
    if (bounded == null) {
      bounded =
          OperatorClient.create(
              new io.fabric8.kubernetes.client.ConfigBuilder(operatorClient.getConfiguration())
                  .withRequestRetryBackoffLimit(0)
                  .withRequestTimeout((int) TIMEOUT.toMillis())
                  .withConnectionTimeout((int) TIMEOUT.toMillis())
                  .build(),
              true);
    }
    return bounded;
  }

  /** Closes the bounded client, if one was made. */
  public synchronized void close() {
    closed = true;
    if (bounded != null) {
      bounded.close();
    }
  }

  boolean enabled() {
    return lines > 0;
  }

  /** One short text: which pod, how it ended, and its last log lines. */
  String read(Job job) {
    String ns = job.getMetadata().getNamespace();
    String uid = job.getMetadata().getUid();
    List<Pod> pods;
    try {
      pods = podsOf(ns, Keys.JOB_UID_LABEL, uid);
      if (pods.isEmpty()) {
        pods = podsOf(ns, Keys.LEGACY_JOB_UID_LABEL, uid);
      }
    } catch (KubernetesClientException e) {
      return "Its pods could not be read (" + e.getCode() + ").";
    }
    Optional<Pod> newest =
        pods.stream()
            .max(Comparator.comparing(p -> String.valueOf(p.getMetadata().getCreationTimestamp())));
    if (newest.isEmpty()) {
      return podCreateFailure(job)
          .map(m -> "No pod of Job " + job.getMetadata().getName() + " was created: " + m)
          .orElse("No pod of Job " + job.getMetadata().getName() + " was left to read.");
    }
    Pod pod = newest.get();
    StringBuilder text = new StringBuilder("Pod ").append(pod.getMetadata().getName());
    ending(pod).ifPresent(e -> text.append(": ").append(e));
    text.append('.');
    String log;
    try {
      log =
          client()
              .pods()
              .inNamespace(ns)
              .withName(pod.getMetadata().getName())
              .inContainer(Keys.MIGRATION_CONTAINER)
              .limitBytes(READ_BYTES)
              .tailingLines(Math.max(lines, READ_LINES))
              .getLog();
    } catch (KubernetesClientException e) {
      log = null;
      text.append(" Its log could not be read (")
          .append(e.getCode() > 0 ? "HTTP " + e.getCode() : "no answer")
          .append(").");
    }
    List<String> secrets = secrets(pod.getSpec().getContainers());
    if (log != null) {
      log = wholeLines(log);
    }
    if (log != null && !log.isBlank()) {
      // masked before it is cut: a URI cut short loses the '@' its mask looks for
      String excerpt = FailureLog.redact(FailureLog.excerpt(log, lines), secrets);
      if (excerpt.length() > MAX_BYTES) {
        // the excerpt starts at the Error: line or just before it: keep its head
        excerpt = excerpt.substring(0, MAX_BYTES);
      }
      text.append(" Log:\n").append(excerpt);
    }
    return FailureLog.redact(text.toString(), secrets);
  }

  /**
   * {@code log} without the line the kubelet cut at {@link #READ_BYTES}: a URI cut short loses the
   * '@' its mask looks for, and the start of its password would read as a port.
   */
  static String wholeLines(String log) {
    if (log.endsWith("\n") || log.getBytes(StandardCharsets.UTF_8).length < READ_BYTES) {
      return log;
    }
    return log.substring(0, log.lastIndexOf('\n') + 1);
  }

  /** The literal datastore credentials given to these containers (copied from the Deployment). */
  private static List<String> secrets(List<Container> containers) {
    return containers == null
        ? List.of()
        : containers.stream().flatMap(c -> FailureLog.literalSecrets(c).stream()).toList();
  }

  /**
   * {@code message} with the credentials of the Job's pod template masked. The operator reads its
   * Jobs without the template ({@link OperatorClient}), so the Job is read again here, as a generic
   * object; when that fails, the message is not shown.
   */
  private String masked(String message, Job job) {
    try {
      GenericKubernetesResource whole =
          client()
              .genericKubernetesResources("batch/v1", "Job")
              .inNamespace(job.getMetadata().getNamespace())
              .withName(job.getMetadata().getName())
              .get();
      List<?> containers =
          whole == null ? null : whole.get("spec", "template", "spec", "containers");
      if (containers == null) {
        return UNMASKED + " (the Job is gone)";
      }
      return FailureLog.redact(
          message,
          secrets(
              containers.stream()
                  .map(c -> client().getKubernetesSerialization().convertValue(c, Container.class))
                  .toList()));
    } catch (KubernetesClientException e) {
      return UNMASKED + " (HTTP " + e.getCode() + ")";
    }
  }

  static final String UNMASKED =
      "its reason is not shown: the Job could not be read to mask the credentials in it";

  /**
   * Why the Job controller cannot create the Job's pod: its newest {@code FailedCreate} Event on
   * the Job (one list, filtered by the API server; needs events list), with the credentials of the
   * Job's pod template masked ({@link #masked}). Empty when there is none or it cannot be read.
   */
  Optional<String> podCreateFailure(Job job) {
    try {
      List<io.fabric8.kubernetes.api.model.Event> events =
          client()
              .v1()
              .events()
              .inNamespace(job.getMetadata().getNamespace())
              .withField("involvedObject.uid", job.getMetadata().getUid())
              .withField("reason", "FailedCreate")
              .list()
              .getItems();
      return MigrationJob.podCreateFailure(job, events).map(m -> masked(m, job));
    } catch (KubernetesClientException e) {
      return Optional.empty();
    }
  }

  private List<Pod> podsOf(String ns, String label, String uid) {
    return client().pods().inNamespace(ns).withLabel(label, uid).list().getItems();
  }

  /** "exit code 1 (Error)", or why it is waiting ("ImagePullBackOff: ..."). */
  private static Optional<String> ending(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
      return Optional.empty();
    }
    return pod.getStatus().getContainerStatuses().stream()
        .filter(c -> Keys.MIGRATION_CONTAINER.equals(c.getName()))
        .findFirst()
        .flatMap(FailureEvidence::describe);
  }

  private static Optional<String> describe(ContainerStatus status) {
    if (status.getState() == null) {
      return Optional.empty();
    }
    var terminated = status.getState().getTerminated();
    if (terminated != null) {
      return Optional.of(
          "exit code "
              + terminated.getExitCode()
              + (terminated.getReason() == null ? "" : " (" + terminated.getReason() + ")"));
    }
    var waiting = status.getState().getWaiting();
    if (waiting != null) {
      return Optional.of(
          "waiting, "
              + waiting.getReason()
              + (waiting.getMessage() == null ? "" : ": " + waiting.getMessage()));
    }
    return Optional.empty();
  }
}
