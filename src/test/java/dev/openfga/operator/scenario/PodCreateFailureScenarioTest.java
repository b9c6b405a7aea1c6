package dev.openfga.operator.scenario;

import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.testing.FakeJobController;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Why a migration Job has no pod is asked of the Job controller's {@code FailedCreate} Events only
 * once the Job controller has looked at the Job and made no pod: an image change lists no Event,
 * and a refused pod is still reported with its reason. The operator's clock runs a minute ahead of
 * the API server's, so every Job is past the grace after its creation from the start.
 */
class PodCreateFailureScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  @RegisterExtension final MockCluster cluster = new MockCluster();
  private SimpleMeterRegistry registry;

  @BeforeEach
  void startCluster() {
    registry = new SimpleMeterRegistry();
  }

  private void startOperator() {
    cluster.startOperator(
        MockCluster.config(Duration.ofSeconds(2), 1),
        "operator-a",
        registry,
        Clock.offset(Clock.systemUTC(), Duration.ofMinutes(1)));
  }

  private void awaitRecorded(String version) {
    await()
        .atMost(WAIT)
        .until(() -> cluster.recordedVersion("openfga").orElse(""), v -> v.equals(version));
  }

  /** Reconciles the operator has finished (JOSDK's metrics). */
  private double reconciles() {
    return registry.find("operator.sdk.reconciliations.success").counters().stream()
        .mapToDouble(Counter::count)
        .sum();
  }

  /**
   * The Deployment's status written (as the Deployment controller does during a rollout), and the
   * reconcile it starts waited for.
   */
  private void wakeTheDeployment(int generation) {
    double before = reconciles();
    cluster
        .client()
        .apps()
        .deployments()
        .inNamespace(MockCluster.NS)
        .withName("openfga")
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"status\":{\"observedGeneration\":" + generation + "}}");
    await().atMost(WAIT).until(() -> reconciles() > before);
  }

  private List<MockCluster.ApiRequest> operatorEventReads(int from) {
    List<MockCluster.ApiRequest> all = cluster.requests();
    return all.subList(from, all.size()).stream()
        .filter(r -> MockCluster.OPERATOR_AGENT.equals(r.userAgent()))
        .filter(r -> r.method().equals("GET") && r.path().contains("/events"))
        .toList();
  }

  private Job awaitJob(int count) {
    return await()
        .atMost(WAIT)
        .until(() -> cluster.jobs().createdByOperator(), jobs -> jobs.size() == count)
        .get(count - 1);
  }

  @Test
  void anImageChangeListsNoEventsWhileItsJobWaitsForTheJobController() {
    cluster
        .jobs()
        .script(
            j -> cluster.jobs().createdByOperator().size() == 1 ? Script.SUCCEED : Script.MANUAL);
    cluster.create(openfga().version("v1.8.0").build());
    startOperator();
    awaitRecorded("v1.8.0");
    int before = cluster.requests().size();

    cluster.setImage("openfga", "openfga/openfga:v1.9.0");
    Job job = awaitJob(2);
    // looked at again while the Job has no status yet (its controller has not got to it), as the
    // rollout's status writes wake it in a cluster
    wakeTheDeployment(7);
    wakeTheDeployment(8);
    cluster.jobs().run(job);
    cluster.jobs().complete(job);
    awaitRecorded("v1.9.0");
    await()
        .atMost(WAIT)
        .until(
            () -> cluster.eventReasons("openfga").stream().filter("MigrationSucceeded"::equals),
            s -> s.count() == 2);

    assertThat(operatorEventReads(before)).as("Event reads of the image change").isEmpty();
  }

  @Test
  void aPodTheJobControllerRefusedIsReportedWithItsReason() {
    cluster.jobs().script(j -> Script.MANUAL);
    cluster.create(openfga().version("v1.9.0").build());
    startOperator();
    Job job = awaitJob(1);
    wakeTheDeployment(7);
    assertThat(operatorEventReads(0)).as("Event reads before the Job controller looked").isEmpty();

    // the Job controller refuses the pod: its FailedCreate Event, the Job's status without a pod
    cluster.jobs().refusePod(job);

    Event reported =
        await()
            .atMost(WAIT)
            .until(
                () ->
                    cluster.events("openfga").stream()
                        .filter(e -> "MigrationPodNotCreated".equals(e.getReason()))
                        .toList(),
                events -> !events.isEmpty())
            .get(0);
    assertThat(reported.getType()).isEqualTo("Warning");
    assertThat(reported.getMessage())
        .contains("openfga-migrate")
        .contains(FakeJobController.POD_REFUSAL);
    assertThat(cluster.job(job.getMetadata().getName()).getMetadata().getDeletionTimestamp())
        .isNull();
  }
}
