package dev.openfga.operator.realcluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.openfga.operator.status.StatusCommand;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a person would look at for one OpenFGA Deployment, read fresh from the API server: the
 * Deployment and its conditions, the operator's status ConfigMap and Job, the Events.
 */
record OpenFgaView(KubernetesClient client, String namespace, String name) {

  Deployment deployment() {
    return client.apps().deployments().inNamespace(namespace).withName(name).get();
  }

  Optional<DeploymentCondition> condition(String type) {
    return condition(deployment(), type);
  }

  /**
   * The condition of a Deployment already read (or null: gone), so that one read serves several
   * checks of the same state.
   */
  static Optional<DeploymentCondition> condition(Deployment d, String type) {
    if (d == null || d.getStatus() == null || d.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return d.getStatus().getConditions().stream().filter(c -> c.getType().equals(type)).findFirst();
  }

  /** {@code data.version} of {@code <name>-migration-status}, or null. */
  String recordedVersion() {
    ConfigMap record = statusConfigMap();
    return record == null || record.getData() == null ? null : record.getData().get("version");
  }

  ConfigMap statusConfigMap() {
    return client
        .configMaps()
        .inNamespace(namespace)
        .withName(dev.openfga.operator.kube.Names.statusConfigMap(name))
        .get();
  }

  Job job() {
    return client.batch().v1().jobs().inNamespace(namespace).withName(jobName()).get();
  }

  /**
   * The Job, read right after the record showed {@code version}; null before that (or when the Job
   * is gone). For a look at the Job that ran the recorded migration: a short {@code
   * ttlSecondsAfterFinished}, armed once the run is recorded, may delete it soon after.
   */
  Job jobOnceRecorded(String version) {
    return version.equals(recordedVersion()) ? job() : null;
  }

  /** The operator's Job for the version has a Ready pod: its {@code openfga migrate} runs. */
  boolean migrating(String version) {
    return migrating(job(), version);
  }

  /** {@link #migrating(String)} of a Job already read (or null: gone). */
  static boolean migrating(Job job, String version) {
    return job != null
        && job.getMetadata().getAnnotations() != null
        && version.equals(job.getMetadata().getAnnotations().get("openfga.dev/desired-version"))
        && job.getStatus() != null
        && Integer.valueOf(1).equals(job.getStatus().getReady());
  }

  /**
   * Its row of {@code openfga-operator status -n <namespace> -o json}, the command a person runs,
   * against the real API server.
   */
  JsonNode status() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        new StatusCommand(client, Clock.systemUTC())
            .run(
                List.of("-n", namespace, "-o", "json"),
                new PrintWriter(out, true),
                new PrintWriter(err, true));
    if (exit != 0) {
      throw new AssertionError("status exited with " + exit + ": " + err);
    }
    try {
      for (JsonNode row : new ObjectMapper().readTree(out.toString())) {
        if (row.path("deployment").asText().equals(name)) {
          return row;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    throw new AssertionError("no status row for " + name + " in " + out);
  }

  /** The Job's name, shortened for long Deployment names as the operator does. */
  String jobName() {
    return dev.openfga.operator.kube.Names.job(name);
  }

  Integer replicas() {
    Deployment d = deployment();
    return d == null ? null : d.getSpec().getReplicas();
  }

  /** An annotation of the Deployment, or null (also when the Deployment is gone). */
  String annotation(String key) {
    return annotation(deployment(), key);
  }

  /** An annotation of a Deployment already read, or null. */
  static String annotation(Deployment d, String key) {
    Map<String, String> annotations = d == null ? null : d.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }

  /** The Events on the Deployment with this reason, oldest first. */
  List<Event> events(String reason) {
    return client.v1().events().inNamespace(namespace).list().getItems().stream()
        .filter(e -> name.equals(e.getInvolvedObject().getName()))
        .filter(e -> "Deployment".equals(e.getInvolvedObject().getKind()))
        .filter(e -> reason.equals(e.getReason()))
        .sorted(Comparator.comparing(e -> e.getMetadata().getCreationTimestamp()))
        .toList();
  }

  /**
   * Changes the image of the OpenFGA container to {@code openfga/openfga:<version>} (a JSON patch:
   * the Deployment controller writes the status at the same time).
   */
  void setVersion(String version) {
    client
        .apps()
        .deployments()
        .inNamespace(namespace)
        .withName(name)
        .patch(
            PatchContext.of(PatchType.JSON),
            "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/image\","
                + "\"value\":\"openfga/openfga:"
                + version
                + "\"}]");
  }

  /** Sets an annotation of the Deployment (a JSON merge patch: no resourceVersion, no conflict). */
  void annotate(String key, String value) {
    client
        .apps()
        .deployments()
        .inNamespace(namespace)
        .withName(name)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            io.fabric8.kubernetes.client.utils.Serialization.asJson(
                Map.of("metadata", Map.of("annotations", Map.of(key, value)))));
  }
}
