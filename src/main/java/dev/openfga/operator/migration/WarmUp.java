package dev.openfga.operator.migration;

import dev.openfga.operator.kube.EventRecorder;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.Observation;
import dev.openfga.operator.migration.rules.Planner;
import dev.openfga.operator.migration.rules.StatusRecord;
import dev.openfga.operator.migration.rules.Step;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes and reads once, right after start and on a thread of its own, the objects of a migration's
 * first writes — a Job built by the planner from a made-up Deployment of the upstream chart's
 * shape, the same Job finished as its watch events show it, an Event and a status record — without
 * any request. Jackson (with Blackbird) generates a type's accessors when its first value is
 * written or read, and the AOT cache holds none of them: without this, the first image change after
 * start pays for the Job's, the Event's and the record's (docs/performance.md, change 19).
 */
public final class WarmUp {
  private static final Logger LOG = LoggerFactory.getLogger(WarmUp.class);

  private WarmUp() {}

  public static void start(Planner planner, KubernetesSerialization json) {
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
      // the Deployment as a watch event carries it: the event that starts a migration
      json.unmarshal(event(json, d), WatchEvent.class);
      Job job = sampleJob(planner, now);
      json.unmarshal(json.asJson(job), Job.class);
      // the Job as its watch events show it once it has run: its status is read at every change
      json.unmarshal(event(json, finished(job, now)), WatchEvent.class);
      Event event =
          EventRecorder.event(
              d, "apps/v1", "Deployment", "warm-up", "warm-up", "Normal", "warm-up", now, "");
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

  /** The Job the planner creates for the {@link #sample()} Deployment's first install. */
  static Job sampleJob(Planner planner, Instant now) {
    return planner
        .plan(new Observation(sample(), Optional.empty(), Optional.empty(), now))
        .steps()
        .stream()
        .filter(s -> s instanceof Step.CreateJob)
        .map(s -> ((Step.CreateJob) s).job())
        .findFirst()
        .orElseThrow();
  }

  /** A watch event's JSON carrying the object as modified. */
  static String event(KubernetesSerialization json, Object object) {
    return "{\"type\":\"MODIFIED\",\"object\":" + json.asJson(object) + "}";
  }

  /** The Job with the status the Job controller gives one that succeeded. */
  static Job finished(Job job, Instant now) {
    String time = now.toString();
    return new JobBuilder(job)
        .withNewStatus()
        .withActive(0)
        .withReady(0)
        .withTerminating(0)
        .withSucceeded(1)
        .withStartTime(time)
        .withCompletionTime(time)
        .withNewUncountedTerminatedPods()
        .endUncountedTerminatedPods()
        .withConditions(succeeded("SuccessCriteriaMet", time), succeeded("Complete", time))
        .endStatus()
        .build();
  }

  private static JobCondition succeeded(String type, String time) {
    return new JobConditionBuilder()
        .withType(type)
        .withStatus("True")
        .withReason("CompletionsReached")
        .withMessage("Reached expected number of succeeded pods")
        .withLastProbeTime(time)
        .withLastTransitionTime(time)
        .build();
  }

  /**
   * An opted-in OpenFGA Deployment of the upstream chart's shape on PostgreSQL, with the pod fields
   * the Job copies (environment, mounts, volumes of the common kinds, resources, security contexts
   * with a seccomp profile, scheduling).
   */
  static Deployment sample() {
    return new DeploymentBuilder()
        .withNewMetadata()
        .withName("warm-up")
        .withNamespace("warm-up")
        .withUid("00000000-0000-0000-0000-000000000000")
        .withResourceVersion("1")
        .addToLabels(Keys.PART_OF, Keys.PART_OF_OPENFGA)
        .addToLabels(Keys.COMPONENT, Keys.COMPONENT_SERVER)
        .addToAnnotations(Keys.MIGRATION_ENABLED, "true")
        .endMetadata()
        .withNewSpec()
        .withReplicas(1)
        .withNewTemplate()
        .withNewMetadata()
        .addToLabels("app.kubernetes.io/name", "openfga")
        .endMetadata()
        .withSpec(samplePod())
        .endTemplate()
        .endSpec()
        .build();
  }

  /** The sample's pod: account, pull secret, security context, scheduling, volumes. */
  private static PodSpec samplePod() {
    return new PodSpecBuilder()
        .withServiceAccountName("openfga")
        .addNewImagePullSecret("registry")
        .withNewSecurityContext()
        .withFsGroup(1000L)
        .withRunAsNonRoot(true)
        .withNewSeccompProfile()
        .withType("RuntimeDefault")
        .endSeccompProfile()
        .endSecurityContext()
        .addToNodeSelector("kubernetes.io/os", "linux")
        .addNewToleration()
        .withKey("dedicated")
        .withOperator("Equal")
        .withValue("openfga")
        .withEffect("NoSchedule")
        .endToleration()
        .withNewAffinity()
        .withNewPodAntiAffinity()
        .addNewPreferredDuringSchedulingIgnoredDuringExecution()
        .withWeight(100)
        .withNewPodAffinityTerm()
        .withTopologyKey("kubernetes.io/hostname")
        .withNewLabelSelector()
        .addToMatchLabels("app.kubernetes.io/name", "openfga")
        .endLabelSelector()
        .endPodAffinityTerm()
        .endPreferredDuringSchedulingIgnoredDuringExecution()
        .endPodAntiAffinity()
        .endAffinity()
        .addNewVolume()
        .withName("tls")
        .withNewSecret()
        .withSecretName("openfga-tls")
        .endSecret()
        .endVolume()
        .addNewVolume()
        .withName("tmp")
        .withNewEmptyDir()
        .withMedium("Memory")
        .withSizeLimit(new Quantity("64Mi"))
        .endEmptyDir()
        .endVolume()
        .addNewVolume()
        .withName("cache")
        .withNewEmptyDir()
        .endEmptyDir()
        .endVolume()
        .addNewVolume()
        .withName("config")
        .withNewConfigMap()
        .withName("openfga-config")
        .endConfigMap()
        .endVolume()
        .withContainers(sampleContainer())
        .build();
  }

  /** The sample's {@code openfga} container. */
  private static Container sampleContainer() {
    return new ContainerBuilder()
        .withName("openfga")
        .withImage("openfga/openfga:v1.0.0")
        .withImagePullPolicy("IfNotPresent")
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
        .addNewVolumeMount()
        .withName("tls")
        .withMountPath("/tls")
        .withReadOnly(true)
        .endVolumeMount()
        .withNewResources()
        .withRequests(Map.of("cpu", new Quantity("100m"), "memory", new Quantity("128Mi")))
        .withLimits(Map.of("memory", new Quantity("256Mi")))
        .endResources()
        .withNewSecurityContext()
        .withAllowPrivilegeEscalation(false)
        .withReadOnlyRootFilesystem(true)
        .withNewCapabilities()
        .addToDrop("ALL")
        .endCapabilities()
        .withNewSeccompProfile()
        .withType("RuntimeDefault")
        .endSeccompProfile()
        .endSecurityContext()
        .build();
  }
}
