package dev.openfga.operator.testing;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.Observation;
import dev.openfga.operator.migration.rules.Plan;
import dev.openfga.operator.migration.rules.StatusRecord;
import dev.openfga.operator.migration.rules.Step;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Applies a plan's steps to an observation the way a flawless executor would (every write succeeds,
 * no other actor), so a test can follow the planner over several passes. Events are not recorded.
 * Not a model of the real executor: conflicts, errors and caching are the controller's tests'
 * business.
 */
public final class PlanReplay {
  private PlanReplay() {}

  /** The observation after the plan's writes, seen at {@code later}. */
  public static Observation apply(Observation o, Plan plan, Instant later) {
    Deployment deployment = o.deployment();
    Optional<ConfigMap> configMap = o.statusConfigMap();
    Optional<Job> job = o.job();
    for (Step step : plan.steps()) {
      if (step instanceof Step.SetConditions s) {
        deployment =
            new DeploymentBuilder(deployment)
                .editOrNewStatus()
                .withConditions(s.conditions())
                .endStatus()
                .build();
      } else if (step instanceof Step.SetRetryAfter s) {
        deployment = annotate(deployment, Keys.RETRY_AFTER, Timestamps.format(s.at()));
      } else if (step instanceof Step.ClearRetryAfter) {
        deployment = annotate(deployment, Keys.RETRY_AFTER, null);
      } else if (step instanceof Step.MarkReported s) {
        deployment =
            annotate(
                deployment,
                Keys.REPORTED_EVENTS,
                s.ids().isEmpty() ? null : String.join(",", s.ids()));
      } else if (step instanceof Step.Scale s) {
        deployment =
            new DeploymentBuilder(deployment)
                .editSpec()
                .withReplicas(s.replicas())
                .endSpec()
                .build();
      } else if (step instanceof Step.WriteStatus s) {
        configMap =
            Optional.of(
                configMap
                    .map(
                        cm ->
                            new ConfigMapBuilder(cm)
                                .withData(new LinkedHashMap<>(s.data()))
                                .build())
                    .orElseGet(() -> StatusRecord.build(o.deployment(), s.data())));
      } else if (step instanceof Step.MarkFirstInstall) {
        configMap =
            Optional.of(
                StatusRecord.build(
                    o.deployment(),
                    new LinkedHashMap<>(Map.of(Keys.DATA_RESTORE_REPLICAS, "true"))));
      } else if (step instanceof Step.ClearRestoreReplicas) {
        configMap =
            configMap.map(
                cm -> {
                  var data = new LinkedHashMap<>(cm.getData());
                  data.remove(Keys.DATA_RESTORE_REPLICAS);
                  return new ConfigMapBuilder(cm).withData(data).build();
                });
      } else if (step instanceof Step.RepairStatusOwner) {
        Deployment owner = deployment;
        configMap =
            configMap.map(
                cm ->
                    new ConfigMapBuilder(cm)
                        .editMetadata()
                        .withOwnerReferences(
                            dev.openfga.operator.migration.rules.MigrationJob.ownerReference(owner))
                        .endMetadata()
                        .build());
      } else if (step instanceof Step.CreateJob s) {
        job =
            Optional.of(
                new JobBuilder(s.job())
                    .editMetadata()
                    .withUid("job-uid-" + Timestamps.format(later))
                    .withResourceVersion("1")
                    .endMetadata()
                    .build());
      } else if (step instanceof Step.DeleteJob) {
        job = Optional.empty();
      } else if (step instanceof Step.PatchJob s) {
        job = job.map(j -> patch(j, s));
      }
    }
    return new Observation(deployment, configMap, job, later);
  }

  private static Job patch(Job job, Step.PatchJob patch) {
    Map<String, String> annotations =
        new LinkedHashMap<>(
            job.getMetadata().getAnnotations() == null
                ? Map.of()
                : job.getMetadata().getAnnotations());
    patch
        .annotations()
        .forEach(
            (k, v) -> {
              if (v == null) {
                annotations.remove(k);
              } else {
                annotations.put(k, v);
              }
            });
    return new JobBuilder(job)
        .editMetadata()
        .withAnnotations(annotations)
        .endMetadata()
        .editSpec()
        .withTtlSecondsAfterFinished(patch.ttlSecondsAfterFinished())
        .endSpec()
        .build();
  }

  private static Deployment annotate(Deployment deployment, String key, String value) {
    Map<String, String> annotations =
        new LinkedHashMap<>(
            deployment.getMetadata().getAnnotations() == null
                ? Map.of()
                : deployment.getMetadata().getAnnotations());
    if (value == null) {
      annotations.remove(key);
    } else {
      annotations.put(key, value);
    }
    return new DeploymentBuilder(deployment)
        .editMetadata()
        .withAnnotations(annotations)
        .endMetadata()
        .build();
  }
}
