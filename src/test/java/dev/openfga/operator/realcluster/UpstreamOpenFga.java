package dev.openfga.operator.realcluster;

import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;

/**
 * OpenFGA as the stock upstream {@code openfga} chart 0.3.12 renders it (the shared fixtures), put
 * into a test namespace under a name of the test's choosing, at a version the test kubelet runs,
 * with its datastore Secret pointing at the harness's PostgreSQL.
 */
final class UpstreamOpenFga {
  private UpstreamOpenFga() {}

  /**
   * The operator-mode Deployment, built with the tests' one Deployment builder from the stock
   * chart's rendering: opted in, {@code replicas} as given, the URI from the Secret {@code
   * <name>-datastore}; {@code desiredReplicas} (when not null) as the first-install gate.
   */
  static Deployment operatorMode(
      KubernetesClient client,
      String namespace,
      String name,
      String version,
      int replicas,
      Integer desiredReplicas) {
    return fixture(namespace, name, version, replicas, desiredReplicas).build();
  }

  /** The same, to change more before it is built. */
  static Fixtures.DeploymentFixture fixture(
      String namespace, String name, String version, int replicas, Integer desiredReplicas) {
    Fixtures.DeploymentFixture fixture =
        Fixtures.upstreamChart()
            .name(name)
            .namespace(namespace)
            .version(version)
            .replicas(replicas);
    if (desiredReplicas != null) {
      fixture.desiredReplicas(desiredReplicas);
    }
    return fixture;
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

  /** Namespace, name and the instance label set for this test. */
  private static Job rename(Job job, String namespace, String name) {
    job.getMetadata().setNamespace(namespace);
    job.getMetadata().setName(name);
    relabel(job.getMetadata().getLabels(), name);
    relabel(job.getSpec().getTemplate().getMetadata().getLabels(), name);
    return job;
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
