package dev.openfga.operator.migration;

import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.openfga.operator.kube.Echoes;
import dev.openfga.operator.kube.EventRecorder;
import dev.openfga.operator.migration.rules.DeploymentSettings;
import dev.openfga.operator.migration.rules.EventReason;
import dev.openfga.operator.migration.rules.FailedCondition;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.MigrationJob;
import dev.openfga.operator.migration.rules.Observation;
import dev.openfga.operator.migration.rules.Plan;
import dev.openfga.operator.migration.rules.Policy;
import dev.openfga.operator.migration.rules.Reported;
import dev.openfga.operator.migration.rules.StatusRecord;
import dev.openfga.operator.migration.rules.Step;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The writes of a plan against the mock API server: each conditional on what was observed, in
 * order, stopping at the first that fails. The upstream [B] cases about the API calls themselves.
 */
class StepRunnerTest {
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  private MockCluster cluster;
  private StepRunner runner;

  @BeforeEach
  void start() {
    cluster = new MockCluster();
    runner =
        new StepRunner(
            cluster.client(), new EventRecorder(cluster.client(), "test"), MigrationMetrics.none());
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  private static Plan plan(Step... steps) {
    return new Plan(Plan.State.MIGRATING, "test", List.of(steps), new Plan.Next.Done());
  }

  private Observation observe(Deployment d, ConfigMap status, Job job) {
    return new Observation(d, Optional.ofNullable(status), Optional.ofNullable(job), NOW);
  }

  /** The migration Job of {@code d}'s first container, as the planner builds it. */
  private static Job buildJob(Deployment d, String version) {
    return MigrationJob.build(
        d,
        d.getSpec().getTemplate().getSpec().getContainers().get(0),
        version,
        DeploymentSettings.of(d),
        Optional.empty(),
        Policy.DEFAULTS.jobSpec());
  }

  private Job createJob(Deployment d, String version) {
    Job job = buildJob(d, version);
    return cluster.client().batch().v1().jobs().inNamespace(MockCluster.NS).resource(job).create();
  }

  @Test
  void deletesForegroundWithUidAndResourceVersionPreconditions() {
    Deployment d = cluster.create(openfga().build());
    Job job = createJob(d, "v1.8.0");

    runner.run(plan(new Step.DeleteJob("test")), observe(d, null, job));

    MockCluster.ApiRequest delete =
        cluster.requests().stream()
            .filter(r -> r.method().equals("DELETE"))
            .findFirst()
            .orElseThrow();
    assertThat(delete.path()).isEqualTo("/apis/batch/v1/namespaces/openfga/jobs/openfga-migrate");
    DeleteOptions options = Serialization.unmarshal(delete.body(), DeleteOptions.class);
    assertThat(options.getPropagationPolicy()).isEqualTo("Foreground");
    assertThat(options.getPreconditions().getUid()).isEqualTo(job.getMetadata().getUid());
    assertThat(options.getPreconditions().getResourceVersion())
        .isEqualTo(job.getMetadata().getResourceVersion());
  }

  @Test
  void deletingAJobThatIsAlreadyGoneIsSuccess() {
    Deployment d = cluster.create(openfga().build());
    Job job = createJob(d, "v1.8.0");
    cluster
        .client()
        .batch()
        .v1()
        .jobs()
        .inNamespace(MockCluster.NS)
        .withName("openfga-migrate")
        .delete();

    runner.run(plan(new Step.DeleteJob("test")), observe(d, null, job));

    assertThat(cluster.job("openfga-migrate")).isNull();
  }

  @Test
  void aConcurrentScaleIsNeverOverwritten() {
    Deployment observed = cluster.create(openfga().build());
    cluster.client().apps().deployments().inNamespace(MockCluster.NS).withName("openfga").scale(2);

    assertThatThrownBy(() -> runner.run(plan(new Step.Scale(3)), observe(observed, null, null)))
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    assertThat(cluster.deployment("openfga").getSpec().getReplicas()).isEqualTo(2);
  }

  @Test
  void aFailedConditionWriteStopsThePlanBeforeTheFailedJobIsTouched() {
    Deployment observed = cluster.create(openfga().build());
    Job failed = createJob(observed, "v1.8.0");
    // the Deployment controller writes its own condition after our read
    Deployment live = cluster.deployment("openfga");
    live.setStatus(
        new io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder()
            .addToConditions(
                new DeploymentConditionBuilder().withType("Available").withStatus("True").build())
            .build());
    cluster.client().apps().deployments().inNamespace(MockCluster.NS).resource(live).updateStatus();
    var conditions = FailedCondition.failed(observed, "v1.8.0", NOW).orElseThrow();

    Plan failure =
        plan(
            new Step.SetConditions(conditions, "MigrationFailed=True"),
            new Step.SetRetryAfter(NOW.plusSeconds(60)),
            new Step.DeleteJob("expired"));
    assertThatThrownBy(() -> runner.run(failure, observe(observed, null, failed)))
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));

    Deployment after = cluster.deployment("openfga");
    assertThat(after.getStatus().getConditions())
        .extracting(c -> c.getType())
        .containsExactly("Available");
    assertThat(after.getMetadata().getAnnotations()).doesNotContainKey(Keys.RETRY_AFTER);
    assertThat(cluster.job("openfga-migrate")).isNotNull();
  }

  @Test
  void theRetryDeadlineStaysWhenTheJobCannotBeCreated() {
    Deployment d =
        cluster.create(openfga().annotation(Keys.RETRY_AFTER, "2025-12-31T23:59:00Z").build());
    Job job = buildJob(d, "v1.8.0");
    cluster.failNext("POST", "/jobs", 500, 1);

    assertThatThrownBy(
            () ->
                runner.run(
                    plan(new Step.CreateJob(job, "v1.8.0"), new Step.ClearRetryAfter()),
                    observe(d, null, null)))
        .isInstanceOf(KubernetesClientException.class);
    assertThat(cluster.deployment("openfga").getMetadata().getAnnotations())
        .containsKey(Keys.RETRY_AFTER);
  }

  @Test
  void aJobCreateWithoutAnAnswerStillHoldsItsDatabase() {
    OwnWrites own = new OwnWrites();
    // the client's own retries of a server error end in this same error, only later
    var noRetries =
        new io.fabric8.kubernetes.client.KubernetesClientBuilder()
            .withConfig(
                new io.fabric8.kubernetes.client.ConfigBuilder(cluster.client().getConfiguration())
                    .withRequestRetryBackoffLimit(0)
                    .build())
            .build();
    StepRunner remembering =
        new StepRunner(
            noRetries,
            new EventRecorder(cluster.client(), "test"),
            MigrationMetrics.none(),
            own,
            new Echoes());
    Deployment d = cluster.create(openfga().build());
    Job job = buildJob(d, "v1.8.0");
    // a server error: the Job may have been stored before the API server failed to answer
    cluster.failNext("POST", "/jobs", 500, 1);

    assertThatThrownBy(
            () -> remembering.run(plan(new Step.CreateJob(job, "v1.8.0")), observe(d, null, null)))
        .isInstanceOf(KubernetesClientException.class);
    // another Deployment on the same database waits for it until the cache says
    assertThat(own.jobsCreated(j -> true, NOW))
        .extracting(j -> j.getMetadata().getName())
        .containsExactly("openfga-migrate");

    // a refusal (here: forbidden) created nothing
    OwnWrites refused = new OwnWrites();
    cluster.failNext("POST", "/jobs", 403, 1);
    assertThatThrownBy(
            () ->
                new StepRunner(
                        noRetries,
                        new EventRecorder(cluster.client(), "test"),
                        MigrationMetrics.none(),
                        refused,
                        new Echoes())
                    .run(plan(new Step.CreateJob(job, "v1.8.0")), observe(d, null, null)))
        .isInstanceOfSatisfying(
            StepRunner.Rejected.class,
            r -> assertThat(r.rejection).isEqualTo("injected by the test (HTTP 403)"));
    assertThat(refused.jobsCreated(j -> true, NOW)).isEmpty();
    noRetries.close();
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource({
    "400, true",
    "403, true",
    "413, true",
    "422, true",
    "401, false",
    "404, false",
    "408, false",
    "409, false",
    "429, false",
    "500, false",
    "503, false",
    "0, false"
  })
  void onlyARefusalOfTheObjectItselfIsAJobRejection(int code, boolean rejection) {
    // SPEC section 10: a quota, an admission webhook or policy, an invalid object; the operator's
    // own credentials, a namespace gone, a taken name, throttling and server errors are retried
    assertThat(StepRunner.isRejection(code)).isEqualTo(rejection);
  }

  @Test
  void theEchoOfACreatedJobIsTheVersionTheCreatesAnswerGave() {
    Echoes echoes = new Echoes();
    StepRunner withEchoes =
        new StepRunner(
            cluster.client(),
            new EventRecorder(cluster.client(), "test"),
            MigrationMetrics.none(),
            new OwnWrites(),
            echoes);
    Deployment d = cluster.create(openfga().build());
    Job job = buildJob(d, "v1.8.0");

    withEchoes.run(plan(new Step.CreateJob(job, "v1.8.0")), observe(d, null, null));

    Job created = cluster.job("openfga-migrate");
    // as a relist would show it after somebody else changed it: not the create's echo
    Job changedSince =
        new io.fabric8.kubernetes.api.model.batch.v1.JobBuilder(created)
            .editMetadata()
            .withResourceVersion(created.getMetadata().getResourceVersion() + "0")
            .endMetadata()
            .build();
    assertThat(echoes.isEchoOfCreate(changedSince)).isFalse();
    assertThat(echoes.isEchoOfCreate(created)).isTrue();
  }

  @Test
  void aJobNameTakenByAnUncachedJobIsHandedBackNotRetried() {
    Deployment d = cluster.create(openfga().build());
    Job existing = createJob(d, "v1.7.0");
    Job job = buildJob(d, "v1.8.0");
    int before = cluster.requests().size();

    assertThatThrownBy(
            () -> runner.run(plan(new Step.CreateJob(job, "v1.8.0")), observe(d, null, null)))
        .isInstanceOfSatisfying(
            StepRunner.NameTaken.class,
            e -> {
              assertThat(e.job).isTrue();
              assertThat(e.name)
                  .isEqualTo(
                      new io.javaoperatorsdk.operator.processing.event.ResourceID(
                          "openfga-migrate", MockCluster.NS));
            });
    // one create, not retried; the Job in the way untouched (the next look reads it: Findings)
    assertThat(cluster.requests().subList(before, cluster.requests().size()))
        .filteredOn(r -> r.path().contains("/jobs"))
        .extracting(MockCluster.ApiRequest::method)
        .containsExactly("POST");
    assertThat(cluster.job("openfga-migrate").getMetadata().getResourceVersion())
        .isEqualTo(existing.getMetadata().getResourceVersion());
  }

  @Test
  void updatingTheRecordKeepsUnrelatedLabelsAndRepairsOurs() {
    Deployment d = cluster.create(openfga().build());
    ConfigMap old =
        cluster
            .client()
            .configMaps()
            .inNamespace(MockCluster.NS)
            .resource(
                new ConfigMapBuilder()
                    .withNewMetadata()
                    .withName("openfga-migration-status")
                    .addToLabels(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR)
                    .addToLabels(Keys.COMPONENT, "wrong")
                    .addToLabels("team", "identity")
                    .endMetadata()
                    .addToData(Keys.DATA_VERSION, "v1.13.0")
                    .build())
            .create();

    runner.run(
        plan(new Step.WriteStatus(StatusRecord.data("v1.14.0", NOW, "openfga-migrate"))),
        observe(d, old, null));

    ConfigMap after = cluster.configMap("openfga-migration-status");
    assertThat(after.getData())
        .containsEntry(Keys.DATA_VERSION, "v1.14.0")
        .containsEntry(Keys.DATA_MIGRATED_AT, "2026-01-01T00:00:00Z");
    assertThat(after.getMetadata().getLabels())
        .containsEntry("team", "identity")
        .containsEntry(Keys.COMPONENT, Keys.COMPONENT_MIGRATION)
        .containsEntry(Keys.PART_OF, Keys.PART_OF_OPENFGA);
    assertThat(after.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(r -> assertThat(r.getUid()).isEqualTo(d.getMetadata().getUid()));
  }

  @Test
  void reOwningTheRecordOfARecreatedDeploymentKeepsItsData() {
    Deployment d = cluster.create(openfga().build());
    ConfigMap old =
        cluster
            .client()
            .configMaps()
            .inNamespace(MockCluster.NS)
            .resource(
                new ConfigMapBuilder()
                    .withNewMetadata()
                    .withName("openfga-migration-status")
                    .addToLabels(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR)
                    .addNewOwnerReference()
                    .withApiVersion("apps/v1")
                    .withKind("Deployment")
                    .withName("openfga")
                    .withUid("old-uid")
                    .withController(true)
                    .endOwnerReference()
                    .endMetadata()
                    .withData(
                        Map.of(
                            Keys.DATA_VERSION,
                            "v1.8.0",
                            Keys.DATA_MIGRATED_AT,
                            "2025-01-01T00:00:00Z"))
                    .build())
            .create();

    runner.run(plan(new Step.RepairStatusOwner()), observe(d, old, null));

    ConfigMap after = cluster.configMap("openfga-migration-status");
    assertThat(after.getData()).containsEntry(Keys.DATA_MIGRATED_AT, "2025-01-01T00:00:00Z");
    assertThat(after.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(r -> assertThat(r.getUid()).isEqualTo(d.getMetadata().getUid()));
  }

  @Test
  void aStaleTtlPatchConflictsAndLeavesTheRecordAsItIs() {
    Deployment d = cluster.create(openfga().build());
    Job observed = createJob(d, "v1.8.0");
    cluster
        .client()
        .batch()
        .v1()
        .jobs()
        .inNamespace(MockCluster.NS)
        .withName("openfga-migrate")
        .edit(
            j -> {
              j.getMetadata().getLabels().put("touched", "yes");
              return j;
            });

    assertThatThrownBy(
            () ->
                runner.run(
                    plan(
                        new Step.WriteStatus(StatusRecord.data("v1.8.0", NOW, "openfga-migrate")),
                        new Step.PatchJob(0, Map.of())),
                    observe(d, null, observed)))
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    assertThat(cluster.recordedVersion("openfga")).contains("v1.8.0");
    assertThat(cluster.job("openfga-migrate").getSpec().getTtlSecondsAfterFinished()).isNull();
    assertThat(cluster.job("openfga-migrate").getMetadata().getLabels())
        .containsEntry("touched", "yes");
  }

  @Test
  void eachWriteIsOneRequestWithoutAReadBefore() {
    cluster.close();
    cluster = MockCluster.withoutControllers();
    runner =
        new StepRunner(
            cluster.client(), new EventRecorder(cluster.client(), "test"), MigrationMetrics.none());
    Deployment d = cluster.create(openfga().build());
    Job job = createJob(d, "v1.8.0");
    int before = cluster.requests().size();

    runner.run(
        plan(
            new Step.Scale(3),
            new Step.SetRetryAfter(NOW),
            new Step.PatchJob(0, Map.of()),
            new Step.SetConditions(
                FailedCondition.failed(d, "v1.8.0", NOW).orElseThrow(), "MigrationFailed=True")),
        observe(d, null, job));

    assertThat(cluster.requests().subList(before, cluster.requests().size()))
        .extracting(MockCluster.ApiRequest::method)
        .containsExactly("PATCH", "PATCH", "PATCH", "PATCH");
  }

  @Test
  void listsTheSentEventsOnTheDeploymentButNotOneTheApiServerRefused() {
    cluster.close();
    cluster = MockCluster.withoutControllers();
    runner =
        new StepRunner(
            cluster.client(), new EventRecorder(cluster.client(), "test"), MigrationMetrics.none());
    Deployment d = cluster.create(openfga().build());
    Step.Emit sent = new Step.Emit(EventReason.MigrationDowngrade, "rolled back", "downgrade/a");
    Step.Emit refused = new Step.Emit(EventReason.InvalidConfiguration, "bad value", "invalid/b");
    cluster.failNext("POST", "/events", 403, 1);
    int before = cluster.requests().size();

    runner.run(
        plan(
            refused,
            sent,
            new Step.MarkReported(List.of(Reported.id(d, refused), Reported.id(d, sent)))),
        observe(d, null, null));

    // the list through the status subresource: it moves no generation
    assertThat(cluster.requests().subList(before, cluster.requests().size()))
        .extracting(r -> r.method() + " " + r.path())
        .containsExactly(
            "POST /api/v1/namespaces/openfga/events",
            "POST /api/v1/namespaces/openfga/events",
            "PATCH /apis/apps/v1/namespaces/openfga/deployments/openfga/status");
    // the refused one is sent again by the next pass, which lists it then
    assertThat(cluster.deployment("openfga").getMetadata().getAnnotations())
        .containsEntry(Keys.REPORTED_EVENTS, Reported.id(d, sent));
    assertThat(cluster.events("openfga"))
        .singleElement()
        .satisfies(e -> assertThat(e.getMetadata().getName()).endsWith("." + Reported.id(d, sent)));
  }

  @Test
  void theListIsWrittenOnlyWhenItChangesAndRemovedWhenEmpty() {
    cluster.close();
    cluster = MockCluster.withoutControllers();
    runner =
        new StepRunner(
            cluster.client(), new EventRecorder(cluster.client(), "test"), MigrationMetrics.none());
    Deployment d =
        cluster.create(openfga().annotation(Keys.REPORTED_EVENTS, "0123456789abcdef").build());
    int before = cluster.requests().size();

    runner.run(plan(new Step.MarkReported(List.of("0123456789abcdef"))), observe(d, null, null));
    assertThat(cluster.requests()).hasSize(before);

    runner.run(plan(new Step.MarkReported(List.of())), observe(d, null, null));
    assertThat(cluster.deployment("openfga").getMetadata().getAnnotations())
        .doesNotContainKey(Keys.REPORTED_EVENTS)
        .containsEntry(Keys.MIGRATION_ENABLED, "true");
  }
}
