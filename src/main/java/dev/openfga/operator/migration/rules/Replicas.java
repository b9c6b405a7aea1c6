package dev.openfga.operator.migration.rules;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;

/**
 * Rule 11: a first install scales from 0 to {@code openfga.dev/desired-replicas}; a non-zero count
 * is never changed, and a later scale to 0 (maintenance, an autoscaler) is a person's decision.
 */
final class Replicas {
  private Replicas() {}

  /** The scale that restores the replicas, if they are to be restored. */
  static List<Step> restored(Deployment d, DeploymentSettings s) {
    return needsRestore(d, s) ? List.of(new Step.Scale(s.desiredReplicas().get())) : List.of();
  }

  /** At 0, with a positive {@code desired-replicas}. */
  static boolean needsRestore(Deployment d, DeploymentSettings s) {
    Integer replicas = d.getSpec() == null ? null : d.getSpec().getReplicas();
    return s.desiredReplicas().isPresent()
        && s.desiredReplicas().get() > 0
        && replicas != null
        && replicas == 0;
  }

  /** Never changed since it was created ({@code metadata.generation} 1). */
  static boolean unchanged(Deployment d) {
    Long generation = d.getMetadata().getGeneration();
    return generation == null || generation <= 1;
  }

  /**
   * Whether the Deployment controller has seen the Deployment's latest spec ({@code
   * status.observedGeneration}): only then does its revision annotation count every pod template.
   */
  static boolean observedByItsController(Deployment d) {
    Long generation = d.getMetadata().getGeneration();
    Long observed = d.getStatus() == null ? null : d.getStatus().getObservedGeneration();
    return generation != null && observed != null && observed >= generation;
  }

  /**
   * Whether every change of the Deployment's spec since its creation made a new pod template: the
   * Deployment controller's revision ({@code deployment.kubernetes.io/revision}, one more for each
   * new template) equals the generation (one more for each change of the spec). A scale, to and
   * fro, or any other change of the spec moves only the generation; two template changes the
   * controller saw as one, or a paused rollout, leave the revision behind too (the safe side: no
   * scale).
   */
  static boolean onlyNewPodTemplates(Deployment d) {
    var annotations = d.getMetadata().getAnnotations();
    String revision = annotations == null ? null : annotations.get(Keys.DEPLOYMENT_REVISION);
    Long generation = d.getMetadata().getGeneration();
    if (revision == null || generation == null) {
      return false;
    }
    try {
      return Long.parseLong(revision.trim()) == generation;
    } catch (NumberFormatException e) {
      return false;
    }
  }
}
