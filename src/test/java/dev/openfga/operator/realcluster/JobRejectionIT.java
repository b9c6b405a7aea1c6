package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC section 10 on the real API server, with the operator under the chart's RBAC: a Job create
 * refused by a ResourceQuota ({@code count/jobs.batch: "0"}) or by a ValidatingAdmissionPolicy
 * (admissionregistration.k8s.io/v1) that denies the operator's Jobs is reported with the API
 * server's own answer — {@code MigrationFailed=True}, reason {@code JobRejected}, a Warning Event
 * {@code JobRejected}, the {@code status} command's {@code blocked: Job rejected} — and once the
 * quota or policy is gone the operator's own retry creates the Job and the condition is cleared.
 */
class JobRejectionIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  /** From the first refusal to the Job: the retries back off (1 s, 2 s, 4 s ...). */
  private static final Duration UNTIL_CREATED = Duration.ofMinutes(3);

  @BeforeAll
  static void installOperator() {
    cluster.startOperator(
        cluster.installOperator(cluster.namespace(), "leaderElection: {enabled: false}\n"),
        "operator-0");
  }

  @Test
  void aQuotaWithNoRoomForAJobIsReportedAndTheJobRunsOnceItIsGone() {
    KubernetesClient client = cluster.client();
    String ns = cluster.namespace();
    ResourceQuota quota =
        client
            .resourceQuotas()
            .inNamespace(ns)
            .resource(
                new ResourceQuotaBuilder()
                    .withNewMetadata()
                    .withName("no-jobs")
                    .endMetadata()
                    .withNewSpec()
                    .addToHard(
                        "count/jobs.batch", new io.fabric8.kubernetes.api.model.Quantity("0"))
                    .endSpec()
                    .build())
            .create();
    // the quota controller has counted what is used: from now on admission says "exceeded quota"
    // (before, it says the quota's status is not known yet)
    await()
        .atMost(Duration.ofMinutes(1))
        .until(
            () -> client.resourceQuotas().inNamespace(ns).withName("no-jobs").get(),
            q ->
                q.getStatus() != null
                    && q.getStatus().getHard() != null
                    && q.getStatus().getHard().containsKey("count/jobs.batch"));

    OpenFgaView openfga = deploy("quota");

    DeploymentCondition rejected = awaitRejected(openfga);
    assertThat(rejected.getMessage())
        .startsWith(
            "Migration Job quota-migrate for version "
                + Binaries.OLD_OPENFGA
                + " was rejected by the API server: ")
        .contains("jobs.batch \"quota-migrate\" is forbidden: exceeded quota: no-jobs")
        .endsWith("(HTTP 403)");
    assertReported(openfga, "quota", rejected);

    client.resource(quota).delete();

    awaitCreatedAndCleared(openfga);
  }

  @Test
  void aValidatingAdmissionPolicyThatDeniesTheOperatorsJobsIsReportedAndTheJobRunsOnceItIsGone() {
    KubernetesClient client = cluster.client();
    String ns = cluster.namespace();
    String name = ns + "-no-operator-jobs";
    List<HasMetadata> policy =
        client
            .load(
                new java.io.ByteArrayInputStream(
                    ("""
                    apiVersion: admissionregistration.k8s.io/v1
                    kind: ValidatingAdmissionPolicy
                    metadata: {name: %1$s}
                    spec:
                      failurePolicy: Fail
                      matchConstraints:
                        resourceRules:
                        - apiGroups: [batch]
                          apiVersions: [v1]
                          operations: [CREATE]
                          resources: [jobs]
                        objectSelector:
                          matchLabels: {app.kubernetes.io/managed-by: openfga-operator}
                      validations:
                      - expression: "false"
                        message: migration Jobs of the operator are not allowed here
                    ---
                    apiVersion: admissionregistration.k8s.io/v1
                    kind: ValidatingAdmissionPolicyBinding
                    metadata: {name: %1$s}
                    spec:
                      policyName: %1$s
                      validationActions: [Deny]
                      matchResources:
                        namespaceSelector:
                          matchLabels: {kubernetes.io/metadata.name: %2$s}
                    """)
                        .formatted(name, ns)
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8)))
            .items();
    try {
      policy.forEach(o -> client.resource(o).create());
      // the API server applies a new policy a moment later: wait until it denies a Job like the
      // operator's (a dry run: nothing is stored)
      Job probe =
          new JobBuilder()
              .withNewMetadata()
              .withName("probe")
              .withNamespace(ns)
              .addToLabels("app.kubernetes.io/managed-by", "openfga-operator")
              .endMetadata()
              .withNewSpec()
              .withNewTemplate()
              .withNewSpec()
              .withRestartPolicy("Never")
              .addNewContainer()
              .withName("probe")
              .withImage("busybox")
              .endContainer()
              .endSpec()
              .endTemplate()
              .endSpec()
              .build();
      await()
          .atMost(Duration.ofMinutes(1))
          .untilAsserted(
              () ->
                  assertThatThrownBy(
                          () -> client.batch().v1().jobs().resource(probe).dryRun().create())
                      .isInstanceOfSatisfying(
                          KubernetesClientException.class,
                          e ->
                              assertThat(e.getStatus().getMessage())
                                  .contains("ValidatingAdmissionPolicy '" + name + "'")));

      OpenFgaView openfga = deploy("vap");

      DeploymentCondition rejected = awaitRejected(openfga);
      assertThat(rejected.getMessage())
          .contains(
              "jobs.batch \"vap-migrate\" is forbidden: ValidatingAdmissionPolicy '"
                  + name
                  + "' with binding '"
                  + name
                  + "' denied request")
          .contains("migration Jobs of the operator are not allowed here")
          // a policy's denial without a reason of its own is Invalid
          .endsWith("(HTTP 422)");
      assertReported(openfga, "vap", rejected);

      policy.forEach(o -> client.resource(o).delete());

      awaitCreatedAndCleared(openfga);
    } finally {
      policy.forEach(o -> client.resource(o).delete());
    }
  }

  /** A Deployment of the stock chart in operator mode, on a database of its own. */
  private static OpenFgaView deploy(String name) {
    KubernetesClient client = cluster.client();
    String ns = cluster.namespace();
    Postgres.Database db = cluster.postgres().createDatabase("rejected_" + name);
    client.resource(UpstreamOpenFga.datastoreSecret(ns, name, db.ownerUri())).create();
    client
        .resource(UpstreamOpenFga.operatorMode(client, ns, name, Binaries.OLD_OPENFGA, 0, 1))
        .create();
    return new OpenFgaView(client, ns, name);
  }

  private static DeploymentCondition awaitRejected(OpenFgaView openfga) {
    DeploymentCondition rejected =
        await()
            .atMost(Duration.ofMinutes(1))
            .until(
                () -> openfga.condition("MigrationFailed").orElse(null),
                c -> c != null && "JobRejected".equals(c.getReason()));
    assertThat(rejected.getStatus()).isEqualTo("True");
    return rejected;
  }

  /** The Warning Event and the status command say the same as the condition; no Job exists. */
  private static void assertReported(
      OpenFgaView openfga, String name, DeploymentCondition rejected) {
    var warning =
        await()
            .atMost(Duration.ofMinutes(1))
            .until(() -> openfga.events("JobRejected"), events -> !events.isEmpty())
            .get(0);
    assertThat(warning.getType()).isEqualTo("Warning");
    assertThat(warning.getMessage()).startsWith(rejected.getMessage());
    assertThat(OperatorInstall.status(cluster.plane(), "-n", cluster.namespace()))
        .containsPattern(
            name
                + "\\s+"
                + Binaries.OLD_OPENFGA.replace(".", "\\.")
                + "\\s+<none>\\s+blocked: Job"
                + " rejected");
    assertThat(openfga.job()).isNull();
  }

  /**
   * The operator's own retry creates the Job (no change to the Deployment wakes it), the condition
   * turns False, the migration runs; the refusals, however many, were one Warning.
   */
  private static void awaitCreatedAndCleared(OpenFgaView openfga) {
    DeploymentCondition cleared =
        await()
            .atMost(UNTIL_CREATED)
            .until(
                () -> openfga.condition("MigrationFailed").orElse(null),
                c -> c != null && "False".equals(c.getStatus()));
    assertThat(cleared.getReason()).isIn("JobCreated", "MigrationSucceeded");
    await()
        .atMost(Duration.ofMinutes(2))
        .until(openfga::recordedVersion, Binaries.OLD_OPENFGA::equals);
    assertThat(openfga.events("JobRejected")).hasSize(1);
  }
}
