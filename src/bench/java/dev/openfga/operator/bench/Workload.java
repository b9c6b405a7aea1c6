package dev.openfga.operator.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.StatusRecord;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The objects the benchmark loads: OpenFGA Deployments as the upstream chart renders them (two
 * containers, 17 env vars, probes, resources, security contexts, scheduling), other Deployments and
 * ConfigMaps the operator must never cache, and the status ConfigMaps of converged Deployments.
 * Every object carries what a real API server adds and the mock does not: {@code managedFields} (a
 * GitOps client-side apply, the controller manager, status) and, on applied objects, {@code
 * kubectl.kubernetes.io/last-applied-configuration}.
 */
public final class Workload {
  private Workload() {}

  static final String NS = "bench";
  static final String INITIAL_VERSION = "v1.8.0";
  static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
  private static final ObjectMapper JSON = Serialization.jsonMapper();
  private static final String TIME = "2025-11-01T10:00:00Z";

  static String openfgaName(int i) {
    return String.format("openfga-%04d", i);
  }

  /** An opted-in OpenFGA Deployment, converged at {@link #INITIAL_VERSION}. */
  public static Deployment openfga(int i) {
    String name = openfgaName(i);
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(Keys.PART_OF, Keys.PART_OF_OPENFGA);
    labels.put(Keys.COMPONENT, Keys.COMPONENT_SERVER);
    labels.put(Keys.NAME, "openfga");
    labels.put(Keys.INSTANCE, name);
    labels.put(Keys.MANAGED_BY, "Helm");
    labels.put(Keys.VERSION_LABEL, INITIAL_VERSION);
    labels.put("helm.sh/chart", "openfga-0.2.30");
    Map<String, String> annotations = new LinkedHashMap<>();
    annotations.put(Keys.MIGRATION_ENABLED, "true");
    annotations.put(Keys.DESIRED_REPLICAS, "3");
    annotations.put("meta.helm.sh/release-name", name);
    annotations.put("meta.helm.sh/release-namespace", NS);
    List<EnvVar> env = new ArrayList<>();
    env.add(literal(Keys.ENGINE_ENV, "postgres"));
    env.add(secret("OPENFGA_DATASTORE_URI", name + "-datastore", "uri"));
    env.add(secret("OPENFGA_DATASTORE_USERNAME", name + "-datastore", "username"));
    env.add(secret("OPENFGA_DATASTORE_PASSWORD", name + "-datastore", "password"));
    env.add(literal("OPENFGA_DATASTORE_MAX_OPEN_CONNS", "30"));
    env.add(literal("OPENFGA_DATASTORE_MAX_IDLE_CONNS", "10"));
    env.add(literal("OPENFGA_GRPC_ADDR", "0.0.0.0:8081"));
    env.add(literal("OPENFGA_HTTP_ENABLED", "true"));
    env.add(literal("OPENFGA_HTTP_ADDR", "0.0.0.0:8080"));
    env.add(literal("OPENFGA_HTTP_CORS_ALLOWED_ORIGINS", "*"));
    env.add(literal("OPENFGA_PLAYGROUND_ENABLED", "false"));
    env.add(literal("OPENFGA_LOG_FORMAT", "json"));
    env.add(literal("OPENFGA_LOG_LEVEL", "info"));
    env.add(literal("OPENFGA_METRICS_ENABLED", "true"));
    env.add(literal("OPENFGA_METRICS_ADDR", "0.0.0.0:2112"));
    env.add(literal("OPENFGA_TRACE_ENABLED", "false"));
    env.add(literal("OPENFGA_CHECK_QUERY_CACHE_ENABLED", "true"));
    Container openfga =
        new ContainerBuilder()
            .withName("openfga")
            .withImage("openfga/openfga:" + INITIAL_VERSION)
            .withImagePullPolicy("IfNotPresent")
            .withArgs("run")
            .addNewPort()
            .withName("grpc")
            .withContainerPort(8081)
            .withProtocol("TCP")
            .endPort()
            .addNewPort()
            .withName("http")
            .withContainerPort(8080)
            .withProtocol("TCP")
            .endPort()
            .addNewPort()
            .withName("playground")
            .withContainerPort(3000)
            .withProtocol("TCP")
            .endPort()
            .addNewPort()
            .withName("metrics")
            .withContainerPort(2112)
            .withProtocol("TCP")
            .endPort()
            .withEnv(env)
            .withNewReadinessProbe()
            .withNewGrpc()
            .withPort(8081)
            .endGrpc()
            .withInitialDelaySeconds(5)
            .withPeriodSeconds(10)
            .withTimeoutSeconds(1)
            .withSuccessThreshold(1)
            .withFailureThreshold(6)
            .endReadinessProbe()
            .withNewLivenessProbe()
            .withNewGrpc()
            .withPort(8081)
            .endGrpc()
            .withInitialDelaySeconds(60)
            .withPeriodSeconds(10)
            .withTimeoutSeconds(5)
            .withSuccessThreshold(1)
            .withFailureThreshold(12)
            .endLivenessProbe()
            .withNewStartupProbe()
            .withNewHttpGet()
            .withPath("/healthz")
            .withPort(new IntOrString("http"))
            .withScheme("HTTP")
            .endHttpGet()
            .withPeriodSeconds(2)
            .withTimeoutSeconds(1)
            .withFailureThreshold(30)
            .endStartupProbe()
            .withNewResources()
            .addToRequests("cpu", new Quantity("250m"))
            .addToRequests("memory", new Quantity("256Mi"))
            .addToLimits("cpu", new Quantity("2"))
            .addToLimits("memory", new Quantity("1Gi"))
            .endResources()
            .withNewSecurityContext()
            .withAllowPrivilegeEscalation(false)
            .withReadOnlyRootFilesystem(true)
            .withRunAsNonRoot(true)
            .withRunAsUser(1000L)
            .withNewCapabilities()
            .withDrop("ALL")
            .endCapabilities()
            .endSecurityContext()
            .addNewVolumeMount()
            .withName("tls")
            .withMountPath("/etc/openfga/tls")
            .withReadOnly(true)
            .endVolumeMount()
            .addNewVolumeMount()
            .withName("tmp")
            .withMountPath("/tmp")
            .endVolumeMount()
            .withTerminationMessagePath("/dev/termination-log")
            .withTerminationMessagePolicy("File")
            .build();
    Container sidecar =
        new ContainerBuilder()
            .withName("otel-agent")
            .withImage("otel/opentelemetry-collector-contrib:0.98.0")
            .withImagePullPolicy("IfNotPresent")
            .withArgs("--config=/conf/otel-agent-config.yaml")
            .addNewPort()
            .withName("otlp")
            .withContainerPort(4317)
            .withProtocol("TCP")
            .endPort()
            .withEnv(
                literal("GOMEMLIMIT", "200MiB"),
                literal("OTEL_RESOURCE_ATTRIBUTES", "service.name=openfga,namespace=" + NS),
                fieldRef("K8S_NODE_NAME", "spec.nodeName"),
                fieldRef("K8S_POD_NAME", "metadata.name"))
            .withNewResources()
            .addToRequests("cpu", new Quantity("50m"))
            .addToRequests("memory", new Quantity("64Mi"))
            .addToLimits("memory", new Quantity("256Mi"))
            .endResources()
            .addNewVolumeMount()
            .withName("otel-config")
            .withMountPath("/conf")
            .endVolumeMount()
            .withTerminationMessagePath("/dev/termination-log")
            .withTerminationMessagePolicy("File")
            .build();
    Deployment d =
        new DeploymentBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(NS)
            .withLabels(labels)
            .withAnnotations(annotations)
            .withGeneration(4L)
            .endMetadata()
            .withNewSpec()
            .withReplicas(3)
            .withRevisionHistoryLimit(10)
            .withProgressDeadlineSeconds(600)
            .withNewSelector()
            .addToMatchLabels(Keys.NAME, "openfga")
            .addToMatchLabels(Keys.INSTANCE, name)
            .endSelector()
            .withNewStrategy()
            .withType("RollingUpdate")
            .withNewRollingUpdate()
            .withMaxSurge(new IntOrString("25%"))
            .withMaxUnavailable(new IntOrString("25%"))
            .endRollingUpdate()
            .endStrategy()
            .withNewTemplate()
            .withNewMetadata()
            .addToLabels(Keys.NAME, "openfga")
            .addToLabels(Keys.INSTANCE, name)
            .addToLabels(Keys.PART_OF, Keys.PART_OF_OPENFGA)
            .addToLabels(Keys.COMPONENT, Keys.COMPONENT_SERVER)
            .addToAnnotations(
                "checksum/config",
                "3f1c2a7be0d94e5c8a6b1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a")
            .endMetadata()
            .withNewSpec()
            .withServiceAccountName(name)
            .addNewImagePullSecret("regcred")
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
            .withValue("authz")
            .withEffect("NoSchedule")
            .endToleration()
            .withNewAffinity()
            .withNewPodAntiAffinity()
            .addNewPreferredDuringSchedulingIgnoredDuringExecution()
            .withWeight(100)
            .withNewPodAffinityTerm()
            .withTopologyKey("kubernetes.io/hostname")
            .withNewLabelSelector()
            .addToMatchLabels(Keys.INSTANCE, name)
            .endLabelSelector()
            .endPodAffinityTerm()
            .endPreferredDuringSchedulingIgnoredDuringExecution()
            .endPodAntiAffinity()
            .endAffinity()
            .addNewVolume()
            .withName("tls")
            .withNewSecret()
            .withSecretName(name + "-tls")
            .withDefaultMode(420)
            .endSecret()
            .endVolume()
            .addNewVolume()
            .withName("tmp")
            .withNewEmptyDir()
            .endEmptyDir()
            .endVolume()
            .addNewVolume()
            .withName("otel-config")
            .withNewConfigMap()
            .withName(name + "-otel-agent")
            .withDefaultMode(420)
            .endConfigMap()
            .endVolume()
            .withContainers(openfga, sidecar)
            .withRestartPolicy("Always")
            .withTerminationGracePeriodSeconds(30L)
            .withDnsPolicy("ClusterFirst")
            .withSchedulerName("default-scheduler")
            .endSpec()
            .endTemplate()
            .endSpec()
            .withNewStatus()
            .withObservedGeneration(4L)
            .withReplicas(3)
            .withUpdatedReplicas(3)
            .withReadyReplicas(3)
            .withAvailableReplicas(3)
            .addNewCondition()
            .withType("Available")
            .withStatus("True")
            .withReason("MinimumReplicasAvailable")
            .withMessage("Deployment has minimum availability.")
            .withLastTransitionTime(TIME)
            .withLastUpdateTime(TIME)
            .endCondition()
            .addNewCondition()
            .withType("Progressing")
            .withStatus("True")
            .withReason("NewReplicaSetAvailable")
            .withMessage("ReplicaSet \"" + name + "-6d4cf56db6\" has successfully progressed.")
            .withLastTransitionTime(TIME)
            .withLastUpdateTime(TIME)
            .endCondition()
            .endStatus()
            .build();
    return asServerWouldStore(d, "argocd-controller", true);
  }

  /** A Deployment of some other application in the same namespace: never cached. */
  static Deployment other(int i) {
    String name = String.format("app-%04d", i);
    List<EnvVar> env = new ArrayList<>();
    for (int e = 0; e < 8; e++) {
      env.add(literal("APP_SETTING_" + e, "value-" + e + "-" + name));
    }
    Deployment d =
        new DeploymentBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(NS)
            .addToLabels("app.kubernetes.io/name", name)
            .addToLabels("app.kubernetes.io/part-of", "shop")
            .addToAnnotations("deployment.kubernetes.io/revision", "2")
            .withGeneration(2L)
            .endMetadata()
            .withNewSpec()
            .withReplicas(2)
            .withNewSelector()
            .addToMatchLabels("app.kubernetes.io/name", name)
            .endSelector()
            .withNewTemplate()
            .withNewMetadata()
            .addToLabels("app.kubernetes.io/name", name)
            .endMetadata()
            .withNewSpec()
            .addNewContainer()
            .withName("app")
            .withImage("registry.example/shop/" + name + ":1.4.2")
            .addNewPort()
            .withContainerPort(8080)
            .withProtocol("TCP")
            .endPort()
            .withEnv(env)
            .withNewReadinessProbe()
            .withNewHttpGet()
            .withPath("/ready")
            .withPort(new IntOrString(8080))
            .endHttpGet()
            .endReadinessProbe()
            .withNewResources()
            .addToRequests("cpu", new Quantity("100m"))
            .addToRequests("memory", new Quantity("128Mi"))
            .endResources()
            .endContainer()
            .endSpec()
            .endTemplate()
            .endSpec()
            .withNewStatus()
            .withObservedGeneration(2L)
            .withReplicas(2)
            .withReadyReplicas(2)
            .endStatus()
            .build();
    return asServerWouldStore(d, "kubectl-client-side-apply", true);
  }

  /** A ConfigMap of some other application: never cached. */
  static ConfigMap otherConfigMap(int i) {
    String name = String.format("config-%04d", i);
    ConfigMap cm =
        new ConfigMapBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(NS)
            .addToLabels("app.kubernetes.io/name", String.format("app-%04d", i))
            .endMetadata()
            .addToData("application.yaml", "server:\n  port: 8080\n".repeat(20))
            .addToData("LOG_LEVEL", "info")
            .addToData("FEATURE_FLAGS", "a,b,c,d,e,f,g")
            .build();
    return asServerWouldStore(cm, "kubectl-client-side-apply", true);
  }

  /** The record of a converged Deployment, as the operator writes it. */
  static ConfigMap statusRecord(Deployment created, String version) {
    ConfigMap cm =
        StatusRecord.build(
            created,
            StatusRecord.data(
                version,
                Instant.parse(TIME),
                dev.openfga.operator.kube.Names.job(created.getMetadata().getName())));
    return asServerWouldStore(cm, "fabric8-kubernetes-client", false);
  }

  private static EnvVar literal(String name, String value) {
    return new EnvVarBuilder().withName(name).withValue(value).build();
  }

  private static EnvVar secret(String name, String secret, String key) {
    return new EnvVarBuilder()
        .withName(name)
        .withNewValueFrom()
        .withNewSecretKeyRef(key, secret, false)
        .endValueFrom()
        .build();
  }

  private static EnvVar fieldRef(String name, String path) {
    return new EnvVarBuilder()
        .withName(name)
        .withNewValueFrom()
        .withNewFieldRef()
        .withFieldPath(path)
        .endFieldRef()
        .endValueFrom()
        .build();
  }

  /**
   * Adds what a real API server keeps and the mock does not: the last-applied annotation of a
   * client-side apply (the whole applied object as JSON) and {@code managedFields} in the FieldsV1
   * format, one entry for the applier, one for the controller manager and one for status.
   */
  @SuppressWarnings("unchecked")
  static <T extends HasMetadata> T asServerWouldStore(T object, String manager, boolean applied) {
    ObjectNode node = JSON.valueToTree(object);
    ObjectNode metadata = (ObjectNode) node.get("metadata");
    JsonNode status = node.remove("status");
    if (applied) {
      ObjectNode lastApplied = node.deepCopy();
      ObjectNode meta = (ObjectNode) lastApplied.get("metadata");
      meta.remove("generation");
      ObjectNode annotations =
          metadata.has("annotations")
              ? (ObjectNode) metadata.get("annotations")
              : metadata.putObject("annotations");
      annotations.put(LAST_APPLIED, lastApplied.toString() + "\n");
    }
    ArrayNode managed = JSON.createArrayNode();
    ObjectNode applierFields = JSON.createObjectNode();
    ObjectNode metaFields = applierFields.putObject("f:metadata");
    if (metadata.has("annotations")) {
      metaFields.set("f:annotations", withDot(fields(metadata.get("annotations"))));
    }
    if (metadata.has("labels")) {
      metaFields.set("f:labels", withDot(fields(metadata.get("labels"))));
    }
    if (metadata.has("ownerReferences")) {
      metaFields.set("f:ownerReferences", withDot(fields(metadata.get("ownerReferences"))));
    }
    for (String top : List.of("spec", "data")) {
      if (node.has(top)) {
        applierFields.set("f:" + top, fields(node.get(top)));
      }
    }
    managed.add(entry(manager, applierFields, null));
    if (object instanceof Deployment) {
      ObjectNode revision = JSON.createObjectNode();
      revision
          .putObject("f:metadata")
          .putObject("f:annotations")
          .putObject("f:deployment.kubernetes.io/revision");
      managed.add(entry("kube-controller-manager", revision, null));
      if (status != null) {
        ObjectNode statusFields = JSON.createObjectNode();
        statusFields.set("f:status", fields(status));
        managed.add(entry("kube-controller-manager", statusFields, "status"));
      }
    }
    metadata.set("managedFields", managed);
    if (status != null) {
      node.set("status", status);
    }
    try {
      return (T) JSON.treeToValue(node, object.getClass());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static ObjectNode entry(String manager, ObjectNode fields, String subresource) {
    ObjectNode e = JSON.createObjectNode();
    e.put("manager", manager);
    e.put("operation", "Update");
    e.put("apiVersion", "apps/v1");
    e.put("time", TIME);
    e.put("fieldsType", "FieldsV1");
    e.set("fieldsV1", fields);
    if (subresource != null) {
      e.put("subresource", subresource);
    }
    return e;
  }

  /** The FieldsV1 set of a JSON value: {@code f:} members, {@code k:}/{@code v:} list items. */
  private static ObjectNode fields(JsonNode value) {
    ObjectNode out = JSON.createObjectNode();
    if (value.isObject()) {
      for (Map.Entry<String, JsonNode> e : value.properties()) {
        JsonNode v = e.getValue();
        if (v.isObject()) {
          out.set("f:" + e.getKey(), v.size() == 0 ? out.objectNode() : fields(v));
        } else if (v.isArray()) {
          out.set("f:" + e.getKey(), list((ArrayNode) v));
        } else {
          out.putObject("f:" + e.getKey());
        }
      }
    }
    return out;
  }

  private static ObjectNode list(ArrayNode items) {
    ObjectNode out = JSON.createObjectNode();
    for (JsonNode item : items) {
      if (item.isObject()) {
        String key;
        if (item.has("name")) {
          key = "k:{\"name\":" + item.get("name").toString() + "}";
        } else if (item.has("containerPort")) {
          key = "k:{\"containerPort\":" + item.get("containerPort") + ",\"protocol\":\"TCP\"}";
        } else if (item.has("type")) {
          key = "k:{\"type\":" + item.get("type").toString() + "}";
        } else {
          key = "i:" + out.size();
        }
        out.set(key, withDot(fields(item)));
      } else {
        out.putObject("v:" + item.toString());
      }
    }
    return withDot(out);
  }

  private static ObjectNode withDot(ObjectNode fields) {
    ObjectNode out = JSON.createObjectNode();
    out.putObject(".");
    out.setAll(fields);
    return out;
  }

  /**
   * With {@code --migration-pods}: the harness plays the Job controller and a kubelet for each
   * migration Job, so that an operator that watches pods sees their events as in a cluster (a real
   * API server without a controller manager makes none). The pod is made from the Job's template
   * (its labels and annotations, the Job's name and UID, the Job as controller), then reported
   * creating, running and ready, succeeded when the Job completes, and deleted with it.
   */
  static volatile boolean migrationPods;

  private static final java.util.Set<String> SERVICE_ACCOUNTS =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  private static String podName(String job) {
    return job + "-bench";
  }

  /** The Job's pod created, scheduled, creating its container, then running and ready. */
  static void podStarted(io.fabric8.kubernetes.client.KubernetesClient c, String job) {
    if (!migrationPods) {
      return;
    }
    var j = c.batch().v1().jobs().withName(job).get();
    var template = j.getSpec().getTemplate();
    String account =
        template.getSpec().getServiceAccountName() == null
            ? "default"
            : template.getSpec().getServiceAccountName();
    if (!SERVICE_ACCOUNTS.contains(account)) {
      c.serviceAccounts()
          .resource(
              new io.fabric8.kubernetes.api.model.ServiceAccountBuilder()
                  .withNewMetadata()
                  .withName(account)
                  .endMetadata()
                  .build())
          .createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
      SERVICE_ACCOUNTS.add(account);
    }
    c.pods()
        .resource(
            new io.fabric8.kubernetes.api.model.PodBuilder()
                .withNewMetadata()
                .withName(podName(job))
                .withLabels(template.getMetadata().getLabels())
                .addToLabels("batch.kubernetes.io/job-name", job)
                .addToLabels("batch.kubernetes.io/controller-uid", j.getMetadata().getUid())
                .addToLabels("job-name", job)
                .addToLabels("controller-uid", j.getMetadata().getUid())
                .withAnnotations(template.getMetadata().getAnnotations())
                .addNewOwnerReference()
                .withApiVersion("batch/v1")
                .withKind("Job")
                .withName(job)
                .withUid(j.getMetadata().getUid())
                .withController(true)
                .withBlockOwnerDeletion(true)
                .endOwnerReference()
                .endMetadata()
                .withSpec(template.getSpec())
                .editSpec()
                .withNodeName("bench-node")
                .endSpec()
                .build())
        .create();
    String now = now();
    String container = template.getSpec().getContainers().get(0).getName();
    String image = template.getSpec().getContainers().get(0).getImage();
    podStatus(
        c,
        job,
        "{\"phase\":\"Pending\",\"hostIP\":\"10.0.0.5\",\"startTime\":\"%s\",\"qosClass\":\"Burstable\",\"conditions\":[%s],\"containerStatuses\":[{\"name\":\"%s\",\"image\":\"%s\",\"imageID\":\"\",\"ready\":false,\"restartCount\":0,\"started\":false,\"state\":{\"waiting\":{\"reason\":\"ContainerCreating\"}}}]}"
            .formatted(now, conditions(now, false), container, image));
    podStatus(
        c,
        job,
        "{\"phase\":\"Running\",\"podIP\":\"10.244.0.17\",\"podIPs\":[{\"ip\":\"10.244.0.17\"}],\"conditions\":[%s],\"containerStatuses\":[{\"name\":\"%s\",\"image\":\"%s\",\"imageID\":\"%s@sha256:0b2f\",\"containerID\":\"containerd://5d1e\",\"ready\":true,\"restartCount\":0,\"started\":true,\"state\":{\"running\":{\"startedAt\":\"%s\"}}}]}"
            .formatted(conditions(now, true), container, image, image, now));
  }

  /** The pod's container exited 0: the pod Succeeded (before the Job is marked complete). */
  static void podSucceeded(io.fabric8.kubernetes.client.KubernetesClient c, String job) {
    if (!migrationPods) {
      return;
    }
    var pod = c.pods().withName(podName(job)).get();
    var status = pod.getStatus().getContainerStatuses().get(0);
    String now = now();
    podStatus(
        c,
        job,
        "{\"phase\":\"Succeeded\",\"conditions\":[%s],\"containerStatuses\":[{\"name\":\"%s\",\"image\":\"%s\",\"imageID\":\"%s\",\"containerID\":\"containerd://5d1e\",\"ready\":false,\"restartCount\":0,\"started\":false,\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\",\"startedAt\":\"%s\",\"finishedAt\":\"%s\"}}}]}"
            .formatted(
                conditions(now, false),
                status.getName(),
                status.getImage(),
                status.getImageID(),
                now,
                now));
  }

  /** The garbage collector's part once the Job is deleted: its pod goes too. */
  static void podDeleted(io.fabric8.kubernetes.client.KubernetesClient c, String job) {
    if (migrationPods) {
      c.pods().withName(podName(job)).withGracePeriod(0).delete();
    }
  }

  private static String conditions(String now, boolean ready) {
    StringBuilder s = new StringBuilder();
    for (String type :
        List.of(
            "PodReadyToStartContainers",
            "Initialized",
            "Ready",
            "ContainersReady",
            "PodScheduled")) {
      boolean status = ready || type.equals("Initialized") || type.equals("PodScheduled");
      if (s.length() > 0) {
        s.append(',');
      }
      s.append(
          "{\"type\":\"%s\",\"status\":\"%s\",\"lastProbeTime\":null,\"lastTransitionTime\":\"%s\"}"
              .formatted(type, status ? "True" : "False", now));
    }
    return s.toString();
  }

  private static void podStatus(
      io.fabric8.kubernetes.client.KubernetesClient c, String job, String status) {
    c.pods()
        .withName(podName(job))
        .subresource("status")
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"status\":" + status + "}");
  }

  private static String now() {
    return java.time.Instant.now().toString().replaceAll("\\.\\d+Z$", "Z");
  }

  /**
   * Marks the Job complete, as the Job controller would (a real API server wants SuccessCriteriaMet
   * before Complete).
   */
  static void completeJob(io.fabric8.kubernetes.client.KubernetesClient c, String job) {
    String now = java.time.Instant.now().toString().replaceAll("\\.\\d+Z$", "Z");
    c.batch()
        .v1()
        .jobs()
        .withName(job)
        .subresource("status")
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"status\":{\"startTime\":\""
                + now
                + "\",\"completionTime\":\""
                + now
                + "\",\"succeeded\":1,\"conditions\":[{\"type\":\"SuccessCriteriaMet\","
                + "\"status\":\"True\",\"lastTransitionTime\":\""
                + now
                + "\"},{\"type\":\"Complete\",\"status\":\"True\",\"lastTransitionTime\":\""
                + now
                + "\"}]}}");
  }

  /** The image change of a reaction: a JSON patch of the OpenFGA container's image. */
  static void setVersion(
      io.fabric8.kubernetes.client.KubernetesClient c, String dep, String version) {
    c.apps()
        .deployments()
        .withName(dep)
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON),
            "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/image\","
                + "\"value\":\"openfga/openfga:"
                + version
                + "\"}]");
  }
}
