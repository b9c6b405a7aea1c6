package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code --dry-run} on the real cluster: the operator installed by the chart with {@code dryRun:
 * true} runs under a Role that allows only reads, so any write would be refused by the API server;
 * it decides as usual, logs what it would write, and nothing changes.
 */
class DryRunIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  @Test
  void decidesAndLogsButWritesNothing() {
    String ns = cluster.namespace();
    OperatorInstall install =
        cluster.installOperator(ns, "dryRun: true\nleaderElection: {enabled: false}\n");
    for (Role role : cluster.client().rbac().roles().inNamespace(ns).list().getItems()) {
      for (PolicyRule rule : role.getRules()) {
        assertThat(rule.getVerbs()).as("the dry run's RBAC").isSubsetOf("get", "list", "watch");
      }
    }
    OperatorInstall.OperatorProcess operator = cluster.startOperator(install, "operator-0");
    Postgres.Database db = cluster.postgres().createDatabase("dry");
    OpenFgaView openfga =
        cluster.deploy(
            UpstreamOpenFga.fixture(ns, "dry", Binaries.OLD_OPENFGA, 0, 2), db.ownerUri());
    Map<String, String> annotations = openfga.deployment().getMetadata().getAnnotations();

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(operator.log())
                    .contains("dry run: ")
                    .contains("would create Job dry-migrate for version " + Binaries.OLD_OPENFGA)
                    .contains("would emit Normal Event MigrationStarted"));
    // the plan is looked at again (a requeue after 5 s) but logged once: a negative assertion
    ControlPlane.sleep(Duration.ofSeconds(7));
    assertThat(
            Pattern.compile("would create Job dry-migrate")
                .matcher(operator.log())
                .results()
                .count())
        .isEqualTo(1);
    assertThat(operator.log()).doesNotContain("Forbidden", "forbidden");
    assertThat(openfga.job()).isNull();
    assertThat(openfga.statusConfigMap()).isNull();
    assertThat(cluster.client().v1().events().inNamespace(ns).list().getItems())
        .noneMatch(
            e ->
                "Deployment".equals(e.getInvolvedObject().getKind())
                    && e.getReason().startsWith("Migration"));
    Deployment after = openfga.deployment();
    assertThat(after.getSpec().getReplicas()).isZero();
    // only the Deployment controller's revision annotation was added
    assertThat(after.getMetadata().getAnnotations())
        .containsAllEntriesOf(annotations)
        .containsOnlyKeys(
            java.util.stream.Stream.concat(
                    annotations.keySet().stream(),
                    java.util.stream.Stream.of("deployment.kubernetes.io/revision"))
                .toList());
    assertThat(OpenFgaView.condition(after, "MigrationFailed")).isEmpty();
    assertThat(cluster.kubelet().migrateRuns(ns, openfga.jobName())).isEmpty();
    // the status command shows the state the operator would act on
    assertThat(OperatorInstall.status(cluster.plane(), "-n", ns)).contains("dry", "migrating");
  }
}
