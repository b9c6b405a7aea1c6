package dev.openfga.operator.controller;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;

/**
 * The operator's Kubernetes client: fabric8's, with a serialization that reads only what the
 * operator uses (docs/performance.md, "Changes and their effect").
 *
 * <ul>
 *   <li>{@code metadata.managedFields} is skipped while a response is read, never built: with the
 *       last-applied annotation it is 70 % of a Deployment as objects, and the operator never reads
 *       it. Its caches, its Events and its patches never carry it.
 *   <li>The kinds the operator reads are registered by hand instead of fabric8 loading every model
 *       class on the class path to learn their kinds (model classes loaded: 972 → 487).
 * </ul>
 */
public final class OperatorClient {

  /** Every kind the operator (and JOSDK for it) reads from the API. */
  static final List<Class<? extends KubernetesResource>> KINDS =
      List.of(
          Deployment.class,
          Job.class,
          ConfigMap.class,
          Pod.class,
          Event.class,
          Lease.class,
          SelfSubjectRulesReview.class,
          Status.class);

  private OperatorClient() {}

  /** A client for the cluster {@code config} describes. */
  public static KubernetesClient create(Config config) {
    return new KubernetesClientBuilder()
        .withConfig(config)
        .withKubernetesSerialization(serialization())
        .build();
  }

  /** A client configured from the environment (in-cluster, kubeconfig), as fabric8 does. */
  public static KubernetesClient create() {
    return create(Config.autoConfigure(null));
  }

  /** The operator's serialization: without managedFields, with only its own kinds. */
  public static KubernetesSerialization serialization() {
    ObjectMapper mapper = new ObjectMapper();
    mapper.addMixIn(ObjectMeta.class, WithoutManagedFields.class);
    KubernetesSerialization serialization = new KubernetesSerialization(mapper, false);
    KINDS.forEach(serialization::registerKubernetesResource);
    return serialization;
  }

  /** Mixed into {@link ObjectMeta}: {@code managedFields} is skipped when read, never written. */
  @JsonIgnoreProperties(
      value = {"managedFields"},
      ignoreUnknown = true)
  private abstract static class WithoutManagedFields {}
}
