package dev.openfga.operator.controller;

import static dev.openfga.operator.testing.OpenFgaDeployment.openfga;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.model.Keys;
import dev.openfga.operator.testing.FakeJobController;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The real operator (JOSDK, informers, HTTP) against the mock API server, with fake Job and
 * Deployment controllers playing the cluster.
 */
class MigrationScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  private MockCluster cluster;

  @BeforeEach
  void startCluster() {
    cluster = new MockCluster();
  }

  @AfterEach
  void stopCluster() {
    cluster.close();
  }

  private void startOperator() {
    cluster.startOperator(MockCluster.config(Duration.ofSeconds(2), 1), "operator-a");
  }

  private void setImage(String name, String image) {
    cluster.client().apps().deployments().inNamespace(MockCluster.NS).withName(name)
        .edit(d -> {
          d.getSpec().getTemplate().getSpec().getContainers().get(0).setImage(image);
          return d;
        });
  }

  @Test
  void firstInstallRunsJobRecordsVersionAndRestoresReplicas() {
    cluster.jobs().script(j -> Script.SUCCEED);
    cluster.create(openfga().version("v1.8.0").build());
    startOperator();

    await().atMost(WAIT).until(() -> cluster.recordedVersion("openfga").orElse(""), v -> v.equals("v1.8.0"));
    await().atMost(WAIT).until(() -> cluster.deployment("openfga").getSpec().getReplicas() == 3);

    Job job = cluster.job("openfga-migrate");
    assertThat(job.getSpec().getTtlSecondsAfterFinished()).isEqualTo(1);
    assertThat(job.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs()).containsExactly("migrate");
    assertThat(cluster.configMap("openfga-migration-status").getData())
        .containsEntry(Keys.DATA_JOB_NAME, "openfga-migrate")
        .containsKey(Keys.DATA_MIGRATED_AT);
    await().atMost(WAIT).until(() -> cluster.eventReasons("openfga"), r -> r.contains("MigrationSucceeded"));
    assertThat(cluster.eventReasons("openfga")).containsExactly("MigrationStarted", "MigrationSucceeded");
    assertThat(cluster.jobs().createdByOperator()).hasSize(1);
  }

  @Test
  void upgradeRunsNewJobAndRecordsNewVersion() {
    cluster.jobs().script(j -> Script.SUCCEED);
    cluster.create(openfga().version("v1.8.0").build());
    startOperator();
    await().atMost(WAIT).until(() -> cluster.recordedVersion("openfga").orElse(""), v -> v.equals("v1.8.0"));

    setImage("openfga", "openfga/openfga:v1.9.0");

    await().atMost(WAIT).until(() -> cluster.recordedVersion("openfga").orElse(""), v -> v.equals("v1.9.0"));
    List<String> versions = cluster.jobs().createdByOperator().stream().map(FakeJobController::version).toList();
    assertThat(versions).containsExactly("v1.8.0", "v1.9.0");
    assertThat(cluster.deployment("openfga").getSpec().getReplicas()).isEqualTo(3);
  }

  @Test
  void failedMigrationReportsKeepsJobAndRetriesExactlyOnceAfterCooldown() {
    cluster.jobs().script(j -> cluster.jobs().createdByOperator().size() == 1 ? Script.FAIL : Script.SUCCEED);
    cluster.create(openfga().version("v1.9.0").build());
    startOperator();

    await().atMost(WAIT).until(() -> cluster.fakeCondition("openfga"), c -> c.equals("True"));
    // in order: condition, then the retry deadline on the Deployment, then retention on the Job
    await().atMost(WAIT).until(() -> cluster.job("openfga-migrate").getMetadata().getAnnotations(), a -> a.containsKey(Keys.RETAIN_UNTIL));
    Job kept = cluster.job("openfga-migrate");
    assertThat(FakeJobController.version(kept)).isEqualTo("v1.9.0");
    assertThat(kept.getMetadata().getAnnotations()).containsKey(Keys.RETRY_AFTER);
    Deployment failed = cluster.deployment("openfga");
    assertThat(failed.getMetadata().getAnnotations())
        .containsEntry(Keys.RETRY_AFTER, kept.getMetadata().getAnnotations().get(Keys.RETRY_AFTER));
    assertThat(kept.getSpec().getTtlSecondsAfterFinished()).isGreaterThan(300);
    await().atMost(WAIT).until(() -> cluster.eventReasons("openfga"), r -> r.contains("MigrationFailed"));
    assertThat(cluster.events("openfga").stream().filter(e -> e.getReason().equals("MigrationFailed")).findFirst().orElseThrow()
            .getType()).isEqualTo("Warning");

    await().atMost(WAIT).until(() -> cluster.recordedVersion("openfga").orElse(""), v -> v.equals("v1.9.0"));
    assertThat(cluster.jobs().createdByOperator()).hasSize(2);
    await().atMost(WAIT).until(() -> cluster.fakeCondition("openfga"), c -> c.equals("False"));
    assertThat(cluster.deployment("openfga").getMetadata().getAnnotations()).doesNotContainKey(Keys.RETRY_AFTER);
    assertThat(cluster.eventReasons("openfga")).containsSubsequence("MigrationStarted", "MigrationFailed", "MigrationStarted", "MigrationSucceeded");
  }
}
