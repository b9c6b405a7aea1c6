package dev.openfga.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.model.Keys;
import dev.openfga.operator.model.Observation;
import dev.openfga.operator.model.Plan;
import dev.openfga.operator.model.Planner;
import dev.openfga.operator.model.Policy;
import dev.openfga.operator.model.StatusRecord;
import dev.openfga.operator.model.Step;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The Deployment cache drops only what the operator never reads: the decision and the Job built
 * from a trimmed Deployment are the same as from the full one.
 */
class TrimmingDeploymentStoreTest {
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
  private final Planner planner = new Planner(Policy.DEFAULTS);

  /** The upstream chart's Deployment in operator mode, as a real API server stores it. */
  private static Deployment full() {
    Deployment chart = Fixtures.upstreamChart("operator-mode.yaml", Deployment.class);
    Deployment d =
        new DeploymentBuilder(chart)
            .editMetadata()
            .withNamespace("openfga")
            .withUid("uid-1")
            .withResourceVersion("42")
            .addToAnnotations(Keys.MIGRATION_ENABLED, "true")
            .addToAnnotations(Keys.DESIRED_REPLICAS, "3")
            .addToAnnotations(TrimmingDeploymentStore.LAST_APPLIED, "{\"kind\":\"Deployment\"}")
            .addToManagedFields(
                new ManagedFieldsEntryBuilder()
                    .withManager("argocd-controller")
                    .withOperation("Update")
                    .withApiVersion("apps/v1")
                    .withFieldsType("FieldsV1")
                    .withNewFieldsV1()
                    .addToAdditionalProperties("f:spec", java.util.Map.of("f:replicas", "{}"))
                    .endFieldsV1()
                    .build())
            .endMetadata()
            .editSpec()
            .withReplicas(0)
            .editTemplate()
            .editOrNewMetadata()
            .addToAnnotations("checksum/config", "abc")
            .endMetadata()
            .editSpec()
            .addNewInitContainer()
            .withName("wait-for-db")
            .withImage("busybox")
            .endInitContainer()
            .addToContainers(
                new ContainerBuilder()
                    .withName("sidecar")
                    .withImage("envoyproxy/envoy:v1.30.0")
                    .addNewEnv()
                    .withName("X")
                    .withValue("y")
                    .endEnv()
                    .addNewPort()
                    .withContainerPort(9901)
                    .endPort()
                    .build())
            .endSpec()
            .endTemplate()
            .endSpec()
            .editOrNewStatus()
            .addNewCondition()
            .withType(Keys.CONDITION_TYPE)
            .withStatus("True")
            .withReason(Keys.REASON_JOB_FAILED)
            .withMessage(Keys.failedMessage("v1.8.0"))
            .endCondition()
            .endStatus()
            .build();
    Container openfga = container(d, "openfga");
    openfga.setCommand(List.of("openfga"));
    openfga.setStartupProbe(
        new io.fabric8.kubernetes.api.model.ProbeBuilder()
            .withNewHttpGet()
            .withPath("/healthz")
            .withPort(new IntOrString(8080))
            .endHttpGet()
            .build());
    return d;
  }

  private static Deployment copy(Deployment d) {
    return new DeploymentBuilder(d).build();
  }

  private static Container container(Deployment d, String name) {
    return d.getSpec().getTemplate().getSpec().getContainers().stream()
        .filter(c -> name.equals(c.getName()))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void dropsWhatIsNeverRead() {
    Deployment d = TrimmingDeploymentStore.trim(full());

    assertThat(d.getMetadata().getManagedFields()).isNullOrEmpty();
    assertThat(d.getMetadata().getAnnotations())
        .doesNotContainKey(TrimmingDeploymentStore.LAST_APPLIED)
        .containsEntry(Keys.MIGRATION_ENABLED, "true")
        .containsEntry(Keys.DESIRED_REPLICAS, "3");
    assertThat(d.getSpec().getTemplate().getMetadata().getAnnotations()).isNullOrEmpty();
    assertThat(d.getSpec().getTemplate().getSpec().getInitContainers()).isNullOrEmpty();
    Container openfga = container(d, "openfga");
    assertThat(openfga.getPorts()).isNullOrEmpty();
    assertThat(openfga.getReadinessProbe()).isNull();
    assertThat(openfga.getLivenessProbe()).isNull();
    assertThat(openfga.getStartupProbe()).isNull();
    assertThat(openfga.getCommand()).isNullOrEmpty();
    assertThat(container(d, "sidecar"))
        .isEqualTo(new ContainerBuilder().withName("sidecar").build());
  }

  @Test
  void keepsWhatThePlannerAndTheJobBuilderRead() {
    Deployment original = full();
    Deployment d = TrimmingDeploymentStore.trim(copy(original));

    assertThat(d.getMetadata().getLabels()).isEqualTo(original.getMetadata().getLabels());
    assertThat(d.getMetadata().getUid()).isEqualTo("uid-1");
    assertThat(d.getMetadata().getResourceVersion()).isEqualTo("42");
    assertThat(d.getMetadata().getName()).isEqualTo(original.getMetadata().getName());
    assertThat(d.getMetadata().getNamespace()).isEqualTo(original.getMetadata().getNamespace());
    assertThat(d.getSpec().getReplicas()).isZero();
    assertThat(d.getStatus()).isEqualTo(original.getStatus());
    var pod = d.getSpec().getTemplate().getSpec();
    var originalPod = original.getSpec().getTemplate().getSpec();
    assertThat(pod.getVolumes()).isEqualTo(originalPod.getVolumes());
    assertThat(pod.getSecurityContext()).isEqualTo(originalPod.getSecurityContext());
    assertThat(pod.getServiceAccountName()).isEqualTo(originalPod.getServiceAccountName());
    assertThat(pod.getImagePullSecrets()).isEqualTo(originalPod.getImagePullSecrets());
    assertThat(pod.getNodeSelector()).isEqualTo(originalPod.getNodeSelector());
    assertThat(pod.getTolerations()).isEqualTo(originalPod.getTolerations());
    assertThat(pod.getAffinity()).isEqualTo(originalPod.getAffinity());
    Container kept = container(d, "openfga");
    Container was = container(original, "openfga");
    assertThat(kept.getName()).isEqualTo(was.getName());
    assertThat(kept.getImage()).isEqualTo(was.getImage());
    assertThat(kept.getImagePullPolicy()).isEqualTo(was.getImagePullPolicy());
    assertThat(kept.getEnv()).isEqualTo(was.getEnv()).isNotEmpty();
    assertThat(kept.getVolumeMounts()).isEqualTo(was.getVolumeMounts());
    assertThat(kept.getResources()).isEqualTo(was.getResources());
    assertThat(kept.getSecurityContext()).isEqualTo(was.getSecurityContext());
  }

  @Test
  void theDecisionAndTheJobAreTheSameAsFromTheFullDeployment() {
    Deployment original = full();
    Deployment trimmed = TrimmingDeploymentStore.trim(copy(original));
    ConfigMap record =
        StatusRecord.build(original, StatusRecord.data("v0.9.0", NOW.minusSeconds(60), "x"));
    Observation fromFull = new Observation(original, Optional.of(record), Optional.empty(), NOW);
    Observation fromTrimmed = new Observation(trimmed, Optional.of(record), Optional.empty(), NOW);

    Plan expected = planner.plan(fromFull);
    Plan actual = planner.plan(fromTrimmed);

    assertThat(actual).isEqualTo(expected);
    Job job =
        actual.steps().stream()
            .filter(s -> s instanceof Step.CreateJob)
            .map(s -> ((Step.CreateJob) s).job())
            .findFirst()
            .orElseThrow();
    assertThat(job.getSpec().getTemplate().getSpec().getContainers()).hasSize(1);
    assertThat(Planner.desiredVersion(trimmed)).isEqualTo(Planner.desiredVersion(original));
  }

  @Test
  void anotherSelectedContainerKeepsItsSettingsAndTheDefaultOneKeepsOnlyItsName() {
    Deployment original = full();
    original.getMetadata().getAnnotations().put(Keys.CONTAINER_NAME, "sidecar");
    Deployment d = TrimmingDeploymentStore.trim(copy(original));

    assertThat(container(d, "sidecar").getEnv()).isEqualTo(container(original, "sidecar").getEnv());
    assertThat(container(d, "sidecar").getImage()).isEqualTo("envoyproxy/envoy:v1.30.0");
    assertThat(container(d, "openfga"))
        .isEqualTo(new ContainerBuilder().withName("openfga").build());
    assertThat(planner.plan(new Observation(d, Optional.empty(), Optional.empty(), NOW)).steps())
        .isEqualTo(
            planner
                .plan(new Observation(original, Optional.empty(), Optional.empty(), NOW))
                .steps());
  }

  @Test
  void anUnusableContainerAnnotationLeavesTheContainersAlone() {
    Deployment original = full();
    original.getMetadata().getAnnotations().put(Keys.CONTAINER_NAME, "Not A Name!");
    Deployment d = TrimmingDeploymentStore.trim(copy(original));

    assertThat(d.getSpec().getTemplate().getSpec().getContainers())
        .isEqualTo(original.getSpec().getTemplate().getSpec().getContainers());
  }

  @Test
  void anAnnotationMapThatHeldOnlyTheLastAppliedCopyStaysAMap() {
    Deployment d =
        new DeploymentBuilder()
            .withNewMetadata()
            .withName("x")
            .withNamespace("ns")
            .addToAnnotations(TrimmingDeploymentStore.LAST_APPLIED, "{}")
            .endMetadata()
            .build();

    TrimmingDeploymentStore.trim(d);

    // a JSON patch that adds an annotation to a missing map would replace the server's whole map
    assertThat(d.getMetadata().getAnnotations()).isNotNull().isEmpty();
  }

  @Test
  void aDeploymentWithoutSpecIsStoredAsItIs() {
    Deployment d = new DeploymentBuilder().withNewMetadata().withName("x").endMetadata().build();

    assertThat(TrimmingDeploymentStore.trim(d)).isSameAs(d);
  }

  @Test
  void storesTrimmedObjectsUnderTheNamespaceAndName() {
    TrimmingDeploymentStore store = new TrimmingDeploymentStore();
    Deployment d = full();
    String key = store.getKey(d);

    assertThat(key).isEqualTo(d.getMetadata().getNamespace() + "/" + d.getMetadata().getName());
    assertThat(store.put(key, d)).isNull();
    assertThat(store.get(key).getMetadata().getManagedFields()).isNullOrEmpty();
    assertThat(store.size()).isEqualTo(1);
    assertThat(store.keySet()).containsExactly(key);
    assertThat(store.values()).hasSize(1);
    assertThat(store.remove(key)).isNotNull();
    assertThat(store.size()).isZero();
    assertThat(store.get(key)).isNull();
  }
}
