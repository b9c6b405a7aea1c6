package dev.openfga.operator.kube;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.module.blackbird.BlackbirdModule;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The operator's Kubernetes client: fabric8's, with a serialization that reads only what the
 * operator uses (docs/performance.md, "Changes and their effect").
 *
 * <ul>
 *   <li>{@code metadata.managedFields} is skipped while a response is read, never built: with the
 *       last-applied annotation it is most of a Deployment as objects, and the operator never reads
 *       it. Its caches, its Events and its patches never carry it.
 *   <li>A Job's pod template ({@code spec.template}) is skipped while a Job is read: the operator
 *       builds it, sends it once and never reads it back (its decisions read a Job's labels,
 *       annotations, owner and status). It is most of a Job, and a migration's Job is read four
 *       times or more (the create's answer, its watch events). {@code migration.FailureEvidence}
 *       masks credentials with the failed pod's own containers, or reads the Job whole when it has
 *       no pod.
 *   <li>A Pod is read without its spec and its status's conditions and container statuses (the
 *       operator watches the migration pods only to know whether one has stopped: its labels, owner
 *       and phase). {@code migration.FailureEvidence} reads a failed pod whole, through a client of
 *       its own ({@link #create(Config, boolean)}).
 *   <li>The kinds the operator reads are registered by hand instead of fabric8 loading every model
 *       class on the class path to learn their kinds, which would load model classes the operator
 *       never uses (docs/performance.md, "Rounds 1 and 2", change 5).
 *   <li>Reads ask for gzip ({@link GzipResponses}): a large list crosses TLS compressed.
 *   <li>A property's deserializer is built when a value of it is first read ({@link
 *       LazyDeserializers}), not the whole model graph with the first Deployment.
 * </ul>
 */
public final class OperatorClient {

  /**
   * Every built-in kind the operator (and JOSDK for it) reads from the API; the controllers' custom
   * resources are added by whoever wires them ({@link #create(Config, List)}).
   */
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

  /** Objects per page of an informer's list (docs/performance.md). */
  public static final long LIST_PAGE_SIZE = 100;

  private OperatorClient() {}

  /**
   * Test-only system property: {@code -Dopenfga.operator.test.haltAfterWrites=k} halts the process
   * (exit 137, as after {@code kill -9}) right after the API server accepted its k-th write, so the
   * real-cluster tests can crash the operator at every write point of a sequence.
   */
  public static final String HALT_AFTER_WRITES = "openfga.operator.test.haltAfterWrites";

  /** A client for the cluster {@code config} describes. */
  public static KubernetesClient create(Config config) {
    return create(config, false, List.of());
  }

  /** The same, that also reads these custom resources (the controllers' kinds). */
  public static KubernetesClient create(
      Config config, List<Class<? extends KubernetesResource>> customKinds) {
    return create(config, false, customKinds);
  }

  /** The same; {@code wholePods}: Pods are read whole (the failure evidence). */
  public static KubernetesClient create(Config config, boolean wholePods) {
    return create(config, wholePods, List.of());
  }

  private static KubernetesClient create(
      Config config, boolean wholePods, List<Class<? extends KubernetesResource>> customKinds) {
    KubernetesClientBuilder builder =
        new KubernetesClientBuilder()
            .withConfig(config)
            .withKubernetesSerialization(serialization(new ObjectMapper(), wholePods, customKinds));
    Integer haltAfter = Integer.getInteger(HALT_AFTER_WRITES);
    builder.withHttpClientBuilderConsumer(
        http -> {
          http.addOrReplaceInterceptor(GzipResponses.NAME, new GzipResponses());
          if (haltAfter != null) {
            http.addOrReplaceInterceptor(HALT_AFTER_WRITES, new HaltAfterWrites(haltAfter));
          }
        });
    return builder.build();
  }

  /** Counts the writes the API server accepted; halts the JVM right after the k-th. */
  private static final class HaltAfterWrites implements Interceptor {
    private final int haltAfter;
    private final AtomicInteger writes = new AtomicInteger();

    HaltAfterWrites(int haltAfter) {
      this.haltAfter = haltAfter;
    }

    @Override
    public void after(
        HttpRequest request, HttpResponse<?> response, AsyncBody.Consumer<List<ByteBuffer>> body) {
      if (!"GET".equals(request.method()) && response.isSuccessful()) {
        int write = writes.incrementAndGet();
        System.err.println("write " + write + ": " + request.method() + " " + request.uri());
        if (write == haltAfter) {
          System.err.println("halting after write " + write);
          Runtime.getRuntime().halt(137);
        }
      }
    }
  }

  /**
   * A client configured from the environment (in-cluster, kubeconfig), as fabric8 does, that also
   * reads these custom resources.
   */
  public static KubernetesClient create(List<Class<? extends KubernetesResource>> customKinds) {
    return create(Config.autoConfigure(null), customKinds);
  }

  /** The operator's serialization: without managedFields, with only its own kinds. */
  public static KubernetesSerialization serialization() {
    return serialization(new ObjectMapper());
  }

  /** The same on {@code mapper} (a test looks at the deserializers it builds). */
  static KubernetesSerialization serialization(ObjectMapper mapper) {
    return serialization(mapper, false, List.of());
  }

  private static KubernetesSerialization serialization(
      ObjectMapper mapper,
      boolean wholePods,
      List<Class<? extends KubernetesResource>> customKinds) {
    mapper.addMixIn(ObjectMeta.class, WithoutManagedFields.class);
    mapper.addMixIn(JobSpec.class, JobSpecReadWithoutPodTemplate.class);
    if (!wholePods) {
      mapper.addMixIn(Pod.class, PodReadWithoutSpec.class);
      mapper.addMixIn(PodStatus.class, PodStatusReadWithoutContainers.class);
    }
    mapper.registerModule(LazyDeserializers.module());
    KubernetesSerialization serialization = new KubernetesSerialization(mapper, false);
    // Properties set and read through generated lambdas, not reflection (WarmUp generates the
    // create path's at start). Registered after fabric8's modules: Jackson runs the deserializer
    // modifier registered last first, and Blackbird replaces only plain method and field
    // properties, not the delegating ones fabric8 wraps them in (it would then set every property
    // of a model object through Method.invoke).
    mapper.registerModule(new BlackbirdModule());
    KINDS.forEach(serialization::registerKubernetesResource);
    customKinds.forEach(serialization::registerKubernetesResource);
    return serialization;
  }

  /** Mixed into {@link ObjectMeta}: {@code managedFields} is skipped when read, never written. */
  @JsonIgnoreProperties(
      value = {"managedFields"},
      ignoreUnknown = true)
  private abstract static class WithoutManagedFields {}

  /** Mixed into {@link Pod}: the spec is skipped when a pod is read (written as always). */
  @JsonIgnoreProperties(
      value = {"spec"},
      allowGetters = true)
  private abstract static class PodReadWithoutSpec {}

  /**
   * Mixed into {@link PodStatus}: what a pod's status says of its containers is skipped when read
   * (written as always); the phase and the rest are kept.
   */
  @JsonIgnoreProperties(
      value = {
        "conditions",
        "containerStatuses",
        "initContainerStatuses",
        "ephemeralContainerStatuses",
        "resourceClaimStatuses"
      },
      allowGetters = true)
  private abstract static class PodStatusReadWithoutContainers {}

  /**
   * Mixed into {@link JobSpec}: the pod template is skipped when a Job is read, and written as
   * always when one is created.
   */
  @JsonIgnoreProperties(
      value = {"template"},
      allowGetters = true)
  private abstract static class JobSpecReadWithoutPodTemplate {}
}
