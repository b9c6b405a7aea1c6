package dev.openfga.operator.chart;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRule;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRuleBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReviewBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A fabric8 mock API server (CRUD mode) that records every request the operator's client makes —
 * told apart by its User-Agent — and answers JOSDK's SelfSubjectRulesReview with the rules the
 * chart grants. A small Job controller completes or fails the operator's Jobs as the test says,
 * leaving a pod behind as the real one does.
 */
final class RecordingCluster implements AutoCloseable {
  static final String OPERATOR_AGENT = "openfga-operator-under-test";

  private final Dispatcher dispatcher;
  private final KubernetesMockServer server;
  private final KubernetesClient harness;
  private final List<KubernetesClient> clients = new ArrayList<>();
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final Set<String> seen = ConcurrentHashMap.newKeySet();
  private final AtomicInteger pods = new AtomicInteger();
  private volatile Predicate<Job> succeeds = job -> true;
  private SharedIndexInformer<Job> jobInformer;

  RecordingCluster(RbacRules rules) {
    dispatcher = new Dispatcher(rules);
    server =
        new KubernetesMockServer(
            new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
    server.init();
    harness = server.createClient();
  }

  /** The test's own client: its requests are not recorded. */
  KubernetesClient harness() {
    return harness;
  }

  /** A client whose every request is recorded. */
  KubernetesClient operatorClient() {
    KubernetesClient client =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(harness.getConfiguration()).withUserAgent(OPERATOR_AGENT).build())
            .build();
    clients.add(client);
    return client;
  }

  /** Resource calls the operator made, in order. */
  List<ApiCall> calls() {
    return List.copyOf(dispatcher.calls);
  }

  /** Non-resource paths the operator requested (discovery, version). */
  List<String> nonResourceCalls() {
    return List.copyOf(dispatcher.nonResource);
  }

  /** Completes or fails each operator Job a moment after it is created. */
  void runJobs(Predicate<Job> succeeds) {
    this.succeeds = succeeds;
    jobInformer =
        harness
            .batch()
            .v1()
            .jobs()
            .inAnyNamespace()
            .withLabel("app.kubernetes.io/managed-by", "openfga-operator")
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(Job job) {
                    play(job);
                  }

                  /** A Job replaced under the same name may arrive as an update. */
                  @Override
                  public void onUpdate(Job oldJob, Job newJob) {
                    play(newJob);
                  }

                  @Override
                  public void onDelete(Job job, boolean unknown) {}
                });
  }

  private void play(Job job) {
    if (seen.add(job.getMetadata().getUid())) {
      boolean success = succeeds.test(job);
      timer.schedule(() -> finish(job, success), 200, TimeUnit.MILLISECONDS);
    }
  }

  private void finish(Job job, boolean success) {
    Job current =
        harness
            .batch()
            .v1()
            .jobs()
            .inNamespace(job.getMetadata().getNamespace())
            .withName(job.getMetadata().getName())
            .get();
    if (current == null || !current.getMetadata().getUid().equals(job.getMetadata().getUid())) {
      return;
    }
    String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    createPod(current, success, now);
    String type = success ? "Complete" : "Failed";
    var status = new JobStatusBuilder().withActive(0).withReady(0).withStartTime(now);
    if (success) {
      status.withSucceeded(1).withCompletionTime(now);
    } else {
      status.withFailed(1);
    }
    status.addToConditions(
        new JobConditionBuilder()
            .withType(success ? "SuccessCriteriaMet" : "FailureTarget")
            .withStatus("True")
            .withReason(success ? null : "BackoffLimitExceeded")
            .withLastTransitionTime(now)
            .build(),
        new JobConditionBuilder()
            .withType(type)
            .withStatus("True")
            .withReason(success ? null : "BackoffLimitExceeded")
            .withLastTransitionTime(now)
            .build());
    current.setStatus(status.build());
    harness
        .batch()
        .v1()
        .jobs()
        .inNamespace(job.getMetadata().getNamespace())
        .resource(current)
        .updateStatus();
  }

  /** The Job's pod, as the Job controller labels it, ended as the Job did. */
  private void createPod(Job job, boolean success, String now) {
    String uid = job.getMetadata().getUid();
    String name = job.getMetadata().getName();
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName(name + "-" + pods.incrementAndGet())
            .withNamespace(job.getMetadata().getNamespace())
            .withCreationTimestamp(now)
            .addToLabels("batch.kubernetes.io/controller-uid", uid)
            .addToLabels("controller-uid", uid)
            .addToLabels("batch.kubernetes.io/job-name", name)
            .addToLabels("job-name", name)
            .addNewOwnerReference()
            .withApiVersion("batch/v1")
            .withKind("Job")
            .withName(name)
            .withUid(uid)
            .withController(true)
            .endOwnerReference()
            .endMetadata()
            .withSpec(job.getSpec().getTemplate().getSpec())
            .withNewStatus()
            .withPhase(success ? "Succeeded" : "Failed")
            .addNewContainerStatus()
            .withName(job.getSpec().getTemplate().getSpec().getContainers().get(0).getName())
            .withNewState()
            .withNewTerminated()
            .withExitCode(success ? 0 : 1)
            .withReason(success ? "Completed" : "Error")
            .endTerminated()
            .endState()
            .endContainerStatus()
            .endStatus()
            .build();
    harness.pods().inNamespace(job.getMetadata().getNamespace()).resource(pod).create();
  }

  boolean recorded(Predicate<ApiCall> call) {
    return dispatcher.calls.stream().anyMatch(call);
  }

  @Override
  public void close() {
    if (jobInformer != null) {
      jobInformer.close();
    }
    timer.shutdownNow();
    clients.forEach(KubernetesClient::close);
    harness.close();
    server.destroy();
  }

  private static final class Dispatcher extends KubernetesCrudDispatcher {
    private final RbacRules rules;
    private final List<ApiCall> calls = new CopyOnWriteArrayList<>();
    private final List<String> nonResource = new CopyOnWriteArrayList<>();

    Dispatcher(RbacRules rules) {
      super(List.of());
      this.rules = rules;
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      if (OPERATOR_AGENT.equals(request.getHeader("User-Agent"))) {
        ApiCall.of(request.getMethod(), request.getPath())
            .ifPresentOrElse(
                call -> {
                  // asking what it may do needs no permission
                  if (!call.resource().equals("selfsubjectrulesreviews")) {
                    calls.add(call);
                  }
                },
                () -> nonResource.add(request.getMethod() + " " + request.getPath()));
      }
      return super.dispatch(request);
    }

    /**
     * JOSDK asks, before leader election, whether Leases may be used: answer with what the chart
     * grants in that namespace (the mock would reject the request).
     */
    @Override
    public MockResponse handleCreate(RecordedRequest request) {
      if (!request.getPath().contains("/selfsubjectrulesreviews")) {
        return super.handleCreate(request);
      }
      SelfSubjectRulesReview asked =
          Serialization.unmarshal(request.getUtf8Body(), SelfSubjectRulesReview.class);
      String namespace = asked.getSpec().getNamespace();
      List<ResourceRule> granted =
          rules.rulesIn(namespace).stream()
              .map(
                  r ->
                      new ResourceRuleBuilder()
                          .withApiGroups(r.getApiGroups())
                          .withResources(r.getResources())
                          .withVerbs(r.getVerbs())
                          .withResourceNames(r.getResourceNames())
                          .build())
              .toList();
      var review =
          new SelfSubjectRulesReviewBuilder(asked)
              .withNewStatus()
              .withIncomplete(false)
              .withResourceRules(granted)
              .endStatus()
              .build();
      return new MockResponse().setResponseCode(201).setBody(Serialization.asJson(review));
    }
  }
}
