package dev.openfga.operator.controller;

import dev.openfga.operator.model.Database;
import dev.openfga.operator.model.DeploymentSettings;
import dev.openfga.operator.model.Keys;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentSpec;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The Deployment informer's store: keeps a skeleton of each Deployment, only what the decision
 * reads, so that the cache costs a fraction of the full objects (docs/performance.md).
 *
 * <p>Kept: the metadata (name, namespace, uid, resourceVersion, labels, annotations, owner
 * references, ...) without {@code managedFields} and without the annotation {@code
 * kubectl.kubernetes.io/last-applied-configuration} (a second copy of the whole object); {@code
 * spec.replicas}; of the pod template, each container's name, and of the container the Job is built
 * from also its image, its {@code OPENFGA_DATASTORE_ENGINE} variable and its last {@code
 * OPENFGA_DATASTORE_URI} (a literal one without user, password and query: what names the database);
 * the init containers' names, images and arguments; the whole status. Everything else — the rest of
 * the pod template above all — is dropped. {@link dev.openfga.operator.model.Planner} decides from
 * the skeleton; the Job itself is built from the full Deployment, which {@link MigrationReconciler}
 * reads once, directly, before it creates a Job. A field the planner starts to read must be kept
 * here too ({@code TrimmingDeploymentStoreTest} checks that the decision from a skeleton equals the
 * decision from the full object).
 *
 * <p>The object is trimmed in place when the informer stores it, before it is handed to the event
 * handlers: nothing else holds it yet. Event handlers and reconciles see the skeleton.
 *
 * <p>One instance serves one informer: JOSDK hands the same store to every namespace's informer
 * when several namespaces are watched, and an informer's relist removes whatever else is in its
 * store. {@link MigrationOperator} therefore uses it only with a single informer (one namespace or
 * all namespaces).
 */
final class TrimmingDeploymentStore implements ItemStore<Deployment> {
  static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

  private final BasicItemStore<Deployment> store =
      new BasicItemStore<>(Cache::metaNamespaceKeyFunc);

  @Override
  public String getKey(Deployment obj) {
    return store.getKey(obj);
  }

  @Override
  public Deployment put(String key, Deployment obj) {
    return store.put(key, trim(obj));
  }

  @Override
  public Deployment remove(String key) {
    return store.remove(key);
  }

  @Override
  public Stream<String> keySet() {
    return store.keySet();
  }

  @Override
  public Stream<Deployment> values() {
    return store.values();
  }

  @Override
  public int size() {
    return store.size();
  }

  @Override
  public Deployment get(String key) {
    return store.get(key);
  }

  private static EnvVar withoutCredentials(EnvVar uri) {
    if (uri.getValueFrom() != null || uri.getValue() == null) {
      return uri;
    }
    return new EnvVar(uri.getName(), Database.withoutCredentials(uri.getValue()), null);
  }

  /** Reduces {@code d}, in place, to what the decision reads; returns the same object. */
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
    PodSpec pod = spec.getTemplate() == null ? null : spec.getTemplate().getSpec();
    if (pod != null && pod.getContainers() != null) {
      // the container the Job is built from (when the annotation is unusable the planner stops
      // before it looks at containers)
      String selected = DeploymentSettings.of(d).containerName();
      List<Container> containers = new ArrayList<>(pod.getContainers().size());
      for (Container c : pod.getContainers()) {
        Container skeleton = new Container();
        skeleton.setName(c.getName());
        if (selected == null || selected.equals(c.getName())) {
          skeleton.setImage(c.getImage());
          if (c.getEnv() != null) {
            List<EnvVar> keptEnv = new ArrayList<>(2);
            c.getEnv().stream()
                .filter(e -> Keys.ENGINE_ENV.equals(e.getName()))
                .findFirst()
                .ifPresent(keptEnv::add);
            // the database the Job would migrate (one migration per database), without the
            // credentials of a literal URI: the cache never holds a password
            c.getEnv().stream()
                .filter(e -> Keys.URI_ENV.equals(e.getName()))
                .reduce((first, last) -> last)
                .map(TrimmingDeploymentStore::withoutCredentials)
                .ifPresent(keptEnv::add);
            if (!keptEnv.isEmpty()) {
              skeleton.setEnv(keptEnv);
            }
          }
        }
        containers.add(skeleton);
      }
      PodSpec keptPod = new PodSpec();
      keptPod.setContainers(containers);
      if (pod.getInitContainers() != null && !pod.getInitContainers().isEmpty()) {
        // a sqlite datastore needs an initContainer that runs openfga migrate (image and args)
        List<Container> inits = new ArrayList<>(pod.getInitContainers().size());
        for (Container c : pod.getInitContainers()) {
          Container skeleton = new Container();
          skeleton.setName(c.getName());
          skeleton.setImage(c.getImage());
          skeleton.setArgs(c.getArgs());
          inits.add(skeleton);
        }
        keptPod.setInitContainers(inits);
      }
      PodTemplateSpec template = new PodTemplateSpec();
      template.setSpec(keptPod);
      kept.setTemplate(template);
    }
    d.setSpec(kept);
    return d;
  }
}
