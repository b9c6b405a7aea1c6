package dev.openfga.operator.testing;

import dev.openfga.operator.model.Keys;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A small builder of OpenFGA Deployments as the upstream {@code openfga} chart renders them in
 * operator mode: discovery labels, opt-in annotations, container {@code openfga} with a Postgres
 * datastore, a sidecar, and zero replicas until the first migration.
 */
public final class OpenFgaDeployment {
  private String name = "openfga";
  private String image = "openfga/openfga:v1.8.0";
  private String engine = "postgres";
  private int replicas = 0;
  private final java.util.List<io.fabric8.kubernetes.api.model.Container> initContainers =
      new java.util.ArrayList<>();
  private final Map<String, String> annotations = new LinkedHashMap<>();
  private final Map<String, String> labels = new LinkedHashMap<>();

  private OpenFgaDeployment() {
    labels.put(Keys.PART_OF, Keys.PART_OF_OPENFGA);
    labels.put(Keys.COMPONENT, Keys.COMPONENT_SERVER);
    labels.put(Keys.NAME, "openfga");
    labels.put(Keys.INSTANCE, "openfga");
    labels.put(Keys.MANAGED_BY, "Helm");
    labels.put("helm.sh/chart", "openfga-0.3.12");
    annotations.put(Keys.MIGRATION_ENABLED, "true");
    annotations.put(Keys.DESIRED_REPLICAS, "3");
  }

  public static OpenFgaDeployment openfga() {
    return new OpenFgaDeployment();
  }

  public OpenFgaDeployment name(String value) {
    name = value;
    labels.put(Keys.INSTANCE, value);
    return this;
  }

  public OpenFgaDeployment image(String value) {
    image = value;
    return this;
  }

  public OpenFgaDeployment version(String tag) {
    return image("openfga/openfga:" + tag);
  }

  public OpenFgaDeployment engine(String value) {
    engine = value;
    return this;
  }

  public OpenFgaDeployment initContainer(io.fabric8.kubernetes.api.model.Container value) {
    initContainers.add(value);
    return this;
  }

  public OpenFgaDeployment replicas(int value) {
    replicas = value;
    return this;
  }

  /** Sets an annotation; {@code null} removes it. */
  public OpenFgaDeployment annotation(String key, String value) {
    if (value == null) {
      annotations.remove(key);
    } else {
      annotations.put(key, value);
    }
    return this;
  }

  /** Sets a label; {@code null} removes it. */
  public OpenFgaDeployment label(String key, String value) {
    if (value == null) {
      labels.remove(key);
    } else {
      labels.put(key, value);
    }
    return this;
  }

  public Deployment build() {
    Map<String, String> selector =
        Map.of(Keys.NAME, "openfga", Keys.INSTANCE, labels.getOrDefault(Keys.INSTANCE, name));
    return new DeploymentBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(MockCluster.NS)
        .withLabels(new LinkedHashMap<>(labels))
        .withAnnotations(new LinkedHashMap<>(annotations))
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .withNewSelector()
        .withMatchLabels(selector)
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(new LinkedHashMap<>(labels))
        .endMetadata()
        .withNewSpec()
        .withServiceAccountName(name)
        .withInitContainers(initContainers)
        .withContainers(
            new ContainerBuilder()
                .withName("openfga")
                .withImage(image)
                .withArgs("run")
                .withEnv(
                    new EnvVarBuilder().withName(Keys.ENGINE_ENV).withValue(engine).build(),
                    new EnvVarBuilder()
                        .withName("OPENFGA_DATASTORE_URI")
                        .withNewValueFrom()
                        .withNewSecretKeyRef("uri", name + "-datastore", false)
                        .endValueFrom()
                        .build(),
                    new EnvVarBuilder().withName("OPENFGA_LOG_LEVEL").withValue("info").build(),
                    new EnvVarBuilder()
                        .withName("OPENFGA_PLAYGROUND_ENABLED")
                        .withValue("false")
                        .build())
                .build(),
            new ContainerBuilder().withName("proxy").withImage("envoyproxy/envoy:v1.30.0").build())
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }
}
