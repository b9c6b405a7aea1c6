package dev.openfga.operator.scenario;

import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.Controllers;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.testing.Edits;
import dev.openfga.operator.testing.FakeJobController;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.MockCluster;
import dev.openfga.operator.testing.UpstreamChart;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The real operator (JOSDK, informers, HTTP) against the mock API server, with fake Job and
 * Deployment controllers playing the cluster.
 */
class MigrationScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  @RegisterExtension final MockCluster cluster = new MockCluster();

  private void startOperator() {
    cluster.startOperator(MockCluster.config(Duration.ofSeconds(2), 1), "operator-a");
  }

  /** Waits until the operator has recorded this version for the Deployment. */
  private void awaitRecorded(String deployment, String version) {
    await()
        .atMost(WAIT)
        .until(() -> cluster.recordedVersion(deployment).orElse(""), v -> v.equals(version));
  }

  private void setImage(String name, String image) {
    cluster.setImage(name, image);
  }

  @Test
  void firstInstallRunsJobRecordsVersionAndRestoresReplicas() {
    cluster.jobs().script(j -> Script.SUCCEED);
    cluster.create(openfga().version("v1.8.0").build());
    startOperator();

    awaitRecorded("openfga", "v1.8.0");
    await().atMost(WAIT).until(() -> cluster.deployment("openfga").getSpec().getReplicas() == 3);

    Job job = cluster.job("openfga-migrate");
    assertThat(job.getSpec().getTtlSecondsAfterFinished()).isEqualTo(1);
    assertThat(job.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs())
        .containsExactly("migrate");
    assertThat(cluster.configMap("openfga-migration-status").getData())
        .containsEntry(Keys.DATA_JOB_NAME, "openfga-migrate")
        .containsKey(Keys.DATA_MIGRATED_AT);
    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("openfga"), r -> r.contains("MigrationSucceeded"));
    assertThat(cluster.eventReasons("openfga"))
        .containsExactly("MigrationStarted", "MigrationSucceeded");
    assertThat(cluster.jobs().createdByOperator()).hasSize(1);
  }

  @Test
  void upgradeRunsNewJobAndRecordsNewVersion() {
    cluster.jobs().script(j -> Script.SUCCEED);
    cluster.create(openfga().version("v1.8.0").build());
    startOperator();
    awaitRecorded("openfga", "v1.8.0");

    setImage("openfga", "openfga/openfga:v1.9.0");

    awaitRecorded("openfga", "v1.9.0");
    List<String> versions =
        cluster.jobs().createdByOperator().stream().map(FakeJobController::version).toList();
    assertThat(versions).containsExactly("v1.8.0", "v1.9.0");
    // an upgrade never scales: the replicas restored after the first install stay
    assertThat(cluster.deployment("openfga").getSpec().getReplicas()).isEqualTo(3);
  }

  @Test
  void theJobRecordAndPodListsAreSentWhileTheDeploymentListIsUnanswered() {
    // JOSDK alone starts the Job and record informers only once the Deployment informer has
    // synced: with the Deployment list answered after 3 s, they would be asked for after 3 s
    Duration delay = Duration.ofSeconds(3);
    cluster.delayAnswers("GET", p -> p.contains("/deployments?") && !isWatch(p), delay);
    cluster.jobs().script(j -> Script.SUCCEED);
    cluster.create(openfga().version("v1.8.0").build());

    startOperator();

    List<MockCluster.ApiRequest> lists =
        cluster.requests().stream()
            .filter(r -> MockCluster.OPERATOR_AGENT.equals(r.userAgent()))
            .filter(r -> r.method().equals("GET") && !isWatch(r.path()))
            .toList();
    long deployments = firstList(lists, "/deployments?").receivedNanos();
    for (String kind : List.of("/jobs?", "/configmaps?", "/pods?")) {
      assertThat(firstList(lists, kind).receivedNanos() - deployments)
          .as("%s list sent after the Deployment list, ns", kind)
          .isLessThan(delay.toNanos() * 2 / 3);
    }
    // the migration pods only while they run
    assertThat(firstList(lists, "/pods?").path())
        .contains("fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed");
    // and the operator still reconciles from complete caches
    awaitRecorded("openfga", "v1.8.0");
    // JOSDK's own start of the three informers later found them running: one informer each
    for (String kind : List.of("/jobs?", "/configmaps?", "/pods?")) {
      assertThat(
              cluster.requests().stream()
                  .filter(r -> MockCluster.OPERATOR_AGENT.equals(r.userAgent()))
                  .filter(r -> r.method().equals("GET") && r.path().contains(kind)))
          .as("%s lists and watches", kind)
          .hasSize(2);
    }
  }

  private static boolean isWatch(String path) {
    return path.contains("watch=true");
  }

  private static MockCluster.ApiRequest firstList(List<MockCluster.ApiRequest> lists, String kind) {
    return lists.stream()
        .filter(r -> r.path().contains(kind))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " list in " + lists));
  }

  @Test
  void anUpgradeSendsNothingBeforeTheJobCreate() {
    // the skeleton keeps what the Job copies, the record is cached: no read on the critical path
    // (ADR 0016)
    cluster.jobs().script(j -> Script.SUCCEED);
    cluster.create(openfga().version("v1.8.0").build());
    startOperator();
    awaitRecorded("openfga", "v1.8.0");
    int before = cluster.requests().size();

    setImage("openfga", "openfga/openfga:v1.9.0");

    awaitRecorded("openfga", "v1.9.0");
    List<MockCluster.ApiRequest> upgrade =
        cluster.requests().subList(before, cluster.requests().size()).stream()
            .filter(r -> MockCluster.OPERATOR_AGENT.equals(r.userAgent()))
            .toList();
    int create = -1;
    for (int i = 0; i < upgrade.size(); i++) {
      if (upgrade.get(i).method().equals("POST") && upgrade.get(i).path().contains("/jobs")) {
        create = i;
        break;
      }
    }
    assertThat(create).as("the upgrade's Job create").isNotNegative();
    assertThat(upgrade.subList(0, create))
        .as("reads before the Job create")
        .noneMatch(r -> r.method().equals("GET") && !r.path().contains("watch=true"));
    // the Job carries the Deployment's environment although nothing was read before it
    assertThat(cluster.job("openfga-migrate").getSpec().getTemplate().getSpec().getContainers())
        .singleElement()
        .satisfies(c -> assertThat(c.getEnv()).extracting(e -> e.getName()).contains(Keys.URI_ENV));
  }

  @Test
  void failedMigrationReportsKeepsJobAndRetriesExactlyOnceAfterCooldown() {
    cluster
        .jobs()
        .script(j -> cluster.jobs().createdByOperator().size() == 1 ? Script.FAIL : Script.SUCCEED);
    cluster.create(openfga().version("v1.9.0").build());
    startOperator();

    await().atMost(WAIT).until(() -> cluster.fakeCondition("openfga"), c -> c.equals("True"));
    // in order: condition, then the retry deadline on the Deployment, then retention on the Job
    await()
        .atMost(WAIT)
        .until(
            () -> cluster.job("openfga-migrate").getMetadata().getAnnotations(),
            a -> a.containsKey(Keys.RETAIN_UNTIL));
    Job kept = cluster.job("openfga-migrate");
    assertThat(FakeJobController.version(kept)).isEqualTo("v1.9.0");
    assertThat(kept.getMetadata().getAnnotations()).containsKey(Keys.RETRY_AFTER);
    Deployment failed = cluster.deployment("openfga");
    assertThat(failed.getMetadata().getAnnotations())
        .containsEntry(Keys.RETRY_AFTER, kept.getMetadata().getAnnotations().get(Keys.RETRY_AFTER));
    assertThat(kept.getSpec().getTtlSecondsAfterFinished()).isGreaterThan(300);
    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("openfga"), r -> r.contains("MigrationFailed"));
    assertThat(
            cluster.events("openfga").stream()
                .filter(e -> e.getReason().equals("MigrationFailed"))
                .findFirst()
                .orElseThrow()
                .getType())
        .isEqualTo("Warning");

    awaitRecorded("openfga", "v1.9.0");
    assertThat(cluster.jobs().createdByOperator()).hasSize(2);
    await().atMost(WAIT).until(() -> cluster.fakeCondition("openfga"), c -> c.equals("False"));
    assertThat(cluster.deployment("openfga").getMetadata().getAnnotations())
        .doesNotContainKey(Keys.RETRY_AFTER);
    // the Event follows the writes of the transition
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(cluster.eventReasons("openfga"))
                    .containsSubsequence(
                        "MigrationStarted",
                        "MigrationFailed",
                        "MigrationStarted",
                        "MigrationSucceeded"));
  }

  @Test
  void finishedJobForAnOlderVersionIsReplaced() {
    cluster.jobs().script(j -> Script.SUCCEED);
    cluster.create(openfga().version("v1.8.0").build());
    startOperator();
    awaitRecorded("openfga", "v1.8.0");
    String oldUid = cluster.job("openfga-migrate").getMetadata().getUid();

    setImage("openfga", "openfga/openfga:v1.9.0");

    awaitRecorded("openfga", "v1.9.0");
    Job current = cluster.job("openfga-migrate");
    assertThat(current.getMetadata().getUid()).isNotEqualTo(oldUid);
    assertThat(FakeJobController.version(current)).isEqualTo("v1.9.0");
  }

  @Test
  void runningJobForAnOlderVersionIsLeftToFinish() {
    cluster
        .jobs()
        .script(j -> "v1.9.0".equals(FakeJobController.version(j)) ? Script.RUN : Script.SUCCEED);
    cluster.create(openfga().version("v1.9.0").build());
    startOperator();
    await()
        .atMost(WAIT)
        .until(
            () -> cluster.job("openfga-migrate"),
            j ->
                j != null
                    && j.getStatus() != null
                    && Integer.valueOf(1).equals(j.getStatus().getReady()));
    Job running = cluster.job("openfga-migrate");

    setImage("openfga", "openfga/openfga:v1.10.0");

    // the running `openfga migrate` is never interrupted: no delete, no second Job
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(5))
        .until(
            () -> cluster.job("openfga-migrate").getMetadata().getUid(),
            uid -> uid.equals(running.getMetadata().getUid()));
    assertThat(cluster.jobs().createdByOperator()).hasSize(1);

    cluster.jobs().complete(running);

    awaitRecorded("openfga", "v1.10.0");
    assertThat(cluster.jobs().createdByOperator().stream().map(FakeJobController::version))
        .containsExactly("v1.9.0", "v1.10.0");
  }

  @Test
  void jobWhosePodNeverStartedIsReplacedWhenTheImageIsFixed() {
    cluster
        .jobs()
        .script(
            j ->
                "v9.9.9-typo".equals(FakeJobController.version(j))
                    ? Script.NEVER_START
                    : Script.SUCCEED);
    cluster.create(openfga().version("v9.9.9-typo").build());
    startOperator();
    await()
        .atMost(WAIT)
        .until(
            () -> cluster.job("openfga-migrate"),
            j ->
                j != null
                    && j.getStatus() != null
                    && Integer.valueOf(1).equals(j.getStatus().getActive()));

    setImage("openfga", "openfga/openfga:v1.9.0");

    awaitRecorded("openfga", "v1.9.0");
    assertThat(cluster.jobs().createdByOperator().stream().map(FakeJobController::version))
        .containsExactly("v9.9.9-typo", "v1.9.0");
  }

  @Test
  void legacyHelmHookJobOfTheSameReleaseIsAdopted() {
    cluster.jobs().script(j -> Script.SUCCEED);
    Job hook = UpstreamChart.load(cluster.client(), UpstreamChart.HOOK_MODE, Job.class);
    Job legacy =
        cluster.client().batch().v1().jobs().inNamespace(MockCluster.NS).resource(hook).create();
    Deployment upstream =
        UpstreamChart.load(cluster.client(), UpstreamChart.OPERATOR_MODE, Deployment.class);
    cluster.create(upstream);
    startOperator();

    awaitRecorded("openfga", "v1.18.3");
    Job ours = cluster.job("openfga-migrate");
    assertThat(ours.getMetadata().getUid()).isNotEqualTo(legacy.getMetadata().getUid());
    assertThat(ours.getMetadata().getLabels())
        .containsEntry(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR);
    // the Event follows the record (design.md, write order)
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(cluster.eventReasons("openfga"))
                    .contains("LegacyHookJobAdopted", "MigrationStarted", "MigrationSucceeded"));
    // the stock chart sets 3 replicas and no desired-replicas: the operator leaves them alone
    assertThat(cluster.deployment("openfga").getSpec().getReplicas()).isEqualTo(3);
  }

  @Test
  void foreignJobWithTheJobNameIsLeftUntouchedWithAWarning() {
    Job created = cluster.createForeignJob("openfga-migrate");
    cluster.create(openfga().version("v1.9.0").build());
    startOperator();

    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("openfga"), r -> r.contains("MigrationJobConflict"));
    Job after = cluster.job("openfga-migrate");
    assertThat(after.getMetadata().getUid()).isEqualTo(created.getMetadata().getUid());
    assertThat(after.getMetadata().getResourceVersion())
        .isEqualTo(created.getMetadata().getResourceVersion());
    assertThat(cluster.recordedVersion("openfga")).isEmpty();
    assertThat(cluster.events("openfga").get(0).getMessage())
        .contains("openfga/openfga-migrate", "delete or rename it");
    // SPEC rule 7: later looks read the name directly instead of creating again and again
    await()
        .atMost(WAIT)
        .until(
            () ->
                cluster.requests().stream()
                    .filter(
                        r -> r.method().equals("GET") && r.path().endsWith("/jobs/openfga-migrate"))
                    .count(),
            n -> n >= 3);
    assertThat(
            cluster.requests().stream()
                .filter(r -> r.userAgent().startsWith("openfga-operator"))
                .filter(r -> r.method().equals("POST") && r.path().contains("/jobs")))
        .as("the operator's Job creates")
        .hasSize(1);
  }

  @Test
  void foreignConfigMapWithTheStatusNameIsLeftUntouchedAndNoJobRuns() {
    ConfigMap foreign =
        new ConfigMapBuilder()
            .withNewMetadata()
            .withName("openfga-migration-status")
            .withNamespace(MockCluster.NS)
            .endMetadata()
            .addToData("version", "mine")
            .build();
    ConfigMap created =
        cluster.client().configMaps().inNamespace(MockCluster.NS).resource(foreign).create();
    cluster.create(openfga().version("v1.9.0").build());
    startOperator();

    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("openfga"), r -> r.contains("MigrationStatusConflict"));
    assertThat(cluster.configMap("openfga-migration-status").getMetadata().getResourceVersion())
        .isEqualTo(created.getMetadata().getResourceVersion());
    assertThat(cluster.job("openfga-migrate")).isNull();
    assertThat(cluster.jobs().created()).isEmpty();
  }

  @Test
  void memoryAndSqliteNeedNoJobButGetTheirReplicas() {
    cluster.create(openfga().name("mem").engine("memory").build());
    cluster.create(
        openfga().name("lite").engine("sqlite").initContainer(Fixtures.sqliteMigrate()).build());
    cluster.create(openfga().name("noinit").engine("sqlite").build());
    startOperator();

    await().atMost(WAIT).until(() -> cluster.deployment("mem").getSpec().getReplicas() == 3);
    await().atMost(WAIT).until(() -> cluster.deployment("lite").getSpec().getReplicas() == 3);
    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("lite"), r -> r.contains("MigrationSkipped"));
    // sqlite without an openfga migrate initContainer: told what to add, left at 0
    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("noinit"), r -> r.contains("SqliteMigrationMissing"));
    assertThat(cluster.events("noinit").get(0).getMessage()).contains("initContainer", "migrate");
    assertThat(cluster.deployment("noinit").getSpec().getReplicas()).isZero();
    assertThat(cluster.jobs().created()).isEmpty();
    assertThat(cluster.eventReasons("mem")).isEmpty();
  }

  @Test
  void aSqliteFirstInstallBlockedForItsInitContainerIsScaledOnceFixed() {
    cluster.create(openfga().name("lite").engine("sqlite").build());
    startOperator();
    await()
        .atMost(WAIT)
        .until(
            () -> cluster.configMap("lite-migration-status"),
            cm -> cm != null && "true".equals(cm.getData().get(Keys.DATA_RESTORE_REPLICAS)));
    assertThat(cluster.eventReasons("lite")).containsExactly("SqliteMigrationMissing");
    assertThat(cluster.events("lite").get(0).getMessage()).contains("then scaled to 3 replicas");
    assertThat(cluster.deployment("lite").getSpec().getReplicas()).isZero();

    // the fix: a new pod template, nothing else
    Edits.edit(
        cluster.client().apps().deployments().inNamespace(MockCluster.NS).withName("lite"),
        d -> d.getSpec().getTemplate().getSpec().getInitContainers().add(Fixtures.sqliteMigrate()));

    await().atMost(WAIT).until(() -> cluster.deployment("lite").getSpec().getReplicas() == 3);
    await()
        .atMost(WAIT)
        .until(
            () -> cluster.configMap("lite-migration-status").getData(),
            data -> !data.containsKey(Keys.DATA_RESTORE_REPLICAS));
    // no version: a later switch to postgres still runs its first migration
    assertThat(cluster.recordedVersion("lite")).isEmpty();
    assertThat(cluster.jobs().created()).isEmpty();
  }

  @Test
  void missingContainerGivesAWarningAndNothingElse() {
    cluster.create(openfga().annotation(Keys.CONTAINER_NAME, "authz").build());
    startOperator();

    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("openfga"), r -> r.contains("ContainerNotFound"));
    assertThat(cluster.events("openfga").get(0).getMessage())
        .contains("\"authz\"", "openfga, proxy");
    assertThat(cluster.jobs().created()).isEmpty();
    assertThat(cluster.deployment("openfga").getSpec().getReplicas()).isZero();
    assertThat(cluster.eventReasons("openfga")).containsOnlyOnce("ContainerNotFound");
  }

  @Test
  void conditionWrittenByTheDeploymentControllerSurvivesTheOperatorsWrites() {
    cluster.jobs().script(j -> Script.FAIL);
    cluster.create(openfga().version("v1.9.0").replicas(1).build());
    await().atMost(WAIT).until(() -> conditionTypes("openfga"), t -> t.contains("Available"));
    startOperator();

    await().atMost(WAIT).until(() -> cluster.fakeCondition("openfga"), c -> c.equals("True"));
    cluster
        .client()
        .apps()
        .deployments()
        .inNamespace(MockCluster.NS)
        .withName("openfga")
        .patch(
            PatchContext.of(PatchType.JSON),
            "[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":2}]");
    await().atMost(WAIT).until(() -> cluster.deployment("openfga").getStatus().getReplicas() == 2);

    assertThat(conditionTypes("openfga"))
        .containsExactlyInAnyOrder("Available", Keys.CONDITION_TYPE);
    assertThat(cluster.deployment("openfga").getSpec().getReplicas()).isEqualTo(2);
  }

  private List<String> conditionTypes(String name) {
    Deployment d = cluster.deployment(name);
    if (d.getStatus() == null || d.getStatus().getConditions() == null) {
      return List.of();
    }
    return d.getStatus().getConditions().stream().map(c -> c.getType()).toList();
  }

  @Test
  void restartedOperatorAdoptsTheRunningJobAndNeverCreatesASecond() {
    cluster.jobs().script(j -> Script.RUN);
    cluster.create(openfga().version("v1.9.0").build());
    Controllers first =
        cluster.startOperator(MockCluster.config(Duration.ofSeconds(2), 1), "operator-a");
    await()
        .atMost(WAIT)
        .until(() -> cluster.job("openfga-migrate"), j -> j != null && j.getStatus() != null);
    Job running = cluster.job("openfga-migrate");
    first.close();

    cluster.startOperator(MockCluster.config(Duration.ofSeconds(2), 1), "operator-b");
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(4))
        .until(() -> cluster.jobs().created().size() == 1);

    cluster.jobs().complete(running);
    awaitRecorded("openfga", "v1.9.0");
    assertThat(cluster.jobs().created()).hasSize(1);
  }

  @Test
  void aRestartedOperatorSendsNoEventAboutALastingStateItReportedBefore() {
    // SPEC sections 5 and 8: a sqlite skip, a rollback and a bad annotation are each reported
    // once; a restart (nothing in memory, the Events gone with their TTL) sends nothing again
    cluster.jobs().script(j -> Script.SUCCEED);
    cluster.create(
        openfga()
            .name("lite")
            .engine("sqlite")
            .initContainer(Fixtures.sqliteMigrate())
            .replicas(1)
            .build());
    cluster.create(openfga().name("rolled").version("v1.9.0").replicas(1).build());
    cluster.create(
        openfga()
            .name("odd")
            .version("v1.9.0")
            .annotation(Keys.DESIRED_REPLICAS, "three")
            .replicas(1)
            .build());
    var firstMetrics = new SimpleMeterRegistry();
    Controllers first =
        cluster.startOperator(
            MockCluster.config(Duration.ofSeconds(2), 1), "operator-a", firstMetrics);
    awaitRecorded("rolled", "v1.9.0");
    setImage("rolled", "openfga/openfga:v1.8.0");
    await()
        .atMost(WAIT)
        .until(
            () ->
                deploymentsIn(firstMetrics, "skipped") == 1
                    && deploymentsIn(firstMetrics, "downgraded") == 1
                    && deploymentsIn(firstMetrics, "up_to_date") == 1);
    assertThat(cluster.eventReasons("lite")).containsExactly("MigrationSkipped");
    assertThat(cluster.eventReasons("rolled")).contains("MigrationDowngrade");
    assertThat(cluster.eventReasons("odd")).contains("InvalidConfiguration");
    first.close();
    cluster.client().v1().events().inNamespace(MockCluster.NS).delete();
    int before = cluster.requests().size();

    var secondMetrics = new SimpleMeterRegistry();
    cluster.startOperator(
        MockCluster.config(Duration.ofSeconds(2), 1), "operator-b", secondMetrics);
    await()
        .atMost(WAIT)
        .until(
            () ->
                deploymentsIn(secondMetrics, "skipped") == 1
                    && deploymentsIn(secondMetrics, "downgraded") == 1
                    && deploymentsIn(secondMetrics, "up_to_date") == 1);

    assertThat(cluster.requests().subList(before, cluster.requests().size()))
        .filteredOn(r -> MockCluster.OPERATOR_AGENT.equals(r.userAgent()))
        .as("writes of the restarted operator")
        .extracting(r -> r.method() + " " + r.path())
        .noneMatch(r -> !r.startsWith("GET "));
    assertThat(cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems())
        .isEmpty();
  }

  /** The operator's gauge of its Deployments in this state (its reconciles done). */
  private static double deploymentsIn(SimpleMeterRegistry registry, String state) {
    var gauge = registry.find("openfga.operator.deployments").tag("state", state).gauge();
    return gauge == null ? 0 : gauge.value();
  }

  /** The test configuration with leader election. */
  private static dev.openfga.operator.config.OperatorConfig elected() {
    var config = MockCluster.config(Duration.ofSeconds(2), 1);
    return new dev.openfga.operator.config.OperatorConfig(
        config.watchNamespaces(),
        true,
        config.leaseNamespace(),
        config.metricsAddress(),
        config.healthAddress(),
        config.backoffLimit(),
        config.activeDeadlineSeconds(),
        config.ttlSecondsAfterFinished(),
        config.retryCooldown());
  }

  @Test
  void aStoppingLeaderFinishesItsReconcileBeforeItHandsTheLeaseBack() {
    // a rolling update of the operator: the next leader must not plan while this one's Job
    // create is still on its way (it would not see the Job, nor remember it)
    cluster.jobs().script(j -> Script.RUN);
    cluster.delayAnswers("POST", p -> p.contains("/jobs"), Duration.ofSeconds(2));
    Controllers a = cluster.startOperator(elected(), "operator-a");
    cluster.create(openfga().version("v1.9.0").build());
    await()
        .atMost(WAIT)
        .until(
            () ->
                cluster.requests().stream()
                    .anyMatch(r -> r.method().equals("POST") && r.path().contains("/jobs")));
    long stopping = System.nanoTime();

    a.close();

    List<MockCluster.ApiRequest> after =
        cluster.requests().stream().filter(r -> r.receivedNanos() >= stopping).toList();
    int event = -1;
    int release = -1;
    for (int i = 0; i < after.size(); i++) {
      MockCluster.ApiRequest r = after.get(i);
      if (event < 0 && r.method().equals("POST") && r.path().contains("/events")) {
        event = i;
      }
      if (!r.method().equals("GET") && r.path().contains("/leases/")) {
        release = i;
      }
    }
    assertThat(event)
        .as("the reconcile's MigrationStarted Event, after the Job's answer")
        .isNotNegative();
    assertThat(release).as("the Lease handed back after it").isGreaterThan(event);
  }

  @Test
  void withLeaderElectionOnlyOneOfTwoInstancesActs() {
    cluster.jobs().script(j -> Script.SUCCEED);
    var elected = elected();
    Controllers a = cluster.startOperator(elected, "operator-a");
    Controllers b = cluster.startOperator(elected, "operator-b");
    cluster.create(openfga().version("v1.9.0").build());

    awaitRecorded("openfga", "v1.9.0");
    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("openfga"), r -> r.contains("MigrationSucceeded"));
    var lease =
        cluster.client().leases().inNamespace(MockCluster.NS).withName(Keys.LEADER_LEASE).get();
    // the standby is ready too: it must not block a rollout of the operator's own Deployment
    await().atMost(WAIT).until(() -> a.isReady() && b.isReady());
    assertThat(lease.getSpec().getHolderIdentity()).isIn("operator-a", "operator-b");
    assertThat(cluster.jobs().created()).hasSize(1);
    // each transition is reported once, by the leader only
    assertThat(cluster.events("openfga"))
        .allSatisfy(
            e ->
                assertThat(e.getReportingInstance())
                    .isEqualTo(lease.getSpec().getHolderIdentity()));
    assertThat(cluster.eventReasons("openfga"))
        .containsExactly("MigrationStarted", "MigrationSucceeded");
  }

  @Test
  void theFailedPodsExitCodeAndLastLogLinesOutliveTheJob() {
    cluster
        .jobs()
        .script(j -> cluster.jobs().createdByOperator().size() == 1 ? Script.FAIL : Script.RUN);
    cluster.create(openfga().version("v1.9.0").build());
    startOperator();

    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("openfga"), r -> r.contains("MigrationFailed"));
    String event =
        cluster.events("openfga").stream()
            .filter(e -> e.getReason().equals("MigrationFailed"))
            .findFirst()
            .orElseThrow()
            .getMessage();
    assertThat(event).contains("exit code 1 (Error)", "password authentication failed for user");
    await()
        .atMost(WAIT)
        .until(
            () -> cluster.deployments().migrationCondition(cluster.deployment("openfga")),
            c -> c.isPresent() && c.get().getMessage().contains("SQLSTATE 28P01"));
    assertThat(
            cluster
                .deployments()
                .migrationCondition(cluster.deployment("openfga"))
                .orElseThrow()
                .getMessage())
        .startsWith(
            "Database migration failed for version v1.9.0. Check migration job logs. Pod openfga-migrate-");

    // the failed Job is replaced after the cooldown; the evidence stays on the Deployment
    await().atMost(WAIT).until(() -> cluster.jobs().createdByOperator().size() == 2);
    assertThat(
            cluster
                .deployments()
                .migrationCondition(cluster.deployment("openfga"))
                .orElseThrow()
                .getMessage())
        .contains("password authentication failed");
  }
}
