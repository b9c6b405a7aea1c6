package dev.openfga.operator.migration.rules;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Plan.Next;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.SetConditions;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What the tests of the planner's rules share: small builders and readers of plans. With them, the
 * decision is tested rule by rule (SPEC section 4), with a counterpart for every upstream [B]
 * controller test the planner decides and for the review-found bugs of upstream-design.md section
 * 5: see docs/upstream-test-map.md.
 */
final class PlannerFixtures {
  private PlannerFixtures() {}

  static Planner plannerWithTtl(int ttlSecondsAfterFinished) {
    return new Planner(new Policy(3, 300, ttlSecondsAfterFinished, Duration.ofSeconds(60)));
  }

  static List<Class<?>> kinds(Plan plan) {
    return plan.steps().stream().<Class<?>>map(Object::getClass).toList();
  }

  static <T extends Step> T only(Plan plan, Class<T> type) {
    List<T> found = plan.steps().stream().filter(type::isInstance).map(type::cast).toList();
    assertThat(found).as("steps of type %s in %s", type.getSimpleName(), plan).hasSize(1);
    return found.get(0);
  }

  /** The Job as the Job controller marks it Failed at {@code at} (its pod has stopped). */
  static Job failedNow(Job job, Instant at) {
    return new JobBuilder(job)
        .editStatus()
        .addNewCondition()
        .withType("Failed")
        .withStatus("True")
        .withLastTransitionTime(Timestamps.format(at))
        .endCondition()
        .endStatus()
        .build();
  }

  static Emit event(Plan plan) {
    return only(plan, Emit.class);
  }

  static Next after(long seconds) {
    return new Next.After(Duration.ofSeconds(seconds));
  }

  static Next done() {
    return new Next.Done();
  }

  static DeploymentCondition migrationFailed(SetConditions step) {
    return step.conditions().stream()
        .filter(c -> c.getType().equals(Keys.CONDITION_TYPE))
        .findFirst()
        .orElseThrow();
  }

  static Map<String, String> retention(Instant retryAfter, Instant retainUntil) {
    return Map.of(
        Keys.RETRY_AFTER, Timestamps.format(retryAfter),
        Keys.RETAIN_UNTIL, Timestamps.format(retainUntil));
  }

  static ConfigMap record(Deployment d, String version) {
    return Fixtures.statusConfigMap(d, version).build();
  }

  /** A record written by a first install whose replicas are still to be restored. */
  static ConfigMap firstInstallRecord(Deployment d, String version) {
    return Fixtures.statusConfigMap(d, version)
        .addToData(Keys.DATA_RESTORE_REPLICAS, "true")
        .build();
  }
}
