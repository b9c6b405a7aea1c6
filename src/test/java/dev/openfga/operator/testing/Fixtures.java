package dev.openfga.operator.testing;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.DeploymentSettings;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.Messages;
import dev.openfga.operator.migration.rules.MigrationJob;
import dev.openfga.operator.migration.rules.Observation;
import dev.openfga.operator.migration.rules.Policy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Small builders for the objects the model looks at. Every call returns a fresh object; nothing
 * here is shared between tests.
 *
 * <p>The default Deployment is upstream's test fixture: {@code default/openfga}, UID {@code
 * test-uid-123}, the discovery labels, opted in, {@code replicas: 0}, one container {@code openfga}
 * with image {@code openfga/openfga:v1.14.0} and env ENGINE=postgres, URI, LOG_LEVEL=info,
 * ServiceAccount {@code openfga}.
 */
public final class Fixtures {
  private Fixtures() {}

  /** The initContainer that runs openfga migrate on a sqlite file, as the pod needs it. */
  public static Container sqliteMigrate() {
    return new ContainerBuilder()
        .withName("migrate-sqlite")
        .withImage(IMAGE)
        .withArgs("migrate")
        .withEnv(
            env(Keys.ENGINE_ENV, "sqlite"), env("OPENFGA_DATASTORE_URI", "file:/data/openfga.db"))
        .build();
  }

  /** The fixed "now" of every test. */
  public static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  public static final String NAMESPACE = "default";
  public static final String NAME = "openfga";
  public static final String UID = "test-uid-123";
  public static final String VERSION = "v1.14.0";
  public static final String IMAGE = "openfga/openfga:" + VERSION;

  public static DeploymentFixture deployment() {
    return new DeploymentFixture();
  }

  /**
   * OpenFGA as the upstream chart renders it in operator mode, for a cluster (mock or real): opted
   * in, {@code desired-replicas: 3}, zero replicas until the first migration, the URI from the
   * Secret {@code <name>-datastore}, a sidecar; {@code name} renames the whole release.
   */
  public static DeploymentFixture openfga() {
    Deployment rendered =
        new DeploymentBuilder()
            .withNewMetadata()
            .withName("openfga")
            .withLabels(chartLabels())
            .addToAnnotations(Keys.MIGRATION_ENABLED, "true")
            .addToAnnotations(Keys.DESIRED_REPLICAS, "3")
            .endMetadata()
            .withNewSpec()
            .withReplicas(0)
            .withNewTemplate()
            .withNewMetadata()
            .withLabels(chartLabels())
            .endMetadata()
            .withNewSpec()
            .withServiceAccountName("openfga")
            .withContainers(
                new ContainerBuilder()
                    .withName("openfga")
                    .withImage("openfga/openfga:v1.8.0")
                    .withArgs("run")
                    .withEnv(
                        env(Keys.ENGINE_ENV, "postgres"),
                        new EnvVarBuilder()
                            .withName("OPENFGA_DATASTORE_URI")
                            .withNewValueFrom()
                            .withNewSecretKeyRef("uri", "openfga-datastore", false)
                            .endValueFrom()
                            .build(),
                        env("OPENFGA_LOG_LEVEL", "info"),
                        env("OPENFGA_PLAYGROUND_ENABLED", "false"))
                    .build(),
                new ContainerBuilder()
                    .withName("proxy")
                    .withImage("envoyproxy/envoy:v1.30.0")
                    .build())
            .endSpec()
            .endTemplate()
            .endSpec()
            .build();
    return new DeploymentFixture(rendered, true, true);
  }

  /** The labels the upstream chart puts on the Deployment and its pods. */
  private static Map<String, String> chartLabels() {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(Keys.PART_OF, Keys.PART_OF_OPENFGA);
    labels.put(Keys.COMPONENT, Keys.COMPONENT_SERVER);
    labels.put(Keys.NAME, "openfga");
    labels.put(Keys.INSTANCE, "openfga");
    labels.put(Keys.MANAGED_BY, "Helm");
    labels.put("helm.sh/chart", "openfga-0.3.12");
    return labels;
  }

  /**
   * The Deployment the stock upstream chart 0.3.12 renders in operator mode (the shared fixture),
   * in namespace {@code openfga}; {@code name} renames the release (instance label, datastore
   * Secret) but keeps the chart's ServiceAccount {@code openfga}, which the real-cluster namespaces
   * have.
   */
  public static DeploymentFixture upstreamChart() {
    return new DeploymentFixture(
        upstreamChart("operator-mode.yaml", Deployment.class), true, false);
  }

  /** The Deployment with its image set to {@code openfga/openfga:<version>}. */
  public static Deployment deployment(String version) {
    return deployment().image("openfga/openfga:" + version).build();
  }

  /** A Job exactly as the operator builds it for the Deployment and version (no status). */
  public static JobFixture job(Deployment deployment, String version) {
    Container container =
        deployment.getSpec().getTemplate().getSpec().getContainers().stream()
            .filter(c -> Keys.DEFAULT_CONTAINER.equals(c.getName()))
            .findFirst()
            .orElseThrow();
    Job built =
        MigrationJob.build(
            deployment,
            container,
            version,
            DeploymentSettings.of(deployment),
            Optional.empty(),
            Policy.DEFAULTS.jobSpec());
    return new JobFixture(
        new JobBuilder(built)
            .editMetadata()
            .withUid("job-uid-" + version)
            .withResourceVersion("1")
            .endMetadata());
  }

  /** A status ConfigMap the operator wrote for this Deployment, recording the version. */
  public static ConfigMapBuilder statusConfigMap(Deployment deployment, String version) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName(deployment.getMetadata().getName() + "-migration-status")
        .withNamespace(deployment.getMetadata().getNamespace())
        .withUid("cm-uid")
        .withResourceVersion("1")
        .addToLabels(Keys.PART_OF, Keys.PART_OF_OPENFGA)
        .addToLabels(Keys.COMPONENT, Keys.COMPONENT_MIGRATION)
        .addToLabels(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR)
        .withOwnerReferences(MigrationJob.ownerReference(deployment))
        .endMetadata()
        .addToData(Keys.DATA_VERSION, version)
        .addToData(Keys.DATA_MIGRATED_AT, "2025-12-01T00:00:00Z")
        .addToData(Keys.DATA_JOB_NAME, deployment.getMetadata().getName() + "-migrate");
  }

  /** A controller owner reference to a Deployment with this name and UID. */
  public static OwnerReference controllerRef(String deploymentName, String uid) {
    return new OwnerReferenceBuilder()
        .withApiVersion("apps/v1")
        .withKind("Deployment")
        .withName(deploymentName)
        .withUid(uid)
        .withController(true)
        .build();
  }

  public static Observation observe(Deployment deployment) {
    return observe(deployment, NOW);
  }

  public static Observation observe(Deployment deployment, Instant now) {
    return new Observation(deployment, Optional.empty(), Optional.empty(), now);
  }

  public static Observation observe(
      Deployment deployment, ConfigMap statusConfigMap, Job job, Instant now) {
    return new Observation(
        deployment, Optional.ofNullable(statusConfigMap), Optional.ofNullable(job), now);
  }

  /**
   * The pod the Job controller makes from the Job's template (its labels and annotations, the Job's
   * name as a label, the Job as its controller), in {@code phase}.
   */
  public static Pod migrationPod(Job job, String phase) {
    var template =
        job.getSpec().getTemplate() == null || job.getSpec().getTemplate().getMetadata() == null
            ? new io.fabric8.kubernetes.api.model.ObjectMeta()
            : job.getSpec().getTemplate().getMetadata();
    return new PodBuilder()
        .withNewMetadata()
        .withName(job.getMetadata().getName() + "-x7k2p")
        .withNamespace(job.getMetadata().getNamespace())
        .withUid(job.getMetadata().getName() + "-pod-uid")
        .withCreationTimestamp(Timestamps.format(NOW.minusSeconds(30)))
        .withLabels(template.getLabels())
        .addToLabels(Keys.JOB_NAME_LABEL, job.getMetadata().getName())
        .withAnnotations(template.getAnnotations())
        .addNewOwnerReference()
        .withApiVersion("batch/v1")
        .withKind("Job")
        .withName(job.getMetadata().getName())
        .withUid(job.getMetadata().getUid())
        .withController(true)
        .endOwnerReference()
        .endMetadata()
        .withNewStatus()
        .withPhase(phase)
        .endStatus()
        .build();
  }

  public static EnvVar env(String name, String value) {
    return new EnvVarBuilder().withName(name).withValue(value).build();
  }

  public static EnvVar secretEnv(String name, String secret, String key) {
    return new EnvVarBuilder()
        .withName(name)
        .withNewValueFrom()
        .withNewSecretKeyRef()
        .withName(secret)
        .withKey(key)
        .endSecretKeyRef()
        .endValueFrom()
        .build();
  }

  /** Every object of the kind in a multi-document YAML file on the test class path. */
  public static <T extends HasMetadata> List<T> load(String resource, Class<T> kind) {
    try (InputStream in = Fixtures.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalArgumentException("no test resource " + resource);
      }
      Object parsed = new KubernetesSerialization().unmarshal(in);
      List<?> all = parsed instanceof List<?> list ? list : List.of(parsed);
      return all.stream().filter(kind::isInstance).map(kind::cast).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The only object of the kind in a YAML file of the upstream chart fixture. */
  public static <T extends HasMetadata> T upstreamChart(String file, Class<T> kind) {
    List<T> found = load("/fixtures/upstream-openfga-chart-0.3.12/" + file, kind);
    if (found.size() != 1) {
      throw new IllegalStateException(file + " has " + found.size() + " " + kind.getSimpleName());
    }
    return found.get(0);
  }

  /**
   * The one builder of OpenFGA Deployments, for all three test tiers. Three starting points:
   *
   * <ul>
   *   <li>{@link #deployment()}: upstream's test fixture, for the pure decision ({@code
   *       default/openfga}, UID and resourceVersion set, {@code v1.14.0}, a literal URI);
   *   <li>{@link #openfga()}: what the upstream chart renders in operator mode, for clusters (the
   *       mock API server and the real one): namespace {@code openfga}, no UID, the URI from the
   *       Secret {@code <name>-datastore}, a sidecar, {@code desired-replicas: 3}; {@code name}
   *       renames the release too (instance label, ServiceAccount, Secret);
   *   <li>{@link #upstreamChart()}: the stock chart's own rendering (the shared fixture YAML), with
   *       everything it has (probes, ports, sixteen variables), for the real cluster.
   * </ul>
   */
  public static final class DeploymentFixture {
    private final Deployment base;
    private String name;
    private String namespace;
    private String uid;
    private String resourceVersion;
    private Integer replicas = 0;
    private String serviceAccount;
    private final boolean releaseFollowsName;
    private final boolean serviceAccountFollowsName;
    private final Map<String, String> labels = new LinkedHashMap<>();
    private final Map<String, String> annotations = new LinkedHashMap<>();
    private final List<Container> containers = new ArrayList<>();
    private final List<Container> initContainers = new ArrayList<>();
    private final List<io.fabric8.kubernetes.api.model.apps.DeploymentCondition> conditions =
        new ArrayList<>();

    /** Upstream's test fixture. */
    private DeploymentFixture() {
      base = new Deployment();
      name = NAME;
      namespace = NAMESPACE;
      uid = UID;
      resourceVersion = "7";
      serviceAccount = "openfga";
      releaseFollowsName = false;
      serviceAccountFollowsName = false;
      labels.put("helm.sh/chart", "openfga-0.4.0");
      labels.put(Keys.NAME, "openfga");
      labels.put(Keys.INSTANCE, "openfga");
      labels.put(Keys.COMPONENT, Keys.COMPONENT_SERVER);
      labels.put(Keys.MANAGED_BY, Keys.MANAGED_BY_HELM);
      labels.put(Keys.PART_OF, Keys.PART_OF_OPENFGA);
      annotations.put(Keys.MIGRATION_ENABLED, "true");
      containers.add(
          new ContainerBuilder()
              .withName("openfga")
              .withImage(IMAGE)
              .withArgs("run")
              .withEnv(
                  Fixtures.env("OPENFGA_DATASTORE_ENGINE", "postgres"),
                  Fixtures.env(
                      "OPENFGA_DATASTORE_URI", "postgres://postgres:password@postgres:5432/db"),
                  Fixtures.env("OPENFGA_LOG_LEVEL", "info"))
              .build());
    }

    /**
     * Starts from a rendered Deployment: everything it has is kept unless changed here. {@code
     * name} also renames the release (instance label, datastore Secret) and, when asked, the
     * ServiceAccount.
     */
    private DeploymentFixture(
        Deployment rendered, boolean releaseFollowsName, boolean serviceAccountFollowsName) {
      base = new DeploymentBuilder(rendered).build();
      name = rendered.getMetadata().getName();
      namespace = MockCluster.NS;
      replicas = rendered.getSpec().getReplicas();
      serviceAccount = rendered.getSpec().getTemplate().getSpec().getServiceAccountName();
      this.releaseFollowsName = releaseFollowsName;
      this.serviceAccountFollowsName = serviceAccountFollowsName;
      labels.putAll(rendered.getMetadata().getLabels());
      if (rendered.getMetadata().getAnnotations() != null) {
        annotations.putAll(rendered.getMetadata().getAnnotations());
      }
      rendered
          .getSpec()
          .getTemplate()
          .getSpec()
          .getContainers()
          .forEach(c -> containers.add(new ContainerBuilder(c).build()));
    }

    public DeploymentFixture name(String value) {
      name = value;
      if (serviceAccountFollowsName) {
        serviceAccount = value;
      }
      if (releaseFollowsName) {
        labels.put(Keys.INSTANCE, value);
        // the chart's Secret is named after the release
        containers.replaceAll(
            c ->
                new ContainerBuilder(c)
                    .withEnv(
                        c.getEnv() == null
                            ? List.of()
                            : c.getEnv().stream()
                                .map(e -> withSecret(e, value + "-datastore"))
                                .toList())
                    .build());
      }
      return this;
    }

    public DeploymentFixture namespace(String value) {
      namespace = value;
      return this;
    }

    public DeploymentFixture uid(String value) {
      uid = value;
      return this;
    }

    public DeploymentFixture replicas(Integer value) {
      replicas = value;
      return this;
    }

    public DeploymentFixture serviceAccount(String value) {
      serviceAccount = value;
      return this;
    }

    /** Sets a label; {@code null} removes it. */
    public DeploymentFixture label(String key, String value) {
      if (value == null) {
        labels.remove(key);
      } else {
        labels.put(key, value);
      }
      return this;
    }

    public DeploymentFixture withoutLabel(String key) {
      labels.remove(key);
      return this;
    }

    /** Sets an annotation; {@code null} removes it. */
    public DeploymentFixture annotation(String key, String value) {
      if (value == null) {
        annotations.remove(key);
      } else {
        annotations.put(key, value);
      }
      return this;
    }

    public DeploymentFixture withoutAnnotation(String key) {
      annotations.remove(key);
      return this;
    }

    public DeploymentFixture desiredReplicas(int value) {
      return annotation(Keys.DESIRED_REPLICAS, Integer.toString(value));
    }

    public DeploymentFixture retryAfter(Instant at) {
      return annotation(Keys.RETRY_AFTER, Timestamps.format(at));
    }

    /** Sets the image of the {@code openfga} container. */
    public DeploymentFixture image(String image) {
      return editOpenfga(c -> new ContainerBuilder(c).withImage(image).build());
    }

    /** Sets the image to {@code openfga/openfga:<tag>}. */
    public DeploymentFixture version(String tag) {
      return image("openfga/openfga:" + tag);
    }

    /** Sets (or adds) the literal {@code OPENFGA_DATASTORE_ENGINE} of the openfga container. */
    public DeploymentFixture engine(String value) {
      return envVar(Keys.ENGINE_ENV, value);
    }

    /** Sets (or adds) a literal variable of the openfga container, keeping the others. */
    public DeploymentFixture envVar(String key, String value) {
      return editOpenfga(
          c -> {
            List<EnvVar> env = new ArrayList<>(c.getEnv() == null ? List.of() : c.getEnv());
            int at = -1;
            for (int i = 0; i < env.size(); i++) {
              if (env.get(i).getName().equals(key)) {
                at = i;
              }
            }
            if (at >= 0) {
              env.set(at, Fixtures.env(key, value));
            } else {
              env.add(Fixtures.env(key, value));
            }
            return new ContainerBuilder(c).withEnv(env).build();
          });
    }

    /** Replaces the env of the {@code openfga} container. */
    public DeploymentFixture env(EnvVar... env) {
      return editOpenfga(c -> new ContainerBuilder(c).withEnv(env).build());
    }

    /** Adds an init container. */
    public DeploymentFixture initContainer(Container value) {
      initContainers.add(value);
      return this;
    }

    /** Adds a container after the others. */
    public DeploymentFixture container(Container value) {
      containers.add(value);
      return this;
    }

    /** Replaces the containers. */
    public DeploymentFixture containers(Container... value) {
      containers.clear();
      containers.addAll(List.of(value));
      return this;
    }

    /** Edits the {@code openfga} container. */
    public DeploymentFixture editOpenfga(java.util.function.UnaryOperator<Container> edit) {
      containers.replaceAll(c -> "openfga".equals(c.getName()) ? edit.apply(c) : c);
      return this;
    }

    public DeploymentFixture condition(String type, String status, String reason, String message) {
      conditions.add(
          new DeploymentConditionBuilder()
              .withType(type)
              .withStatus(status)
              .withReason(reason)
              .withMessage(message)
              .withLastTransitionTime("2025-12-01T00:00:00Z")
              .withLastUpdateTime("2025-12-01T00:00:00Z")
              .build());
      return this;
    }

    /** A {@code MigrationFailed=True} condition for the version. */
    public DeploymentFixture failedCondition(String version) {
      return condition(
          Keys.CONDITION_TYPE, "True", Keys.REASON_JOB_FAILED, Messages.conditionFailed(version));
    }

    /** A {@code MigrationFailed=False} condition (cleared after a success). */
    public DeploymentFixture clearedCondition() {
      return condition(
          Keys.CONDITION_TYPE, "False", Keys.REASON_SUCCEEDED, Messages.CONDITION_SUCCEEDED);
    }

    private static EnvVar withSecret(EnvVar e, String secret) {
      if (e.getValueFrom() == null || e.getValueFrom().getSecretKeyRef() == null) {
        return e;
      }
      EnvVar copy = new EnvVarBuilder(e).build();
      copy.getValueFrom().getSecretKeyRef().setName(secret);
      return copy;
    }

    public Deployment build() {
      // the selector and the pod's labels follow the release (name and instance labels)
      Map<String, String> selector = new LinkedHashMap<>();
      selector.put(Keys.NAME, labels.getOrDefault(Keys.NAME, "openfga"));
      selector.put(Keys.INSTANCE, labels.getOrDefault(Keys.INSTANCE, name));
      Deployment d = new DeploymentBuilder(base).build();
      var template = d.getSpec() == null ? null : d.getSpec().getTemplate();
      Map<String, String> podLabels = new LinkedHashMap<>();
      if (template != null
          && template.getMetadata() != null
          && template.getMetadata().getLabels() != null) {
        podLabels.putAll(template.getMetadata().getLabels());
      }
      podLabels.putAll(selector);
      return new DeploymentBuilder(d)
          .editOrNewMetadata()
          .withName(name)
          .withNamespace(namespace)
          .withUid(uid)
          .withResourceVersion(resourceVersion)
          .withLabels(new LinkedHashMap<>(labels))
          .withAnnotations(new LinkedHashMap<>(annotations))
          .endMetadata()
          .editOrNewSpec()
          .withReplicas(replicas)
          .withNewSelector()
          .withMatchLabels(selector)
          .endSelector()
          .editOrNewTemplate()
          .editOrNewMetadata()
          .withLabels(podLabels)
          .endMetadata()
          .editOrNewSpec()
          .withServiceAccountName(serviceAccount)
          .withContainers(containers.stream().map(c -> new ContainerBuilder(c).build()).toList())
          .withInitContainers(
              initContainers.stream().map(c -> new ContainerBuilder(c).build()).toList())
          .endSpec()
          .endTemplate()
          .endSpec()
          .withNewStatus()
          .withConditions(
              conditions.stream().map(c -> new DeploymentConditionBuilder(c).build()).toList())
          .endStatus()
          .build();
    }
  }

  /**
   * A Job someone else made (a DBA's backup, a hand-run migration), named like the migration Job:
   * no managed-by label, no owner, one container {@code backup}.
   */
  public static Job foreignJob(String namespace, String name) {
    return new JobBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .addToLabels("team", "dba")
        .endMetadata()
        .withNewSpec()
        .withNewTemplate()
        .withNewSpec()
        .withRestartPolicy("Never")
        .addNewContainer()
        .withName("backup")
        .withImage("postgres:15")
        .withArgs("pg_dump")
        .endContainer()
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  /** Builds a Job (by default the operator's own), then gives it a status. */
  public static final class JobFixture {
    private final JobBuilder job;

    private JobFixture(JobBuilder job) {
      this.job = job;
    }

    public JobFixture uid(String uid) {
      job.editMetadata().withUid(uid).endMetadata();
      return this;
    }

    public JobFixture label(String key, String value) {
      job.editMetadata().addToLabels(key, value).endMetadata();
      return this;
    }

    public JobFixture withoutLabel(String key) {
      job.editMetadata().removeFromLabels(key).endMetadata();
      return this;
    }

    public JobFixture annotation(String key, String value) {
      job.editMetadata().addToAnnotations(key, value).endMetadata();
      return this;
    }

    public JobFixture withoutAnnotation(String key) {
      job.editMetadata().removeFromAnnotations(key).endMetadata();
      return this;
    }

    /** The retention metadata the operator records on a failed Job. */
    public JobFixture retention(Instant retryAfter, Instant retainUntil) {
      return annotation(Keys.RETRY_AFTER, Timestamps.format(retryAfter))
          .annotation(Keys.RETAIN_UNTIL, Timestamps.format(retainUntil));
    }

    public JobFixture ownerReferences(OwnerReference... refs) {
      job.editMetadata().withOwnerReferences(refs).endMetadata();
      return this;
    }

    public JobFixture ttl(Integer seconds) {
      job.editSpec().withTtlSecondsAfterFinished(seconds).endSpec();
      return this;
    }

    public JobFixture terminating() {
      job.editMetadata()
          .withDeletionTimestamp(Timestamps.format(NOW.minusSeconds(5)))
          .withFinalizers("foregroundDeletion")
          .endMetadata();
      return this;
    }

    /** The migration pod runs {@code openfga migrate}: active and ready. */
    public JobFixture running() {
      job.editOrNewStatus().withActive(1).withReady(1).endStatus();
      return this;
    }

    /** A pod exists but never became ready (image pull error, bad secret, unschedulable). */
    public JobFixture podNeverStarted() {
      job.editOrNewStatus().withActive(1).withReady(0).endStatus();
      return this;
    }

    public JobFixture complete(Instant at) {
      job.editOrNewStatus()
          .withActive(0)
          .withReady(0)
          .withSucceeded(1)
          .withCompletionTime(Timestamps.format(at))
          .addToConditions(condition("SuccessCriteriaMet", at), condition("Complete", at))
          .endStatus();
      return this;
    }

    /** Only {@code FailureTarget}: the Job failed but its pods are still terminating. */
    public JobFixture failureTarget(Instant at) {
      job.editOrNewStatus()
          .withActive(0)
          .withReady(0)
          .addToConditions(condition("FailureTarget", at))
          .endStatus();
      return this;
    }

    /** {@code Failed} (pods gone); keeps an earlier FailureTarget. */
    public JobFixture failed(Instant at) {
      job.editOrNewStatus()
          .withActive(0)
          .withReady(0)
          .withFailed(4)
          .addToConditions(condition("Failed", at))
          .endStatus();
      return this;
    }

    public Job build() {
      return job.build();
    }

    private static io.fabric8.kubernetes.api.model.batch.v1.JobCondition condition(
        String type, Instant at) {
      return new JobConditionBuilder()
          .withType(type)
          .withStatus("True")
          .withReason(type.equals("Failed") ? "BackoffLimitExceeded" : null)
          .withLastProbeTime(Timestamps.format(at))
          .withLastTransitionTime(Timestamps.format(at))
          .build();
    }
  }

  /**
   * FGAModel {@code spec.tests}: one test with one check of {@code users} x {@code objects} x
   * {@code relations}.
   */
  public static String modelTestCombinations(int users, int objects, int relations) {
    List<String> u = new ArrayList<>();
    for (int i = 0; i < users; i++) {
      u.add("\"user:u" + i + "\"");
    }
    List<String> o = new ArrayList<>();
    for (int i = 0; i < objects; i++) {
      o.add("\"doc:" + i + "\"");
    }
    List<String> r = new ArrayList<>();
    for (int i = 0; i < relations; i++) {
      r.add("r" + i + ": true");
    }
    return "- name: combinations\n  check:\n    - users: ["
        + String.join(", ", u)
        + "]\n      objects: ["
        + String.join(", ", o)
        + "]\n      assertions: {"
        + String.join(", ", r)
        + "}\n";
  }
}
