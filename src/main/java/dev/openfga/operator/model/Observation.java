package dev.openfga.operator.model;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.Optional;

/**
 * Everything one decision looks at: the Deployment, the object named like its status ConfigMap, the
 * object named like its migration Job, and the time (UTC, whole seconds). Read-only.
 */
public record Observation(
    Deployment deployment, Optional<ConfigMap> statusConfigMap, Optional<Job> job, Instant now) {

  public Observation withStatusConfigMap(ConfigMap configMap) {
    return new Observation(deployment, Optional.of(configMap), job, now);
  }

  public Observation withJob(Job found) {
    return new Observation(deployment, statusConfigMap, Optional.of(found), now);
  }
}
