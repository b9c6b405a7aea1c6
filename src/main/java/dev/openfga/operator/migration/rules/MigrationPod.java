package dev.openfga.operator.migration.rules;

import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.LocalObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The pod of the migration Job (rule 8), built from the Deployment's pod template: its account,
 * pull secrets, security context and scheduling; the {@code migrate-database} container; the
 * database proxies as native sidecars; only the volumes these mount. Every part is a copy: nothing
 * of the Deployment is shared with the Job.
 */
public final class MigrationPod {
  private MigrationPod() {}

  /** Annotation key prefixes of Istio and Linkerd, copied to the Job's pod with mesh "true". */
  static final List<String> MESH_PREFIXES =
      List.of(
          "sidecar.istio.io/",
          "proxy.istio.io/",
          "traffic.sidecar.istio.io/",
          "linkerd.io/",
          "config.linkerd.io/",
          "config.alpha.linkerd.io/");

  static PodSpec spec(Deployment deployment, Container container, DeploymentSettings settings) {
    PodSpec pod = deployment.getSpec().getTemplate().getSpec();
    List<Container> sidecars = sidecars(pod, settings.sidecars());
    return new PodSpecBuilder()
        .withRestartPolicy("Never")
        .withServiceAccountName(settings.serviceAccount().orElse(pod.getServiceAccountName()))
        .withAutomountServiceAccountToken(pod.getAutomountServiceAccountToken())
        .withImagePullSecrets(
            MigrationJob.list(pod.getImagePullSecrets()).stream()
                .map(s -> new LocalObjectReferenceBuilder(s).build())
                .toList())
        .withSecurityContext(
            pod.getSecurityContext() == null
                ? null
                : new PodSecurityContextBuilder(pod.getSecurityContext()).build())
        .withNodeSelector(
            pod.getNodeSelector() == null ? null : new LinkedHashMap<>(pod.getNodeSelector()))
        .withTolerations(
            MigrationJob.list(pod.getTolerations()).stream()
                .map(t -> new TolerationBuilder(t).build())
                .toList())
        .withAffinity(
            pod.getAffinity() == null ? null : new AffinityBuilder(pod.getAffinity()).build())
        .withVolumes(volumes(pod, container, sidecars))
        .withInitContainers(nativeSidecars(sidecars))
        .withContainers(migrate(container, settings))
        .build();
  }

  /** {@code migrate-database}: the container's image, pull policy, resources and security. */
  private static Container migrate(Container container, DeploymentSettings settings) {
    return new ContainerBuilder()
        .withName(Keys.MIGRATION_CONTAINER)
        .withImage(container.getImage())
        .withImagePullPolicy(container.getImagePullPolicy())
        .withArgs(Keys.MIGRATE_ARG)
        .withEnv(MigrationEnv.of(MigrationJob.list(container.getEnv()), settings))
        .withVolumeMounts(
            MigrationJob.list(container.getVolumeMounts()).stream()
                .map(m -> new VolumeMountBuilder(m).build())
                .toList())
        .withResources(copy(container.getResources()))
        .withSecurityContext(
            container.getSecurityContext() == null
                ? null
                : new SecurityContextBuilder(container.getSecurityContext()).build())
        .build();
  }

  /**
   * Database proxies as native sidecars: started before migrate, stopped after it, so the Job
   * completes when migrate exits. Without their readiness probe: the pod's Ready (the Job's ready
   * count) tells a running migration, which is never interrupted, from one not started, and a proxy
   * not ready while migrate runs would make it look not started (migrate waits for the startup
   * probe, which is kept).
   */
  private static List<Container> nativeSidecars(List<Container> sidecars) {
    return sidecars.stream()
        .map(
            c ->
                new ContainerBuilder(c)
                    .withResources(copy(c.getResources()))
                    .withRestartPolicy("Always")
                    .withReadinessProbe(null)
                    .build())
        .toList();
  }

  /** The pod's volumes that the container or the sidecars mount, copied. */
  private static List<Volume> volumes(PodSpec pod, Container container, List<Container> sidecars) {
    Set<String> mounted = new LinkedHashSet<>();
    MigrationJob.list(container.getVolumeMounts()).forEach(m -> mounted.add(m.getName()));
    for (Container sidecar : sidecars) {
      for (VolumeMount m : MigrationJob.list(sidecar.getVolumeMounts())) {
        mounted.add(m.getName());
      }
    }
    return MigrationJob.list(pod.getVolumes()).stream()
        .filter(v -> mounted.contains(v.getName()))
        .map(MigrationPod::copy)
        .toList();
  }

  /**
   * The containers named, from the pod's containers or its native sidecars (init containers), in
   * the order named; names not found are left out ({@link #missingSidecars} tells which).
   */
  static List<Container> sidecars(PodSpec pod, List<String> names) {
    List<Container> found = new ArrayList<>();
    for (String name : names) {
      Stream.concat(
              MigrationJob.list(pod.getContainers()).stream(),
              MigrationJob.list(pod.getInitContainers()).stream())
          .filter(c -> name.equals(c.getName()))
          .findFirst()
          .ifPresent(found::add);
    }
    return found;
  }

  /** The names of {@code openfga.dev/migration-sidecars} that the pod does not have. */
  public static List<String> missingSidecars(PodSpec pod, List<String> names) {
    Set<String> present = new LinkedHashSet<>();
    MigrationJob.list(pod.getContainers()).forEach(c -> present.add(c.getName()));
    MigrationJob.list(pod.getInitContainers()).forEach(c -> present.add(c.getName()));
    return names.stream().filter(n -> !present.contains(n)).toList();
  }

  /** Never the Deployment's selector labels: the migration pod must not become an endpoint. */
  static Map<String, String> labels() {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(Keys.PART_OF, Keys.PART_OF_OPENFGA);
    labels.put(Keys.COMPONENT, Keys.COMPONENT_MIGRATION);
    return labels;
  }

  /**
   * Without mesh "true", annotations that keep Istio and Linkerd from injecting a proxy that never
   * exits (the Job would never complete); with it, the pod template's own mesh annotations.
   */
  static Map<String, String> annotations(Deployment deployment, boolean mesh) {
    Map<String, String> annotations = new LinkedHashMap<>();
    if (!mesh) {
      annotations.put(Keys.ISTIO_INJECT, "false");
      annotations.put(Keys.LINKERD_INJECT, "disabled");
      return annotations;
    }
    var template = deployment.getSpec().getTemplate().getMetadata();
    annotations.putAll(meshAnnotations(template == null ? null : template.getAnnotations()));
    return annotations;
  }

  /** The Istio and Linkerd annotations among {@code annotations} (none: empty), in their order. */
  public static Map<String, String> meshAnnotations(Map<String, String> annotations) {
    Map<String, String> mesh = new LinkedHashMap<>();
    if (annotations != null) {
      annotations.forEach(
          (k, v) -> {
            if (MESH_PREFIXES.stream().anyMatch(k::startsWith)) {
              mesh.put(k, v);
            }
          });
    }
    return mesh;
  }

  private static ResourceRequirements copy(ResourceRequirements resources) {
    return resources == null
        ? null
        : new ResourceRequirementsBuilder(resources)
            .withLimits(copy(resources.getLimits()))
            .withRequests(copy(resources.getRequests()))
            .build();
  }

  /** A deep copy: fabric8 builders copy nested objects but share the values of Quantity maps. */
  private static Volume copy(Volume volume) {
    Volume copy = new VolumeBuilder(volume).build();
    var claim = copy.getEphemeral() == null ? null : copy.getEphemeral().getVolumeClaimTemplate();
    if (claim != null && claim.getSpec() != null && claim.getSpec().getResources() != null) {
      var resources = claim.getSpec().getResources();
      resources.setLimits(copy(resources.getLimits()));
      resources.setRequests(copy(resources.getRequests()));
    }
    return copy;
  }

  private static Map<String, Quantity> copy(Map<String, Quantity> quantities) {
    if (quantities == null) {
      return null;
    }
    Map<String, Quantity> copy = new LinkedHashMap<>();
    quantities.forEach(
        (key, q) -> copy.put(key, q == null ? null : new Quantity(q.getAmount(), q.getFormat())));
    return copy;
  }
}
