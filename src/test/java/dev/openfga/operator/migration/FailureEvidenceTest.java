package dev.openfga.operator.migration;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.OperatorClient;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The evidence of a failed migration masks the datastore credentials although the operator reads
 * its Jobs without their pod template ({@link OperatorClient}): from the failed pod's own
 * containers, or from the Job read again when no pod was created.
 */
class FailureEvidenceTest {
  private static final String PASSWORD = "s3cret-pw";
  private static final String URI = "postgres://openfga:" + PASSWORD + "@db:5432/openfga";

  private final MockCluster cluster = MockCluster.withoutControllers();

  @AfterEach
  void close() {
    cluster.close();
  }

  @Test
  void theOperatorReadsItsJobsWithoutThePodTemplateAndWritesItWhole() {
    cluster.client().batch().v1().jobs().resource(job()).create();

    Job read = readByTheOperator();

    assertThat(read.getSpec().getTemplate()).isNull();
    assertThat(read.getSpec().getBackoffLimit()).isEqualTo(0);
    assertThat(read.getMetadata().getLabels())
        .containsEntry(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR);
    assertThat(cluster.operatorClient().getKubernetesSerialization().asJson(job()))
        .contains("\"template\"", "OPENFGA_DATASTORE_URI");
  }

  @Test
  void theOperatorReadsPodsWithoutTheirSpecAndContainersAndWritesThemWhole() {
    Job created = cluster.client().batch().v1().jobs().resource(job()).create();
    cluster.jobs().fail(created, "Error: boom");

    Pod read =
        cluster
            .operatorClient()
            .pods()
            .inNamespace(MockCluster.NS)
            .withLabel(Keys.JOB_NAME_LABEL, "openfga-migrate")
            .list()
            .getItems()
            .get(0);
    Pod whole =
        cluster
            .client()
            .pods()
            .inNamespace(MockCluster.NS)
            .withName(read.getMetadata().getName())
            .get();

    // what the migration-pod informer needs: labels, owner, phase
    assertThat(read.getMetadata().getLabels()).containsKey(Keys.JOB_NAME_LABEL);
    assertThat(read.getMetadata().getOwnerReferences()).hasSize(1);
    assertThat(read.getStatus().getPhase()).isEqualTo("Failed");
    assertThat(read.getSpec()).isNull();
    assertThat(read.getStatus().getContainerStatuses()).isEmpty();
    assertThat(whole.getStatus().getContainerStatuses()).hasSize(1);
    assertThat(cluster.operatorClient().getKubernetesSerialization().asJson(whole))
        .contains("\"spec\"", "\"containerStatuses\"", "OPENFGA_DATASTORE_URI");
  }

  @Test
  void aFailedPodsLogIsMaskedWithThePodsOwnCredentials() {
    Job created = cluster.client().batch().v1().jobs().resource(job()).create();
    cluster.jobs().fail(created, "Error: failed to connect to " + URI + ": refused");
    Job cached = readByTheOperator();
    assertThat(cached.getSpec().getTemplate()).isNull();

    String evidence = new FailureEvidence(cluster.operatorClient(), 20).read(cached);

    assertThat(evidence)
        .contains("exit code 1 (Error)", "failed to connect to ***: refused")
        .doesNotContain(PASSWORD);
  }

  @Test
  void aUriFromASecretIsMaskedBeforeTheExcerptIsCut() {
    // the password comes from a Secret: the operator knows no literal to mask, only the URI's shape
    String cutShort = " postgres://openfga:918273";
    String prefix = "Error: failed to connect:";
    String head =
        prefix + "x".repeat(FailureEvidence.MAX_BYTES - prefix.length() - cutShort.length());
    String log = head + " postgres://openfga:918273645501xyz@db:5432/openfga\n";
    assertThat(log.substring(0, FailureEvidence.MAX_BYTES)).as("the cut").endsWith(cutShort);
    Job created = cluster.client().batch().v1().jobs().resource(jobFromSecret()).create();
    cluster.jobs().fail(created, log);

    String evidence = new FailureEvidence(cluster.operatorClient(), 20).read(readByTheOperator());

    assertThat(evidence).contains("Error: failed to connect:xxx").doesNotContain("918273");
  }

  @Test
  void theLineTheKubeletCutsIsNotCopied() {
    String line = "level=info msg=applying migration step " + "y".repeat(260) + "\n";
    String cutShort = "level=error msg=dial failed postgres://openfga:9182736";
    // fewer lines than the tail asked for, more bytes than read: the cut falls in the password
    int start = FailureEvidence.READ_BYTES - cutShort.length();
    StringBuilder log = new StringBuilder();
    while (log.length() + line.length() <= start) {
      log.append(line);
    }
    log.append("p".repeat(start - log.length()));
    log.append("level=error msg=dial failed postgres://openfga:918273645501xyz@db:5432/openfga\n");
    assertThat(log.substring(0, FailureEvidence.READ_BYTES)).as("the cut").endsWith(cutShort);
    assertThat(log.toString().lines().count()).isLessThan(FailureEvidence.READ_LINES);
    Job created = cluster.client().batch().v1().jobs().resource(jobFromSecret()).create();
    cluster.jobs().fail(created, log.toString());

    String evidence = new FailureEvidence(cluster.operatorClient(), 5).read(readByTheOperator());

    assertThat(evidence).contains("applying migration step").doesNotContain("9182736", "dial");
  }

  @Test
  void aRefusedPodsReasonIsMaskedWithTheJobsCredentialsReadAgain() {
    Job created = cluster.client().batch().v1().jobs().resource(job()).create();
    refused(created, "Error creating: admission webhook denied env " + URI);
    Job cached = readByTheOperator();

    FailureEvidence evidence = new FailureEvidence(cluster.operatorClient(), 20);

    // what the BLOCKED path reports while the Job waits, and the evidence once it failed
    assertThat(evidence.podCreateFailure(cached))
        .hasValue("Error creating: admission webhook denied env ***");
    assertThat(evidence.read(cached))
        .isEqualTo(
            "No pod of Job openfga-migrate was created: Error creating: admission webhook denied"
                + " env ***");
  }

  @Test
  void aRefusedPodsReasonIsNotShownWhenTheJobCannotBeReadAgainToMaskIt() {
    Job created = cluster.client().batch().v1().jobs().resource(job()).create();
    refused(created, "Error creating: " + URI);
    Job cached = readByTheOperator();
    cluster.failNextAt("GET", "/jobs/openfga-migrate", 500, 1);

    String evidence = new FailureEvidence(cluster.operatorClient(), 20).read(cached);

    assertThat(evidence)
        .isEqualTo(
            "No pod of Job openfga-migrate was created: "
                + FailureEvidence.UNMASKED
                + " (HTTP 500)")
        .doesNotContain(PASSWORD);
  }

  /** The Job as the operator reads it (without its pod template). */
  private Job readByTheOperator() {
    return cluster
        .operatorClient()
        .batch()
        .v1()
        .jobs()
        .inNamespace(MockCluster.NS)
        .withName("openfga-migrate")
        .get();
  }

  /** The Job controller's Event: the Job's pod was refused, for this reason. */
  private void refused(Job job, String message) {
    cluster
        .client()
        .v1()
        .events()
        .resource(
            new EventBuilder()
                .withNewMetadata()
                .withName("openfga-migrate.1")
                .withNamespace(MockCluster.NS)
                .endMetadata()
                .withReason("FailedCreate")
                .withType("Warning")
                .withMessage(message)
                .withNewInvolvedObject()
                .withKind("Job")
                .withName("openfga-migrate")
                .withNamespace(MockCluster.NS)
                .withUid(job.getMetadata().getUid())
                .endInvolvedObject()
                .build())
        .create();
  }

  /** A migration Job whose container takes the datastore URI from a Secret. */
  private static Job jobFromSecret() {
    Job job = job();
    job.getSpec()
        .getTemplate()
        .getSpec()
        .getContainers()
        .get(0)
        .setEnv(
            List.of(
                new EnvVarBuilder()
                    .withName("OPENFGA_DATASTORE_URI")
                    .withNewValueFrom()
                    .withNewSecretKeyRef("uri", "openfga-datastore", false)
                    .endValueFrom()
                    .build()));
    return job;
  }

  /** A migration Job whose container is given the datastore URI with its password. */
  private static Job job() {
    return new JobBuilder()
        .withNewMetadata()
        .withName("openfga-migrate")
        .withNamespace(MockCluster.NS)
        .addToLabels(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR)
        .endMetadata()
        .withNewSpec()
        .withBackoffLimit(0)
        .withNewTemplate()
        .withNewSpec()
        .withRestartPolicy("Never")
        .addNewContainer()
        .withName(Keys.MIGRATION_CONTAINER)
        .withImage("openfga/openfga:v1.10.0")
        .withArgs("migrate")
        .addNewEnv()
        .withName("OPENFGA_DATASTORE_URI")
        .withValue(URI)
        .endEnv()
        .endContainer()
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }
}
