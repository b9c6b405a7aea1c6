package dev.openfga.operator.controller;

import dev.openfga.operator.model.DeploymentSettings;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The Deployment informer's store: keeps each Deployment without the parts the operator never
 * reads, so the cache costs a fraction of the full objects (docs/performance.md).
 *
 * <p>Dropped: {@code metadata.managedFields}; the annotation {@code
 * kubectl.kubernetes.io/last-applied-configuration} (a second copy of the whole object); the pod
 * template's annotations; init and ephemeral containers; of every container other than the one the
 * Job is built from, everything but its name; of that one, its ports, probes, lifecycle, command
 * and args. Kept: everything {@link dev.openfga.operator.model.Planner} and {@link
 * dev.openfga.operator.model.MigrationJob} read — metadata (labels, other annotations, uid,
 * resourceVersion, owner references), {@code spec.replicas}, the selected container's name, image,
 * pull policy, env, volume mounts, resources and security context, the names of the others, the
 * pod's volumes, security context, service account, image pull secrets, node selector, tolerations
 * and affinity, and the whole status. A field the operator starts to read must be kept here too
 * ({@code TrimmingDeploymentStoreTest} lists them).
 *
 * <p>The object is trimmed in place when the informer stores it, before it is handed to the event
 * handlers: nothing else holds it yet. Event handlers and reconciles see the trimmed object.
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

  /** Removes, in place, what the operator never reads; returns the same object. */
  static Deployment trim(Deployment d) {
    ObjectMeta meta = d.getMetadata();
    if (meta != null) {
      meta.setManagedFields(null);
      Map<String, String> annotations = meta.getAnnotations();
      if (annotations != null) {
        // the map stays (possibly empty): a patch that adds an annotation to a missing map would
        // replace the whole map on the server
        annotations.remove(LAST_APPLIED);
      }
    }
    if (d.getSpec() == null || d.getSpec().getTemplate() == null) {
      return d;
    }
    PodTemplateSpec template = d.getSpec().getTemplate();
    if (template.getMetadata() != null) {
      template.getMetadata().setAnnotations(null);
      template.getMetadata().setManagedFields(null);
    }
    PodSpec pod = template.getSpec();
    if (pod == null) {
      return d;
    }
    pod.setInitContainers(null);
    pod.setEphemeralContainers(null);
    // the container the Job is built from; when the annotation is unusable the planner stops
    // before it looks at containers, and nothing is trimmed from them
    String selected = DeploymentSettings.of(d).containerName();
    if (selected == null || pod.getContainers() == null) {
      return d;
    }
    List<Container> containers = new ArrayList<>(pod.getContainers().size());
    for (Container c : pod.getContainers()) {
      if (selected.equals(c.getName())) {
        c.setPorts(null);
        c.setReadinessProbe(null);
        c.setLivenessProbe(null);
        c.setStartupProbe(null);
        c.setLifecycle(null);
        c.setCommand(null);
        c.setArgs(null);
        containers.add(c);
      } else {
        Container nameOnly = new Container();
        nameOnly.setName(c.getName());
        containers.add(nameOnly);
      }
    }
    pod.setContainers(containers);
    return d;
  }
}
