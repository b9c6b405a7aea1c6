package dev.openfga.operator.migration;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.Compaction;
import dev.openfga.operator.migration.rules.Database;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.Messages;
import dev.openfga.operator.migration.rules.Observation;
import dev.openfga.operator.migration.rules.Plan;
import dev.openfga.operator.migration.rules.Planner;
import dev.openfga.operator.migration.rules.Policy;
import dev.openfga.operator.migration.rules.StatusRecord;
import dev.openfga.operator.migration.rules.Step;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Deployment cache keeps a skeleton: the decision from it, and the Job it creates, are the same
 * as from the full Deployment (the reconciler reads nothing before a create).
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
            .withMessage(Messages.conditionFailed("v1.8.0"))
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

  /** What the informer's store keeps of a copy of {@code d}: trimmed and compacted. */
  private static Deployment stored(Deployment d) {
    TrimmingDeploymentStore store = new TrimmingDeploymentStore();
    Deployment copy = copy(d);
    store.put(store.getKey(copy), copy);
    return store.get(store.getKey(copy));
  }

  @Test
  void compactionSharesEmptyListsAndMapsAndChangesNothingElse() {
    Deployment trimmed = TrimmingDeploymentStore.trim(copy(everythingTheJobCopies(true)));
    String json = Serialization.asJson(trimmed);
    Deployment compacted = Compaction.compact(copy(trimmed));

    assertThat(compacted).isEqualTo(trimmed);
    assertThat(Serialization.asJson(compacted)).isEqualTo(json);
    Container openfga = container(compacted, "openfga");
    assertThat(openfga.getPorts()).isSameAs(List.of());
    assertThat(openfga.getAdditionalProperties()).isSameAs(java.util.Map.of());
    assertThat(compacted.getStatus().getConditions().get(0).getAdditionalProperties())
        .isSameAs(java.util.Map.of());
    // nothing may change a cached object: a change to a shared empty list fails loudly
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> openfga.getPorts().add(new io.fabric8.kubernetes.api.model.ContainerPort()))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  private static Container container(Deployment d, String name) {
    return d.getSpec().getTemplate().getSpec().getContainers().stream()
        .filter(c -> name.equals(c.getName()))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void keepsASkeleton() {
    Deployment original = full();
    Deployment d = TrimmingDeploymentStore.trim(full());

    assertThat(d.getMetadata().getManagedFields()).isNullOrEmpty();
    assertThat(d.getMetadata().getAnnotations())
        .doesNotContainKey(TrimmingDeploymentStore.LAST_APPLIED)
        .containsEntry(Keys.MIGRATION_ENABLED, "true")
        .containsEntry(Keys.DESIRED_REPLICAS, "3");
    assertThat(d.getSpec().getSelector()).isNull();
    // of the template's annotations only Istio's and Linkerd's (none here)
    assertThat(d.getSpec().getTemplate().getMetadata()).isNull();
    var pod = d.getSpec().getTemplate().getSpec();
    // of an init container only its name, image and args (sqlite needs an openfga migrate one)
    assertThat(pod.getInitContainers())
        .containsExactly(
            new ContainerBuilder().withName("wait-for-db").withImage("busybox").build());
    assertThat(pod.getVolumes()).isNullOrEmpty();
    assertThat(pod.getServiceAccountName())
        .isEqualTo(original.getSpec().getTemplate().getSpec().getServiceAccountName());
    Container openfga = container(d, "openfga");
    Container full = container(original, "openfga");
    // what the Job copies; no command, probes or ports, no server-only environment
    assertThat(openfga)
        .isEqualTo(
            new ContainerBuilder()
                .withName("openfga")
                .withImage(full.getImage())
                .withImagePullPolicy(full.getImagePullPolicy())
                .withEnv(dev.openfga.operator.migration.rules.MigrationEnv.filterEnv(full.getEnv()))
                .withVolumeMounts(full.getVolumeMounts())
                .withResources(full.getResources())
                .withSecurityContext(full.getSecurityContext())
                .build());
    assertThat(openfga.getEnv())
        .extracting(EnvVar::getName)
        .allMatch(n -> n.startsWith("OPENFGA_DATASTORE_") || n.startsWith("OPENFGA_LOG"));
    assertThat(full.getEnv()).extracting(EnvVar::getName).contains("OPENFGA_PLAYGROUND_ENABLED");
    assertThat(container(d, "sidecar"))
        .isEqualTo(new ContainerBuilder().withName("sidecar").build());
  }

  @Test
  void keepsWhatThePlannerReads() {
    Deployment original = full();
    setEngine(original, "postgres");
    Deployment d = TrimmingDeploymentStore.trim(copy(original));

    assertThat(d.getMetadata()).isEqualTo(withoutWhatIsDropped(original).getMetadata());
    assertThat(d.getSpec().getReplicas()).isZero();
    assertThat(d.getStatus()).isEqualTo(original.getStatus());
    assertThat(container(d, "openfga").getEnv())
        .contains(new EnvVar(Keys.ENGINE_ENV, "postgres", null));
    assertThat(Planner.desiredVersion(d)).isEqualTo(Planner.desiredVersion(original)).isPresent();
  }

  /** The selected container's engine variable, as its only one. */
  private static void setEngine(Deployment d, String engine) {
    List<EnvVar> env = container(d, "openfga").getEnv();
    env.removeIf(e -> Keys.ENGINE_ENV.equals(e.getName()));
    env.add(new EnvVar(Keys.ENGINE_ENV, engine, null));
  }

  private static Deployment withoutWhatIsDropped(Deployment d) {
    Deployment copy = copy(d);
    copy.getMetadata().setManagedFields(null);
    copy.getMetadata().getAnnotations().remove(TrimmingDeploymentStore.LAST_APPLIED);
    return copy;
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "up to date, v1.14.1, ",
    "image changed, v0.9.0, ",
    "engine memory, v0.9.0, memory",
    "engine sqlite, v0.9.0, sqlite",
    "engine sqlite with its migrate initContainer, v0.9.0, sqlite",
    "engine postgres, v0.9.0, postgres",
  })
  void theDecisionIsTheSameAsFromTheFullDeployment(String name, String recorded, String engine) {
    Deployment original = full();
    if (engine != null) {
      setEngine(original, engine);
    }
    if (name.contains("initContainer")) {
      original
          .getSpec()
          .getTemplate()
          .getSpec()
          .setInitContainers(List.of(Fixtures.sqliteMigrate()));
    }
    String version = Planner.desiredVersion(original).orElseThrow();
    Deployment trimmed = stored(original);
    ConfigMap record =
        StatusRecord.build(
            original,
            StatusRecord.data(
                recorded.equals("v1.14.1") ? version : recorded, NOW.minusSeconds(60), "x"));

    Plan expected =
        planner.plan(new Observation(original, Optional.of(record), Optional.empty(), NOW));
    Plan actual =
        planner.plan(new Observation(trimmed, Optional.of(record), Optional.empty(), NOW));

    assertThat(actual).isEqualTo(expected);
  }

  /** Decisions that read the status, the annotations and an existing Job. */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "failed Job, FAILED",
    "cooldown, COOLDOWN",
    "legacy Helm hook Job, MIGRATING",
    "own running Job, MIGRATING",
    "missing migration sidecar, BLOCKED",
    "native sidecar as migration sidecar, MIGRATING",
    "rollback, DOWNGRADED",
    "re-run request, MIGRATING"
  })
  void theDecisionWithAJobOrAFailureIsTheSameAsFromTheFullDeployment(
      String name, Plan.State state) {
    Deployment original = full();
    Optional<Job> job = Optional.empty();
    switch (name) {
      case "failed Job" ->
          job = Optional.of(Fixtures.job(original, "v1.14.1").failed(NOW.minusSeconds(30)).build());
      case "cooldown" ->
          original.getMetadata().getAnnotations().put(Keys.RETRY_AFTER, "2026-01-01T00:05:00Z");
      case "legacy Helm hook Job" -> {
        Job hook = Fixtures.upstreamChart("hook-mode.yaml", Job.class);
        hook.getMetadata().setNamespace(original.getMetadata().getNamespace());
        hook.getMetadata().setUid("hook-uid");
        job = Optional.of(hook);
      }
      case "missing migration sidecar" ->
          original.getMetadata().getAnnotations().put(Keys.MIGRATION_SIDECARS, "db-proxy");
      case "native sidecar as migration sidecar" -> {
        original.getMetadata().getAnnotations().put(Keys.MIGRATION_SIDECARS, "db-proxy");
        original
            .getSpec()
            .getTemplate()
            .getSpec()
            .setInitContainers(
                List.of(
                    new io.fabric8.kubernetes.api.model.ContainerBuilder()
                        .withName("db-proxy")
                        .withImage("proxy:1")
                        .withRestartPolicy("Always")
                        .build()));
      }
      case "re-run request" ->
          original
              .getMetadata()
              .getAnnotations()
              .put(Keys.MIGRATE_REQUESTED_AT, "2025-12-31T00:00:00Z");
      case "rollback" -> {}
      default -> job = Optional.of(Fixtures.job(original, "v1.14.1").running().build());
    }
    Deployment trimmed = stored(original);
    String recordedVersion =
        switch (name) {
          case "rollback" -> "v9.0.0";
          case "re-run request" -> Planner.desiredVersion(original).orElseThrow();
          default -> "v0.9.0";
        };
    ConfigMap record =
        StatusRecord.build(
            original, StatusRecord.data(recordedVersion, NOW.minusSeconds(600), "x"));

    Plan expected = planner.plan(new Observation(original, Optional.of(record), job, NOW));
    Plan actual = planner.plan(new Observation(trimmed, Optional.of(record), job, NOW));

    assertThat(expected.state()).isEqualTo(state);
    assertThat(actual).isEqualTo(expected);
  }

  @Test
  void keepsALiteralUriWholeAsTheJobCarriesIt() {
    Deployment original = full();
    container(original, "openfga")
        .getEnv()
        .add(new EnvVar(Keys.URI_ENV, "postgres://fga:s3cret@db:5432/fga?sslmode=require", null));
    Deployment trimmed = TrimmingDeploymentStore.trim(copy(original));

    for (String name : List.of("openfga", "sidecar")) {
      assertThat(Database.key("ns", container(trimmed, name)))
          .isEqualTo(Database.key("ns", container(original, name)));
    }
    assertThat(Database.key("ns", container(trimmed, "openfga")))
        .isPresent()
        .get()
        .asString()
        .doesNotContain("s3cret");
    // the Job needs the URI as the Deployment has it (ADR 0002), so the skeleton keeps it
    assertThat(
            createdJob(
                    planner.plan(new Observation(trimmed, Optional.empty(), Optional.empty(), NOW)))
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0)
                .getEnv())
        .contains(
            new EnvVar(Keys.URI_ENV, "postgres://fga:s3cret@db:5432/fga?sslmode=require", null));
  }

  /**
   * Everything the Job builder copies, in one Deployment: volumes (one mounted, one not), a pod
   * security context, scheduling, image pull secrets, a service account, a variable that refers to
   * another, mesh annotations, a container and a native sidecar for the Job, a migration Secret.
   */
  private static Deployment everythingTheJobCopies(boolean mesh) {
    Deployment d = full();
    var annotations = d.getMetadata().getAnnotations();
    annotations.put(Keys.MIGRATION_SIDECARS, "sidecar,cloud-sql-proxy");
    annotations.put(Keys.MIGRATION_SECRET, "openfga-migration");
    if (mesh) {
      annotations.put(Keys.MIGRATION_MESH, "true");
    }
    var template = d.getSpec().getTemplate();
    template.getMetadata().getAnnotations().put("sidecar.istio.io/proxyCPU", "100m");
    var pod = template.getSpec();
    pod.setInitContainers(
        List.of(
            new ContainerBuilder()
                .withName("cloud-sql-proxy")
                .withImage("gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.0")
                .withArgs("--port=5432", "project:region:db")
                .withRestartPolicy("Always")
                .addNewVolumeMount()
                .withName("proxy-creds")
                .withMountPath("/creds")
                .endVolumeMount()
                .build(),
            new ContainerBuilder().withName("wait-for-db").withImage("busybox").build()));
    pod.setVolumes(
        List.of(
            new io.fabric8.kubernetes.api.model.VolumeBuilder()
                .withName("tls")
                .withNewSecret()
                .withSecretName("db-ca")
                .endSecret()
                .build(),
            new io.fabric8.kubernetes.api.model.VolumeBuilder()
                .withName("proxy-creds")
                .withNewSecret()
                .withSecretName("proxy-sa")
                .endSecret()
                .build(),
            new io.fabric8.kubernetes.api.model.VolumeBuilder()
                .withName("cache")
                .withNewEmptyDir()
                .endEmptyDir()
                .build()));
    pod.setSecurityContext(
        new io.fabric8.kubernetes.api.model.PodSecurityContextBuilder()
            .withRunAsNonRoot(true)
            .withFsGroup(1000L)
            .build());
    pod.setNodeSelector(java.util.Map.of("pool", "db"));
    pod.setTolerations(
        List.of(
            new io.fabric8.kubernetes.api.model.TolerationBuilder()
                .withKey("dedicated")
                .withOperator("Exists")
                .build()));
    pod.setAffinity(
        new io.fabric8.kubernetes.api.model.AffinityBuilder()
            .withNewNodeAffinity()
            .withNewRequiredDuringSchedulingIgnoredDuringExecution()
            .addNewNodeSelectorTerm()
            .addNewMatchExpression()
            .withKey("zone")
            .withOperator("In")
            .withValues("a")
            .endMatchExpression()
            .endNodeSelectorTerm()
            .endRequiredDuringSchedulingIgnoredDuringExecution()
            .endNodeAffinity()
            .build());
    pod.setImagePullSecrets(
        List.of(new io.fabric8.kubernetes.api.model.LocalObjectReference("registry")));
    pod.setAutomountServiceAccountToken(false);
    Container openfga = container(d, "openfga");
    openfga.setVolumeMounts(
        List.of(
            new io.fabric8.kubernetes.api.model.VolumeMountBuilder()
                .withName("tls")
                .withMountPath("/tls")
                .build()));
    openfga.getEnv().add(new EnvVar("DB_HOST", "db.example", null));
    openfga
        .getEnv()
        .add(new EnvVar("OPENFGA_DATASTORE_URI", "postgres://fga@$(DB_HOST)/fga", null));
    openfga.setResources(
        new io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder()
            .addToLimits("memory", new io.fabric8.kubernetes.api.model.Quantity("256Mi"))
            .build());
    openfga.setSecurityContext(
        new io.fabric8.kubernetes.api.model.SecurityContextBuilder()
            .withReadOnlyRootFilesystem(true)
            .build());
    return d;
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "upstream chart",
    "everything the Job copies",
    "everything the Job copies with migration-mesh",
    "sqlite with its migrate initContainer"
  })
  void theJobFromTheSkeletonIsTheJobFromTheFullDeployment(String name) {
    Deployment original =
        switch (name) {
          case "everything the Job copies" -> everythingTheJobCopies(false);
          case "everything the Job copies with migration-mesh" -> everythingTheJobCopies(true);
          default -> full();
        };
    if (name.startsWith("sqlite")) {
      setEngine(original, "sqlite");
      original
          .getSpec()
          .getTemplate()
          .getSpec()
          .setInitContainers(List.of(Fixtures.sqliteMigrate()));
    }
    Deployment trimmed = stored(original);
    Observation o = new Observation(original, Optional.empty(), Optional.empty(), NOW);

    Plan fromFull = planner.plan(o);
    Plan fromSkeleton = planner.plan(o.withDeployment(trimmed));

    assertThat(fromSkeleton).isEqualTo(fromFull);
    if (!name.startsWith("sqlite")) {
      Job job = createdJob(fromSkeleton);
      assertThat(job).isEqualTo(createdJob(fromFull));
      if (name.startsWith("everything")) {
        var pod = job.getSpec().getTemplate().getSpec();
        // the test is only as good as what the Job copies: every part of it is there
        assertThat(pod.getVolumes())
            .extracting(io.fabric8.kubernetes.api.model.Volume::getName)
            .containsExactly("tls", "proxy-creds");
        assertThat(pod.getInitContainers())
            .extracting(Container::getName)
            .containsExactly("sidecar", "cloud-sql-proxy");
        assertThat(pod.getContainers().get(0).getEnv())
            .extracting(EnvVar::getName)
            .contains("DB_HOST", Keys.URI_ENV);
        assertThat(pod.getAffinity()).isNotNull();
        assertThat(pod.getTolerations()).hasSize(1);
        assertThat(pod.getSecurityContext().getFsGroup()).isEqualTo(1000L);
        assertThat(pod.getImagePullSecrets()).hasSize(1);
        assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        assertThat(job.getSpec().getTemplate().getMetadata().getAnnotations())
            .containsKey(name.endsWith("mesh") ? "sidecar.istio.io/proxyCPU" : Keys.ISTIO_INJECT);
      }
    }
  }

  private static Job createdJob(Plan plan) {
    return plan.steps().stream()
        .filter(s -> s instanceof Step.CreateJob)
        .map(s -> ((Step.CreateJob) s).job())
        .findFirst()
        .orElseThrow();
  }

  @Test
  void anotherSelectedContainerKeepsItsImageAndTheDefaultOneOnlyItsName() {
    Deployment original = full();
    original.getMetadata().getAnnotations().put(Keys.CONTAINER_NAME, "sidecar");
    Deployment d = TrimmingDeploymentStore.trim(copy(original));

    assertThat(container(d, "sidecar").getImage()).isEqualTo("envoyproxy/envoy:v1.30.0");
    assertThat(container(d, "openfga"))
        .isEqualTo(new ContainerBuilder().withName("openfga").build());
    assertThat(planner.plan(new Observation(d, Optional.empty(), Optional.empty(), NOW)))
        .isEqualTo(
            planner.plan(new Observation(original, Optional.empty(), Optional.empty(), NOW)));
  }

  @Test
  void anUnusableContainerAnnotationKeepsEveryImage() {
    Deployment original = full();
    original.getMetadata().getAnnotations().put(Keys.CONTAINER_NAME, "Not A Name!");
    Deployment d = TrimmingDeploymentStore.trim(copy(original));

    assertThat(d.getSpec().getTemplate().getSpec().getContainers())
        .extracting(Container::getImage)
        .isEqualTo(
            original.getSpec().getTemplate().getSpec().getContainers().stream()
                .map(Container::getImage)
                .toList());
    assertThat(planner.plan(new Observation(d, Optional.empty(), Optional.empty(), NOW)))
        .isEqualTo(
            planner.plan(new Observation(original, Optional.empty(), Optional.empty(), NOW)));
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
  void aDeploymentWithoutSpecKeepsItsMetadata() {
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
