package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Capabilities;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A namespace that enforces the "restricted" Pod Security Standard, with the real admission plugin:
 * the migration runs when the upstream chart is given the restricted values of docs/integration.md
 * (the Job copies the pod's and the container's security contexts), and a migration pod that
 * admission refuses is reported as such, not as "migrating".
 */
class PodSecurityIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  private static String restricted;

  @BeforeAll
  static void installOperator() {
    restricted =
        cluster.newNamespace(
            cluster.namespace() + "-restricted",
            Map.of(
                "pod-security.kubernetes.io/enforce", "restricted",
                "pod-security.kubernetes.io/enforce-version", "latest"));
    cluster.startOperator(
        cluster.installOperator(restricted, "leaderElection: {enabled: false}\n"), "operator-0");
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

  private static Deployment deployment(String name, Postgres.Database db) {
    KubernetesClient client = cluster.client();
    client.resource(UpstreamOpenFga.datastoreSecret(restricted, name, db.ownerUri())).create();
    return UpstreamOpenFga.operatorMode(client, restricted, name, Binaries.OLD_OPENFGA, 0, 1);
  }
}
