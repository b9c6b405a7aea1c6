package dev.openfga.operator.controller;

import dev.openfga.operator.model.EventReason;
import dev.openfga.operator.model.Keys;
import dev.openfga.operator.model.Observation;
import dev.openfga.operator.model.Planner;
import dev.openfga.operator.model.StatusRecord;
import dev.openfga.operator.model.Step;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the code of a migration's first writes once, right after start-up, on a made-up Deployment
 * and in a thread of its own, without any request: the planner's create path, the Job builder, and
 * the JSON (de)serializers of a Job, an Event and a record, which Jackson builds on first use. A
 * real cluster sees an upgrade a week; without this, its first reaction pays for all of that
 * (docs/performance.md, "The first reaction").
 */
final class WarmUp {
  private static final Logger LOG = LoggerFactory.getLogger(WarmUp.class);

  private WarmUp() {}

  static void start(Planner planner, KubernetesSerialization json) {
    Thread thread = new Thread(() -> run(planner, json), "warm-up");
    thread.setDaemon(true);
    thread.setPriority(Thread.MIN_PRIORITY);
    thread.start();
  }

  /** Returns whether every part ran (false: the sample no longer makes a Job, or one failed). */
  static boolean run(Planner planner, KubernetesSerialization json) {
    try {
      Deployment d = sample();
      Instant now = Instant.now();
      Job job =
          planner.plan(new Observation(d, Optional.empty(), Optional.empty(), now)).steps().stream()
              .filter(s -> s instanceof Step.CreateJob)
              .map(s -> ((Step.CreateJob) s).job())
              .findFirst()
              .orElseThrow();
      json.unmarshal(json.asJson(job), Job.class);
      Event event =
          EventRecorder.event(
              d, EventReason.MigrationStarted, "warm-up", "warm-up", now, "warm-up");
      json.unmarshal(json.asJson(event), Event.class);
      ConfigMap record = StatusRecord.build(d, StatusRecord.data("v1.0.0", now, "warm-up"));
      json.unmarshal(json.asJson(record), ConfigMap.class);
      LOG.debug("warmed up");
      return true;
    } catch (RuntimeException e) {
      // only ever a loss of speed
      LOG.debug("warm-up failed: {}", e.toString());
      return false;
    }
  }

  /** An opted-in OpenFGA Deployment of the upstream chart's shape, on PostgreSQL. */
  private static Deployment sample() {
    return new DeploymentBuilder()
        .withNewMetadata()
        .withName("warm-up")
        .withNamespace("warm-up")
        .withUid("00000000-0000-0000-0000-000000000000")
        .withResourceVersion("1")
        .addToLabels(Keys.PART_OF, Keys.PART_OF_OPENFGA)
        .addToLabels(Keys.COMPONENT, Keys.COMPONENT_SERVER)
        .addToAnnotations(Keys.MIGRATION_ENABLED, "true")
        .addToAnnotations(Keys.DESIRED_REPLICAS, "1")
        .endMetadata()
        .withNewSpec()
        .withReplicas(0)
        .withNewTemplate()
        .withNewSpec()
        .addNewContainer()
        .withName("openfga")
        .withImage("openfga/openfga:v1.0.0")
        .addNewEnv()
        .withName(Keys.ENGINE_ENV)
        .withValue("postgres")
        .endEnv()
        .addNewEnv()
        .withName(Keys.URI_ENV)
        .withNewValueFrom()
        .withNewSecretKeyRef("uri", "warm-up", false)
        .endValueFrom()
        .endEnv()
        .endContainer()
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }
}
