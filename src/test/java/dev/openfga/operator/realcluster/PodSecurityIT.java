package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.testing.KubectlPlugin;
import io.fabric8.kubernetes.api.model.Capabilities;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A namespace that enforces the "restricted" Pod Security Standard, with the real admission plugin:
 * the migration runs when the upstream chart is given the restricted values of docs/integration.md
 * (the Job copies the pod's and the container's security contexts), and a migration pod that
 * admission refuses is reported as such, not as "migrating".
 */
class PodSecurityIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  private static String restricted;
  private static OperatorInstall install;

  @TempDir static Path pluginDir;

  @BeforeAll
  static void installOperator() {
    restricted =
        cluster.newNamespace(
            cluster.namespace() + "-restricted",
            Map.of(
                "pod-security.kubernetes.io/enforce", "restricted",
                "pod-security.kubernetes.io/enforce-version", "latest"));
    install = cluster.installOperator(restricted, "leaderElection: {enabled: false}\n");
    cluster.startOperator(install, "operator-0");
  }

  @Test
  void theMigrationRunsWithTheRestrictedValuesOfTheUpstreamChart() {
    Postgres.Database db = cluster.postgres().createDatabase("restricted");
    Deployment deployment = deployment("hardened", db);
    var pod = deployment.getSpec().getTemplate().getSpec();
    // podSecurityContext and securityContext of the upstream chart, as docs/integration.md says
    pod.setSecurityContext(
        new PodSecurityContextBuilder()
            .withRunAsNonRoot(true)
            .withRunAsUser(65532L)
            .withRunAsGroup(65532L)
            .withNewSeccompProfile()
            .withType("RuntimeDefault")
            .endSeccompProfile()
            .build());
    pod.getContainers()
        .get(0)
        .setSecurityContext(
            new SecurityContextBuilder()
                .withAllowPrivilegeEscalation(false)
                .withCapabilities(new Capabilities(null, List.of("ALL")))
                .withReadOnlyRootFilesystem(true)
                .withRunAsNonRoot(true)
                .build());
    cluster.client().resource(deployment).create();
    OpenFgaView openfga = new OpenFgaView(cluster.client(), restricted, "hardened");
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA));
    assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(5);
  }

  @Test
  void aMigrationPodRefusedByAdmissionIsReportedWithTheReasonInsteadOfMigrating() {
    Postgres.Database db = cluster.postgres().createDatabase("refused");
    cluster.client().resource(deployment("refused", db)).create();
    OpenFgaView openfga = new OpenFgaView(cluster.client(), restricted, "refused");
    var event =
        await()
            .atMost(Duration.ofMinutes(1))
            .until(() -> openfga.events("MigrationPodNotCreated"), events -> !events.isEmpty())
            .get(0);
    assertThat(event.getType()).isEqualTo("Warning");
    assertThat(event.getMessage())
        .contains("refused-migrate")
        .contains("violates PodSecurity \"restricted:latest\"");
    assertThat(OperatorInstall.status(cluster.plane(), "-n", restricted))
        .containsPattern("refused\\s+v1\\.8\\.16\\s+<none>\\s+blocked: migration pod not created");
    assertThat(openfga.recordedVersion()).isNull();
    assertThat(openfga.job().getMetadata().getDeletionTimestamp()).isNull();
  }

  @Test
  void theKubectlPluginsStatusPodIsAdmittedAndTheOperatorsRightsReadTheStatus() {
    // the pod bin/kubectl-openfga_operator creates in the operator's namespace, for an operator
    // with the chart's ServiceAccount; that namespace enforces "restricted" here (it runs no pod)
    String operatorNamespace = install.namespace();
    cluster
        .client()
        .namespaces()
        .withName(operatorNamespace)
        .edit(
            n -> {
              n.getMetadata().getLabels().put("pod-security.kubernetes.io/enforce", "restricted");
              return n;
            });
    KubectlPlugin.Run plugin =
        new KubectlPlugin(pluginDir)
            .run(
                "",
                "openfga-operator",
                "ghcr.io/example/openfga-operator:0.1.0\t" + install.serviceAccount() + "\t",
                "--operator-namespace",
                operatorNamespace,
                "status",
                "-n",
                restricted);
    assertThat(plugin.exitCode()).as(plugin.output()).isZero();
    Pod pod = plugin.pod();
    pod.setMetadata(
        new ObjectMetaBuilder().withName("status-view").withNamespace(operatorNamespace).build());
    // the real Pod Security admission admits it, with the chart's ServiceAccount
    Pod admitted = cluster.client().resource(pod).dryRun().create();
    assertThat(admitted.getSpec().getServiceAccountName()).isEqualTo(install.serviceAccount());
    assertThat(admitted.getSpec().getContainers().get(0).getArgs())
        .containsExactly("status", "-n", restricted);

    // and the status view, run with the chart's ServiceAccount and RBAC as that pod would, reads
    Postgres.Database db = cluster.postgres().createDatabase("viewed");
    cluster.client().resource(deployment("viewed", db)).create();
    OpenFgaView openfga = new OpenFgaView(cluster.client(), restricted, "viewed");
    await()
        .atMost(Duration.ofMinutes(1))
        .until(() -> openfga.events("MigrationPodNotCreated"), events -> !events.isEmpty());
    assertThat(install.statusAsOperator("-n", restricted))
        .containsPattern("viewed\\s+v1\\.8\\.16\\s+<none>\\s+blocked: migration pod not created");
  }

  private static Deployment deployment(String name, Postgres.Database db) {
    KubernetesClient client = cluster.client();
    client.resource(UpstreamOpenFga.datastoreSecret(restricted, name, db.ownerUri())).create();
    return UpstreamOpenFga.operatorMode(client, restricted, name, Binaries.OLD_OPENFGA, 0, 1);
  }
}
