package dev.openfga.operator.migration;

import dev.openfga.operator.kube.JsonPatch;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.Reported;
import dev.openfga.operator.migration.rules.Step;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

/**
 * The steps that write the Deployment: its {@code MigrationFailed} condition, its retry-after and
 * list of Events sent, its replicas. Each is a JSON Patch guarded by the resourceVersion of the
 * Deployment it is given (the observed one, or the answer to the plan's last write to it), aimed at
 * that object so that fabric8 reads nothing first.
 */
final class DeploymentWrites {
  private static final PatchContext JSON_PATCH = PatchContext.of(PatchType.JSON);

  private final KubernetesClient client;

  DeploymentWrites(KubernetesClient client) {
    this.client = client;
  }

  /** The Deployment after the step's write; what was done is added to {@code done}. */
  Deployment write(Deployment d, Step step, List<String> done) {
    JsonPatch patch = JsonPatch.guardedBy(d);
    if (step instanceof Step.SetConditions s) {
      if (d.getStatus() == null) {
        patch.add("/status", Map.of("conditions", s.conditions()));
      } else {
        patch.add("/status/conditions", s.conditions());
      }
      Deployment written = client.resource(d).subresource("status").patch(JSON_PATCH, patch.json());
      done.add("condition " + s.summary());
      return written;
    } else if (step instanceof Step.SetRetryAfter s) {
      String at = Timestamps.format(s.at());
      patch.put("/metadata/annotations", d.getMetadata().getAnnotations(), Keys.RETRY_AFTER, at);
      Deployment written = client.resource(d).patch(JSON_PATCH, patch.json());
      done.add("no new Job before " + at);
      return written;
    } else if (step instanceof Step.ClearRetryAfter) {
      var annotations = d.getMetadata().getAnnotations();
      if (annotations == null || !annotations.containsKey(Keys.RETRY_AFTER)) {
        return d;
      }
      patch.remove("/metadata/annotations/" + JsonPatch.escape(Keys.RETRY_AFTER));
      Deployment written = client.resource(d).patch(JSON_PATCH, patch.json());
      done.add("cleared " + Keys.RETRY_AFTER);
      return written;
    } else if (step instanceof Step.Scale s) {
      patch.add("/spec/replicas", s.replicas());
      Deployment written = client.resource(d).patch(JSON_PATCH, patch.json());
      done.add("scaled 0 -> " + s.replicas());
      return written;
    }
    throw new IllegalArgumentException("not a write of the Deployment: " + step);
  }

  /**
   * Lists the Events about the Deployment's lasting state that were sent ({@link
   * Keys#REPORTED_EVENTS}): a guarded patch of that one annotation, only when the list changes
   * (none left: the annotation is removed). Through the status subresource, as the Deployment
   * controller writes its revision annotation: the API server counts every other change of a
   * Deployment's annotations in its {@code metadata.generation} (they are copied to its
   * ReplicaSets), which would make it look unobserved (progressing, to Argo CD and Flux) and spoil
   * the generation the first-install rule of memory and sqlite reads.
   */
  Deployment markReported(Deployment deployment, List<String> ids, List<String> done) {
    if (new HashSet<>(ids).equals(Reported.recorded(deployment))) {
      return deployment;
    }
    var annotations = deployment.getMetadata().getAnnotations();
    JsonPatch patch = JsonPatch.guardedBy(deployment);
    if (ids.isEmpty()) {
      patch.remove("/metadata/annotations/" + JsonPatch.escape(Keys.REPORTED_EVENTS));
      done.add("cleared " + Keys.REPORTED_EVENTS);
    } else {
      patch.put("/metadata/annotations", annotations, Keys.REPORTED_EVENTS, String.join(",", ids));
      done.add("listed " + ids.size() + " Event(s) in " + Keys.REPORTED_EVENTS);
    }
    return client.resource(deployment).subresource("status").patch(JSON_PATCH, patch.json());
  }
}
