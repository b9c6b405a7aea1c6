package dev.openfga.operator.status;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.migration.rules.DeploymentSettings;
import dev.openfga.operator.migration.rules.Keys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads what the status view needs, with plain GET and LIST requests (read-only, like {@code
 * kubectl get}): the Deployments with the discovery labels; for each opted-in one the objects named
 * like its status ConfigMap and its migration Job; the Events (in pages, keeping those about
 * Deployments and Jobs), the operator's Jobs and the migration pods of its namespace, one list each
 * per namespace (field selectors on {@code involvedObject} are left out, so the view filters).
 */
public final class StatusReader {
  private StatusReader() {}

  /** Events per page: a namespace may hold many thousands. */
  private static final long PAGE = 500;

  /**
   * @param namespace the namespace to read, or empty for all namespaces
   * @throws io.fabric8.kubernetes.client.KubernetesClientException when a request fails
   */
  public static List<StatusView.Observed> read(
      KubernetesClient client, Optional<String> namespace) {
    var deployments = client.apps().deployments();
    var selected =
        namespace.isPresent()
            ? deployments.inNamespace(namespace.get())
            : deployments.inAnyNamespace();
    List<Deployment> found =
        selected
            .withLabel(Keys.PART_OF, Keys.PART_OF_OPENFGA)
            .withLabel(Keys.COMPONENT, Keys.COMPONENT_SERVER)
            .list()
            .getItems();
    Map<String, List<Event>> events = new HashMap<>();
    Map<String, List<Job>> jobs = new HashMap<>();
    Map<String, List<Pod>> pods = new HashMap<>();
    List<StatusView.Observed> observed = new ArrayList<>();
    for (Deployment d : found) {
      if (!DeploymentSettings.isDiscovered(d) || !DeploymentSettings.of(d).optedIn()) {
        continue;
      }
      String ns = d.getMetadata().getNamespace();
      String name = d.getMetadata().getName();
      ConfigMap configMap =
          client.configMaps().inNamespace(ns).withName(Names.statusConfigMap(name)).get();
      Job job = client.batch().v1().jobs().inNamespace(ns).withName(Names.job(name)).get();
      List<Event> inNamespace = events.computeIfAbsent(ns, n -> deploymentAndJobEvents(client, n));
      List<Job> owned =
          jobs.computeIfAbsent(
              ns,
              n ->
                  client
                      .batch()
                      .v1()
                      .jobs()
                      .inNamespace(n)
                      .withLabel(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR)
                      .list()
                      .getItems());
      List<Pod> migrationPods = pods.computeIfAbsent(ns, n -> migrationPods(client, n));
      observed.add(
          new StatusView.Observed(
              d,
              Optional.ofNullable(configMap),
              Optional.ofNullable(job),
              inNamespace,
              owned,
              migrationPods));
    }
    return observed;
  }

  /**
   * The migration pods of {@code namespace}; none when the reader may not list pods (a person's
   * role often may not): a pod whose Job was deleted then goes unseen, and a Deployment waiting for
   * it shows as migrating.
   */
  static List<Pod> migrationPods(KubernetesClient client, String namespace) {
    try {
      return client.pods().inNamespace(namespace).withLabel(Keys.DATABASE_LABEL).list().getItems();
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      if (e.getCode() == 403) {
        return List.of();
      }
      throw e;
    }
  }

  /** The Events of {@code namespace} about Deployments and Jobs, read in pages of {@value PAGE}. */
  static List<Event> deploymentAndJobEvents(KubernetesClient client, String namespace) {
    List<Event> kept = new ArrayList<>();
    String next = null;
    do {
      EventList page =
          client
              .v1()
              .events()
              .inNamespace(namespace)
              .list(new ListOptionsBuilder().withLimit(PAGE).withContinue(next).build());
      for (Event e : page.getItems()) {
        String kind = e.getInvolvedObject() == null ? null : e.getInvolvedObject().getKind();
        if ("Deployment".equals(kind) || "Job".equals(kind)) {
          kept.add(e);
        }
      }
      next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (next != null && !next.isEmpty());
    return kept;
  }
}
