package dev.openfga.operator.scenario;

import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.Controllers;
import dev.openfga.operator.config.OperatorConfig;
import dev.openfga.operator.kube.OperatorClient;
import dev.openfga.operator.migration.rules.Database;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC section 9 through the whole operator against the mock API server: concurrent reconciles of
 * Deployments that share a database, and a dry run.
 */
class MigrationSafetyScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  @RegisterExtension final MockCluster cluster = new MockCluster();

  /** Jobs of the operator that have neither completed nor failed. */
  private long unfinished() {
    return cluster
        .client()
        .batch()
        .v1()
        .jobs()
        .inNamespace(MockCluster.NS)
        .list()
        .getItems()
        .stream()
        .filter(
            j -> Keys.MANAGED_BY_OPERATOR.equals(j.getMetadata().getLabels().get(Keys.MANAGED_BY)))
        .filter(
            j ->
                j.getStatus() == null
                    || j.getStatus().getConditions() == null
                    || j.getStatus().getConditions().isEmpty())
        .count();
  }

  @Test
  void deploymentsCreatedTogetherOnOneDatabaseRunOneJobAtATime() {
    cluster.jobs().script(j -> Script.RUN);
    // the same literal URI: one database, five Deployments reconciled by four threads at once
    List<String> names = List.of("a", "b", "c", "d", "e");
    for (String name : names) {
      cluster.create(
          openfga()
              .name(name)
              .envVar(Keys.URI_ENV, "postgres://u:p@db:5432/fga")
              .version("v1.9.0")
              .build());
    }
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    cluster.startOperator(MockCluster.config(Duration.ofSeconds(2), 1), "operator-a", registry);

    for (int i = 0; i < names.size(); i++) {
      await().atMost(WAIT).until(() -> unfinished() == 1);
      // time for a second Job to appear if the rule did not hold
      await()
          .during(Duration.ofSeconds(1))
          .atMost(Duration.ofSeconds(3))
          .until(() -> unfinished() <= 1);
      if (i == 0) {
        assertThat(
                registry
                    .get("openfga.operator.deployments")
                    .tag("state", "waiting")
                    .gauge()
                    .value())
            .isEqualTo(names.size() - 1);
        // waiting costs no request: decided from the caches, without the reads before a create
        int before = cluster.requests().size();
        await().pollDelay(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(5)).until(() -> true);
        // (first installs: no record is cached, yet not even the record is read while waiting)
        assertThat(cluster.requests().subList(before, cluster.requests().size()))
            .filteredOn(r -> MockCluster.OPERATOR_AGENT.equals(r.userAgent()))
            .noneMatch(r -> r.method().equals("GET") && !r.path().contains("watch=true"));
      }
      Job running =
          cluster.jobs().createdByOperator().stream()
              .filter(j -> cluster.job(j.getMetadata().getName()) != null)
              .map(j -> cluster.job(j.getMetadata().getName()))
              .filter(
                  j ->
                      j.getStatus() == null
                          || j.getStatus().getConditions() == null
                          || j.getStatus().getConditions().isEmpty())
              .findFirst()
              .orElseThrow();
      cluster.jobs().complete(running);
    }
    for (String name : names) {
      await()
          .atMost(WAIT)
          .until(() -> cluster.recordedVersion(name).orElse(""), v -> v.equals("v1.9.0"));
    }
    assertThat(cluster.jobs().createdByOperator()).hasSize(names.size());
    // the ones that waited said so, naming the Deployment they waited for
    long waited =
        names.stream().filter(n -> cluster.eventReasons(n).contains("MigrationWaiting")).count();
    assertThat(waited).isGreaterThanOrEqualTo(names.size() - 1);
  }

  @Test
  void aMigrationPodWhoseJobIsGoneHoldsItsDatabaseUntilItHasStopped() {
    cluster.jobs().script(j -> Script.RUN);
    var deployment =
        openfga().name("b").envVar(Keys.URI_ENV, "postgres://u:p@db:5432/fga").version("v1.9.0");
    var built = deployment.build();
    String database =
        Database.keys(
                MockCluster.NS,
                built.getSpec().getTemplate().getSpec().getContainers().get(0),
                Optional.empty())
            .get(0);
    // what kubectl delete job (or the garbage collector) leaves: the pod, still running, no Job
    Pod left =
        cluster
            .client()
            .pods()
            .inNamespace(MockCluster.NS)
            .resource(
                new PodBuilder()
                    .withNewMetadata()
                    .withName("a-migrate-x7k2p")
                    .withNamespace(MockCluster.NS)
                    .withLabels(
                        Map.of(Keys.DATABASE_LABEL, database, Keys.JOB_NAME_LABEL, "a-migrate"))
                    .endMetadata()
                    .withNewSpec()
                    .addNewContainer()
                    .withName("migrate")
                    .withImage("openfga/openfga:v1.9.0")
                    .endContainer()
                    .endSpec()
                    .withNewStatus()
                    .withPhase("Running")
                    .endStatus()
                    .build())
            .create();
    cluster.create(built);
    cluster.startOperator(MockCluster.config(Duration.ofSeconds(2), 1), "operator-a");

    await().atMost(WAIT).until(() -> cluster.eventReasons("b").contains("MigrationWaiting"));
    assertThat(
            cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems().stream()
                .filter(e -> "MigrationWaiting".equals(e.getReason())))
        .singleElement()
        .satisfies(
            e ->
                assertThat(e.getMessage())
                    .contains(
                        "migration pod " + MockCluster.NS + "/a-migrate-x7k2p (Job a-migrate)"));
    // time for a Job to appear if the pod did not count
    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(6))
        .until(() -> cluster.jobs().createdByOperator().isEmpty());

    left.getStatus().setPhase("Succeeded");
    cluster.client().pods().inNamespace(MockCluster.NS).resource(left).updateStatus();
    await().atMost(WAIT).until(() -> cluster.jobs().createdByOperator().size() == 1);
  }

  private List<MockCluster.ApiRequest> sent() {
    return cluster.requests().stream()
        .filter(r -> "dry-run-operator".equals(r.userAgent()))
        .toList();
  }

  @Test
  void aDryRunSendsNoWriteAndCreatesNothing() {
    cluster.jobs().script(j -> Script.SUCCEED);
    cluster.create(openfga().version("v1.9.0").build());
    cluster.createForeignJob("other-migrate");
    cluster.create(openfga().name("other").version("v1.9.0").build());
    OperatorConfig base = MockCluster.config(Duration.ofSeconds(2), 1);
    OperatorConfig dryRun =
        new OperatorConfig(
            Set.of(MockCluster.NS),
            false,
            Optional.of(MockCluster.NS),
            Optional.empty(),
            Optional.empty(),
            base.backoffLimit(),
            base.activeDeadlineSeconds(),
            base.ttlSecondsAfterFinished(),
            base.retryCooldown(),
            base.failureLogLines(),
            true);
    var client =
        OperatorClient.create(
            new io.fabric8.kubernetes.client.ConfigBuilder(cluster.client().getConfiguration())
                .withUserAgent("dry-run-operator")
                .build());
    try (Controllers operator =
        Controllers.create(client, dryRun, java.time.Clock.systemUTC(), "operator-dry", false)) {
      operator.start();
      // it decided to create the Job: the direct reads made before a create were sent
      await()
          .atMost(WAIT)
          .until(
              () ->
                  sent().stream()
                      .anyMatch(
                          r ->
                              r.method().equals("GET")
                                  && r.path().endsWith("/jobs/openfga-migrate")));
      // and looked again after its requeue (5 s after a would-be create): a second round of reads
      await()
          .atMost(WAIT)
          .until(
              () ->
                  sent().stream()
                          .filter(
                              r ->
                                  r.method().equals("GET")
                                      && r.path().endsWith("/jobs/openfga-migrate"))
                          .count()
                      >= 2);
    } finally {
      client.close();
    }
    assertThat(sent()).extracting(MockCluster.ApiRequest::method).containsOnly("GET");
    assertThat(cluster.job("openfga-migrate")).isNull();
    assertThat(cluster.configMap("openfga-migration-status")).isNull();
    assertThat(cluster.eventReasons("openfga")).isEmpty();
    assertThat(cluster.eventReasons("other")).isEmpty();
  }
}
