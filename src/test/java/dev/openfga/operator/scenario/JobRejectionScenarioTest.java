package dev.openfga.operator.scenario;

import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC section 10: a Job create the API server refuses (a quota's 403, an admission webhook's or
 * policy's 4xx, an invalid object's 422) is reported on the Deployment — {@code
 * MigrationFailed=True}, reason {@code JobRejected}, with the answer, credentials masked — by one
 * Warning Event per refusal, and in the metrics; it is tried again with backoff, and the condition
 * is cleared once a Job is created. Server errors and throttling are retried without a report. One
 * cluster per test: the injected answers match every Job create.
 */
class JobRejectionScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  /** The Deployment's literal datastore password, which an answer may quote. */
  private static final String PASSWORD = "Xk9-pa55-w0rd";

  private static final String URI = "postgres://openfga:" + PASSWORD + "@db:5432/openfga";

  @RegisterExtension final MockCluster cluster = new MockCluster();
  private PrometheusMeterRegistry registry;

  @BeforeEach
  void start() {
    cluster.jobs().script(j -> Script.SUCCEED);
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  }

  private Optional<DeploymentCondition> condition() {
    return cluster.deployments().migrationCondition(cluster.deployment("openfga"));
  }

  private List<Event> events(String reason) {
    return cluster.events("openfga").stream().filter(e -> reason.equals(e.getReason())).toList();
  }

  private long jobCreates() {
    return cluster.requests().stream()
        .filter(r -> r.method().equals("POST") && r.path().endsWith("/namespaces/openfga/jobs"))
        .count();
  }

  @Test
  void aQuotaRefusalIsReportedOnceRetriedWithBackoffAndClearedByTheCreate() {
    String quota =
        "jobs.batch \"openfga-migrate\" is forbidden: exceeded quota: jobs, requested:"
            + " count/jobs.batch=1, used: count/jobs.batch=0, limited: count/jobs.batch=0";
    cluster.failNext("POST", "/jobs", 403, 3, quota);
    cluster.create(openfga().envVar("OPENFGA_DATASTORE_URI", URI).build());
    cluster.startOperator(MockCluster.config(Duration.ofSeconds(2), 1), "operator-a", registry);

    DeploymentCondition rejected =
        await()
            .atMost(WAIT)
            .until(
                () -> condition().orElse(null),
                c -> c != null && Keys.REASON_JOB_REJECTED.equals(c.getReason()));
    assertThat(rejected.getStatus()).isEqualTo("True");
    assertThat(rejected.getMessage())
        .isEqualTo(
            "Migration Job openfga-migrate for version v1.8.0 was rejected by the API server: "
                + quota
                + " (HTTP 403)");
    // the metrics are recorded right after the writes
    await()
        .atMost(WAIT)
        .until(
            registry::scrape,
            text ->
                text.contains(
                        "openfga_operator_job_rejections_total{deployment=\"openfga\","
                            + "namespace=\"openfga\"} 1.0")
                    && text.contains("openfga_operator_deployments{state=\"blocked\"} 1.0"));

    // the fourth try is let through: the Job runs, and the refusal is over
    DeploymentCondition cleared =
        await()
            .atMost(WAIT)
            .until(
                () -> condition().orElse(null),
                c -> c != null && Keys.REASON_JOB_CREATED.equals(c.getReason()));
    assertThat(cleared.getStatus()).isEqualTo("False");
    assertThat(cleared.getMessage())
        .isEqualTo("Migration Job openfga-migrate for version v1.8.0 was created.");
    assertThat(jobCreates()).isEqualTo(4);
    // three refusals with the same answer are one refusal: one Warning
    List<Event> warnings = events("JobRejected");
    assertThat(warnings)
        .singleElement()
        .satisfies(e -> assertThat(e.getType()).isEqualTo("Warning"));
    assertThat(warnings.get(0).getMessage()).startsWith(rejected.getMessage());
    await()
        .atMost(WAIT)
        .until(() -> cluster.recordedVersion("openfga").orElse(""), v -> v.equals("v1.8.0"));
    // a success after it: the condition says so, as after a failure
    await()
        .atMost(WAIT)
        .until(
            () -> condition().map(DeploymentCondition::getReason).orElse(""),
            Keys.REASON_SUCCEEDED::equals);
    assertThat(registry.scrape())
        .contains(
            "openfga_operator_job_rejections_total{deployment=\"openfga\",namespace=\"openfga\"}"
                + " 1.0");
  }

  @Test
  void anInvalidObjectsAnswerIsShownWithTheDatastoreCredentialsMasked() {
    cluster.failNext(
        "POST",
        "/jobs",
        422,
        2,
        "Job.batch \"openfga-migrate\" is invalid: spec.template.spec.containers[0].env[1].value:"
            + " Invalid value: \""
            + URI
            + "\": must be no more than 63 characters");
    cluster.create(openfga().envVar("OPENFGA_DATASTORE_URI", URI).build());
    cluster.startOperator(MockCluster.config(Duration.ofSeconds(2), 1), "operator-a", registry);

    DeploymentCondition rejected =
        await()
            .atMost(WAIT)
            .until(
                () -> condition().orElse(null),
                c -> c != null && Keys.REASON_JOB_REJECTED.equals(c.getReason()));
    assertThat(rejected.getMessage())
        .contains(
            "Job.batch \"openfga-migrate\" is invalid: spec.template.spec.containers[0].env[1]"
                + ".value: Invalid value: \"***\": must be no more than 63 characters (HTTP 422)")
        .doesNotContain(PASSWORD);
    Event warning =
        await().atMost(WAIT).until(() -> events("JobRejected"), e -> !e.isEmpty()).get(0);
    assertThat(warning.getMessage()).contains("(HTTP 422)").doesNotContain(PASSWORD);
    await()
        .atMost(WAIT)
        .until(() -> cluster.recordedVersion("openfga").orElse(""), v -> v.equals("v1.8.0"));
  }

  @Test
  void serverErrorsThrottlingAndAConflictAreNoRefusal() {
    cluster.failNext("POST", "/jobs", 500, 1);
    cluster.failNext("POST", "/jobs", 429, 1);
    cluster.failNext("POST", "/jobs", 503, 1);
    // AlreadyExists, and nothing of that name to be found: looked at again (SPEC rule 7)
    cluster.failNext("POST", "/jobs", 409, 1);
    cluster.create(openfga().build());
    cluster.startOperator(MockCluster.config(Duration.ofSeconds(2), 1), "operator-a", registry);

    await()
        .atMost(WAIT)
        .until(() -> cluster.recordedVersion("openfga").orElse(""), v -> v.equals("v1.8.0"));

    assertThat(jobCreates()).isEqualTo(5);
    assertThat(events("JobRejected")).isEmpty();
    assertThat(condition()).isEmpty();
    assertThat(registry.scrape()).doesNotContain("openfga_operator_job_rejections_total{");
  }
}
