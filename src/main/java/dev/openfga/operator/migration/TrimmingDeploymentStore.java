package dev.openfga.operator.migration;

import dev.openfga.operator.kube.CompactingStore;
import dev.openfga.operator.kube.Compaction;
import dev.openfga.operator.migration.rules.DeploymentSettings;
import dev.openfga.operator.migration.rules.MigrationEnv;
import dev.openfga.operator.migration.rules.MigrationJob;
import dev.openfga.operator.migration.rules.MigrationPod;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Deployment informer's store: keeps a skeleton of each Deployment, what the decision and the
 * Job builder read, so that the cache costs a fraction of the full objects and a Job is created
 * without reading anything first (docs/performance.md, ADR 0016).
 *
 * <p>Kept: the metadata (name, namespace, uid, resourceVersion, labels, annotations, owner
 * references, ...) without {@code managedFields} and without the annotation {@code
 * kubectl.kubernetes.io/last-applied-configuration} (a second copy of the whole object); {@code
 * spec.replicas}; the pod template's Istio and Linkerd annotations; each container's name; of the
 * container the Job is built from what the Job copies: image, pull policy, the environment {@code
 * openfga migrate} reads ({@link MigrationEnv.filterEnv}), mounts, resources, security context; the
 * sidecars named by {@code openfga.dev/migration-sidecars} whole; the init containers' names,
 * images and arguments; the volumes those containers mount; the pod's service account, image pull
 * secrets, security context and scheduling; the whole status. Everything else — probes, ports,
 * commands, the other containers, the server-only environment — is dropped. {@link
 * dev.openfga.operator.migration.rules.Planner} decides from the skeleton and {@link
 * MigrationJob#build} builds the Job from it. A field either starts to read must be kept here too
 * ({@code TrimmingDeploymentStoreTest} checks that the decision and the Job from a skeleton equal
 * those from the full object).
 *
 * <p>The object is trimmed in place, then compacted ({@link Compaction}: shared empty lists and
 * maps), when the informer stores it, before it is handed to the event handlers: nothing else holds
 * it yet. Event handlers and reconciles see the skeleton.
 *
 * <p>One instance serves one informer ({@link CompactingStore}).
 */
public final class TrimmingDeploymentStore extends CompactingStore<Deployment> {
  static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

  public TrimmingDeploymentStore() {
    super(TrimmingDeploymentStore::trim);
  }

  /** Reduces {@code d}, in place, to what the decision and the Job builder read; returns it. */
  static Deployment trim(Deployment d) {
    ObjectMeta meta = d.getMetadata();
    if (meta != null) {
      // OperatorClient never builds managedFields; this covers a client without its mix-in
      meta.setManagedFields(null);
      Map<String, String> annotations = meta.getAnnotations();
      if (annotations != null) {
        // the map stays (possibly empty): a patch that adds an annotation to a missing map would
        // replace the whole map on the server
        annotations.remove(LAST_APPLIED);
      }
    }
    DeploymentSpec spec = d.getSpec();
    if (spec == null) {
      return d;
    }
    DeploymentSpec kept = new DeploymentSpec();
    kept.setReplicas(spec.getReplicas());
    PodTemplateSpec template = spec.getTemplate();
    PodSpec pod = template == null ? null : template.getSpec();
    if (pod != null) {
      DeploymentSettings settings = DeploymentSettings.of(d);
      PodTemplateSpec keptTemplate = new PodTemplateSpec();
      keptTemplate.setMetadata(meshAnnotations(template.getMetadata()));
      keptTemplate.setSpec(trim(pod, settings.containerName(), settings.sidecars()));
      kept.setTemplate(keptTemplate);
    }
    d.setSpec(kept);
    return d;
  }

  /**
   * Of the pod: each container's name; the selected container as the Job copies it; the named
   * sidecars whole; the init containers' names, images and arguments; the volumes those containers
   * mount; the pod-level fields the Job copies.
   */
  private static PodSpec trim(PodSpec pod, String selected, List<String> sidecars) {
    Set<String> mounted = new HashSet<>();
    PodSpec kept = new PodSpec();
    if (pod.getContainers() != null) {
      List<Container> containers = new ArrayList<>(pod.getContainers().size());
      for (Container c : pod.getContainers()) {
        Container skeleton;
        if (sidecars.contains(c.getName())) {
          skeleton = c;
        } else if (selected == null || selected.equals(c.getName())) {
          // when the annotation is unusable the planner stops before it looks at containers
          skeleton = asMigrated(c);
        } else {
          skeleton = new Container();
          skeleton.setName(c.getName());
        }
        mountsOf(skeleton, mounted);
        containers.add(skeleton);
      }
      kept.setContainers(containers);
    }
    if (pod.getInitContainers() != null && !pod.getInitContainers().isEmpty()) {
      // a sqlite datastore needs an initContainer that runs openfga migrate (image and args);
      // a native sidecar named for the Job is copied whole
      List<Container> inits = new ArrayList<>(pod.getInitContainers().size());
      for (Container c : pod.getInitContainers()) {
        Container skeleton = c;
        if (!sidecars.contains(c.getName())) {
          skeleton = new Container();
          skeleton.setName(c.getName());
          skeleton.setImage(c.getImage());
          skeleton.setArgs(c.getArgs());
        }
        mountsOf(skeleton, mounted);
        inits.add(skeleton);
      }
      kept.setInitContainers(inits);
    }
    if (pod.getVolumes() != null && !mounted.isEmpty()) {
      kept.setVolumes(
          pod.getVolumes().stream().filter(v -> mounted.contains(v.getName())).toList());
    }
    kept.setServiceAccountName(pod.getServiceAccountName());
    kept.setAutomountServiceAccountToken(pod.getAutomountServiceAccountToken());
    kept.setImagePullSecrets(pod.getImagePullSecrets());
    kept.setSecurityContext(pod.getSecurityContext());
    kept.setNodeSelector(pod.getNodeSelector());
    kept.setTolerations(pod.getTolerations());
    kept.setAffinity(pod.getAffinity());
    return kept;
  }

  /**
   * The container as the Job copies it: name, image, pull policy, the environment {@code openfga
   * migrate} reads (a literal URI with its credentials: the Job must carry it, as the Job cache
   * does), mounts, resources and security context.
   */
  private static Container asMigrated(Container c) {
    Container kept = new Container();
    kept.setName(c.getName());
    kept.setImage(c.getImage());
    kept.setImagePullPolicy(c.getImagePullPolicy());
    if (c.getEnv() != null) {
      kept.setEnv(MigrationEnv.filterEnv(c.getEnv()));
    }
    kept.setVolumeMounts(c.getVolumeMounts());
    kept.setResources(c.getResources());
    kept.setSecurityContext(c.getSecurityContext());
    return kept;
  }

  /** The pod template's Istio and Linkerd annotations (copied with migration-mesh "true"). */
  private static ObjectMeta meshAnnotations(ObjectMeta template) {
    Map<String, String> mesh =
        MigrationPod.meshAnnotations(template == null ? null : template.getAnnotations());
    if (mesh.isEmpty()) {
      return null;
    }
    ObjectMeta kept = new ObjectMeta();
    kept.setAnnotations(mesh);
    return kept;
  }

  private static void mountsOf(Container c, Set<String> mounted) {
    if (c.getVolumeMounts() != null) {
      c.getVolumeMounts().forEach(m -> mounted.add(m.getName()));
    }
  }
}
