package dev.openfga.operator.chart;

import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRuleBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The project's mock cluster ({@link MockCluster}) seen from the chart's side: every request the
 * operator's client makes — told apart by its User-Agent — as an {@link ApiCall}, and JOSDK's
 * SelfSubjectRulesReview answered with the rules the chart grants.
 */
final class RecordingCluster implements AutoCloseable {
  private final MockCluster cluster = new MockCluster();

  RecordingCluster(RbacRules rules) {
    cluster.answerRulesReviews(
        namespace ->
            rules.rulesIn(namespace).stream()
                .map(
                    r ->
                        new ResourceRuleBuilder()
                            .withApiGroups(r.getApiGroups())
                            .withResources(r.getResources())
                            .withVerbs(r.getVerbs())
                            .withResourceNames(r.getResourceNames())
                            .build())
                .toList());
  }

  /** The test's own client: its requests are not counted as the operator's. */
  KubernetesClient harness() {
    return cluster.client();
  }

  /** A client whose every request is counted as the operator's. */
  KubernetesClient operatorClient() {
    return cluster.operatorClient();
  }

  /** Resource calls the operator made, in order (asking what it may do needs no permission). */
  List<ApiCall> calls() {
    return operatorRequests()
        .map(r -> ApiCall.of(r.method(), r.path()))
        .flatMap(Optional::stream)
        .filter(call -> !call.resource().equals("selfsubjectrulesreviews"))
        .toList();
  }

  /** Non-resource paths the operator requested (discovery, version). */
  List<String> nonResourceCalls() {
    return operatorRequests()
        .filter(r -> ApiCall.of(r.method(), r.path()).isEmpty())
        .map(r -> r.method() + " " + r.path())
        .toList();
  }

  private java.util.stream.Stream<MockCluster.ApiRequest> operatorRequests() {
    return cluster.requests().stream()
        .filter(r -> MockCluster.OPERATOR_AGENT.equals(r.userAgent()));
  }

  /** Runs each operator Job as {@code script} says; other Jobs stay as they are. */
  void runJobs(java.util.function.Function<Job, Script> script) {
    cluster
        .jobs()
        .script(
            job -> {
              var labels = job.getMetadata().getLabels();
              if (labels == null || !Keys.MANAGED_BY_OPERATOR.equals(labels.get(Keys.MANAGED_BY))) {
                return Script.MANUAL;
              }
              return script.apply(job);
            });
  }

  /** A Job the operator does not own, in the test namespace. */
  Job createForeignJob(String name) {
    return cluster.createForeignJob(name);
  }

  /**
   * The API server answers the next {@code times} requests whose path ends so with {@code code}.
   */
  void failNextAt(String method, String pathEnd, int code, int times) {
    cluster.failNextAt(method, pathEnd, code, times);
  }

  boolean recorded(Predicate<ApiCall> call) {
    return calls().stream().anyMatch(call);
  }

  @Override
  public void close() {
    cluster.close();
  }
}
