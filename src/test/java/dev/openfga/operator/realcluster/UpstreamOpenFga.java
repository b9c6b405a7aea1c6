package dev.openfga.operator.realcluster;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * OpenFGA as the stock upstream {@code openfga} chart 0.3.12 renders it (the shared fixtures), put
 * into a test namespace under a name of the test's choosing, at a version the test kubelet runs,
 * with its datastore Secret pointing at the harness's PostgreSQL.
 */
final class UpstreamOpenFga {
  private UpstreamOpenFga() {}

  /**
   * The operator-mode Deployment: opted in, {@code replicas} as given, the URI from the Secret
   * {@code <name>-datastore}; {@code desiredReplicas} (when not null) as the first-install gate.
   */
  static Deployment operatorMode(
      KubernetesClient client,
      String namespace,
      String name,
      String version,
      int replicas,
      Integer desiredReplicas) {
    Deployment deployment =
        rename(first(client, "operator-mode.yaml", Deployment.class), namespace, name);
    deployment.getSpec().setReplicas(replicas);
    if (desiredReplicas != null) {
      deployment
          .getMetadata()
          .getAnnotations()
          .put("openfga.dev/desired-replicas", desiredReplicas.toString());
    }
    var container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    container.setImage("openfga/openfga:" + version);
    for (EnvVar env : container.getEnv()) {
      if (env.getValueFrom() != null && env.getValueFrom().getSecretKeyRef() != null) {
        env.getValueFrom().getSecretKeyRef().setName(name + "-datastore");
      }
    }
    return deployment;
  }

  /** The hook-mode Helm hook Job {@code <name>-migrate} (the legacy Job the operator adopts). */
  static Job hookJob(KubernetesClient client, String namespace, String name, String version) {
    Job job = rename(first(client, "hook-mode.yaml", Job.class), namespace, name);
    job.getMetadata().setName(name + "-migrate");
    var container = job.getSpec().getTemplate().getSpec().getContainers().get(0);
    container.setImage("openfga/openfga:" + version);
    container.getEnv().stream()
        .filter(e -> e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null)
        .forEach(e -> e.getValueFrom().getSecretKeyRef().setName(name + "-datastore"));
    return job;
  }

  /** The Secret {@code <name>-datastore} with the key {@code uri}, as the chart expects it. */
  static Secret datastoreSecret(String namespace, String name, String uri) {
    return new SecretBuilder()
        .withNewMetadata()
        .withName(name + "-datastore")
        .withNamespace(namespace)
        .endMetadata()
        .withStringData(Map.of("uri", uri))
        .build();
  }

  /** Adds (or replaces) a literal environment variable of the OpenFGA container. */
  static Deployment withEnv(Deployment deployment, String name, String value) {
    var container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    List<EnvVar> env = new ArrayList<>(container.getEnv());
    env.removeIf(e -> e.getName().equals(name));
    env.add(new EnvVarBuilder().withName(name).withValue(value).build());
    container.setEnv(env);
    return deployment;
  }

  /** Namespace, name and the instance label (and so the selector) set for this test. */
  private static <T extends HasMetadata> T rename(T object, String namespace, String name) {
    object.getMetadata().setNamespace(namespace);
    object.getMetadata().setName(name);
    relabel(object.getMetadata().getLabels(), name);
    if (object instanceof Deployment d) {
      relabel(d.getSpec().getSelector().getMatchLabels(), name);
      relabel(d.getSpec().getTemplate().getMetadata().getLabels(), name);
    } else if (object instanceof Job j) {
      relabel(j.getSpec().getTemplate().getMetadata().getLabels(), name);
    }
    return object;
  }

  private static void relabel(Map<String, String> labels, String name) {
    if (labels != null && labels.containsKey("app.kubernetes.io/instance")) {
      labels.put("app.kubernetes.io/instance", name);
    }
  }

  private static <T extends HasMetadata> T first(
      KubernetesClient client, String file, Class<T> kind) {
    return RealCluster.upstreamChart(client, file).stream()
        .filter(kind::isInstance)
        .map(kind::cast)
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no " + kind.getSimpleName() + " in " + file));
  }
}
