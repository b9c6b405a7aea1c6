package dev.openfga.operator.controller;

import dev.openfga.operator.model.Keys;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Reads what a failed migration Job's pod left behind — its exit code and reason and the last lines
 * of its log — once, while the pod still exists, so that the evidence outlives the Job. The
 * operator reads Pods only here, directly from the API (they are never cached).
 */
final class FailureEvidence {
  /** The most of the log kept. */
  static final int MAX_BYTES = 2048;

  private final KubernetesClient client;
  private final int lines;

  FailureEvidence(KubernetesClient client, int lines) {
    this.client = client;
    this.lines = lines;
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
      pods = podsOf(ns, "batch.kubernetes.io/controller-uid", uid);
      if (pods.isEmpty()) {
        pods = podsOf(ns, "controller-uid", uid);
      }
    } catch (KubernetesClientException e) {
      return "Its pods could not be read (" + e.getCode() + ").";
    }
    Optional<Pod> newest =
        pods.stream()
            .max(Comparator.comparing(p -> String.valueOf(p.getMetadata().getCreationTimestamp())));
    if (newest.isEmpty()) {
      return "No pod of Job " + job.getMetadata().getName() + " was left to read.";
    }
    Pod pod = newest.get();
    StringBuilder text = new StringBuilder("Pod ").append(pod.getMetadata().getName());
    ending(pod).ifPresent(e -> text.append(": ").append(e));
    text.append('.');
    String log;
    try {
      log =
          client
              .pods()
              .inNamespace(ns)
              .withName(pod.getMetadata().getName())
              .inContainer(Keys.MIGRATION_CONTAINER)
              .limitBytes(MAX_BYTES)
              .tailingLines(lines)
              .getLog();
    } catch (KubernetesClientException e) {
      log = null;
    }
    if (log != null && !log.isBlank()) {
      String tail = log.strip();
      if (tail.length() > MAX_BYTES) {
        tail = tail.substring(tail.length() - MAX_BYTES);
      }
      text.append(" Last log lines:\n").append(tail);
    }
    return text.toString();
  }

  private List<Pod> podsOf(String ns, String label, String uid) {
    return client.pods().inNamespace(ns).withLabel(label, uid).list().getItems();
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
