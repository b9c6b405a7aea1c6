package dev.openfga.operator.migration;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.Observation;
import dev.openfga.operator.migration.rules.Plan;
import dev.openfga.operator.migration.rules.Step;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What {@link StepRunner#run} would write, one phrase per write, without writing anything: what a
 * dry run logs (ADR 0015).
 */
final class StepPhrases {
  private StepPhrases() {}

  static List<String> of(Plan plan, Observation o) {
    List<String> would = new ArrayList<>();
    for (Step step : plan.steps()) {
      phrase(step, o).ifPresent(would::add);
    }
    return would;
  }

  private static Optional<String> phrase(Step step, Observation o) {
    String name = o.deployment().getMetadata().getName();
    String job = Names.job(name);
    String record = Names.statusConfigMap(name);
    if (step instanceof Step.SetConditions s) {
      return Optional.of("set condition " + s.summary());
    } else if (step instanceof Step.WriteStatus s) {
      return Optional.of(
          "record version " + s.data().get(Keys.DATA_VERSION) + " in ConfigMap " + record);
    } else if (step instanceof Step.MarkFirstInstall) {
      return Optional.of(
          "record "
              + Keys.DATA_RESTORE_REPLICAS
              + "=true (a first install, no version) in ConfigMap "
              + record);
    } else if (step instanceof Step.RepairStatusOwner) {
      return Optional.of("point the owner of ConfigMap " + record + " at this Deployment");
    } else if (step instanceof Step.CreateJob s) {
      return Optional.of(
          "create Job "
              + s.job().getMetadata().getName()
              + " for version "
              + s.version()
              + " (image "
              + s.job().getSpec().getTemplate().getSpec().getContainers().get(0).getImage()
              + ")");
    } else if (step instanceof Step.DeleteJob s) {
      return Optional.of("delete Job " + job + " (" + s.why() + ")");
    } else if (step instanceof Step.PatchJob s) {
      return Optional.of(
          "set ttlSecondsAfterFinished="
              + s.ttlSecondsAfterFinished()
              + (s.annotations().isEmpty() ? "" : " and annotations " + s.annotations().keySet())
              + " on Job "
              + job);
    }
    return deploymentPhrase(step, o.deployment().getMetadata().getAnnotations(), record);
  }

  /** The phrases of the steps that write the Deployment, the record's mark or an Event. */
  private static Optional<String> deploymentPhrase(
      Step step, Map<String, String> annotations, String record) {
    if (step instanceof Step.SetRetryAfter s) {
      return Optional.of("annotate " + Keys.RETRY_AFTER + "=" + Timestamps.format(s.at()));
    } else if (step instanceof Step.ClearRetryAfter) {
      return annotations != null && annotations.containsKey(Keys.RETRY_AFTER)
          ? Optional.of("remove annotation " + Keys.RETRY_AFTER)
          : Optional.empty();
    } else if (step instanceof Step.Scale s) {
      return Optional.of("scale 0 -> " + s.replicas());
    } else if (step instanceof Step.ClearRestoreReplicas) {
      return Optional.of("remove " + Keys.DATA_RESTORE_REPLICAS + " from ConfigMap " + record);
    } else if (step instanceof Step.MarkReported s) {
      return Optional.of(
          s.ids().isEmpty()
              ? "remove annotation " + Keys.REPORTED_EVENTS
              : "annotate " + Keys.REPORTED_EVENTS + "=" + String.join(",", s.ids()));
    } else if (step instanceof Step.Emit s) {
      return Optional.of("emit " + s.reason().type() + " Event " + s.reason() + ": " + s.message());
    }
    return Optional.empty();
  }
}
