package dev.openfga.operator.status;

import static dev.openfga.operator.testing.Fixtures.NOW;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.Messages;
import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.status.StatusView.Observed;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The status view from objects and a time: the planner's state, in words. */
class StatusViewTest {

  private static final String OLD = "v1.13.0";
  private static final String NEW = Fixtures.VERSION; // the image's version, v1.14.0

  private static StatusRow row(Deployment d, ConfigMap cm, Job job, List<Event> events) {
    return StatusView.row(
            new Observed(d, Optional.ofNullable(cm), Optional.ofNullable(job), events), NOW)
        .orElseThrow();
  }

  private static StatusRow row(Deployment d, ConfigMap cm, Job job) {
    return row(d, cm, job, List.of());
  }

  private static ConfigMap recorded(Deployment d, String version) {
    return Fixtures.statusConfigMap(d, version).build();
  }

  private static Event event(String name, String reason, String message, String lastTimestamp) {
    return new EventBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(Fixtures.NAMESPACE)
        .endMetadata()
        .withNewInvolvedObject()
        .withApiVersion("apps/v1")
        .withKind("Deployment")
        .withName(Fixtures.NAME)
        .withNamespace(Fixtures.NAMESPACE)
        .withUid(Fixtures.UID)
        .endInvolvedObject()
        .withType(reason.equals("MigrationFailed") ? "Warning" : "Normal")
        .withReason(reason)
        .withMessage(message)
        .withLastTimestamp(lastTimestamp)
        .build();
  }

  @Test
  void waitingForAnotherDeploymentsJobOrForAPodWhoseJobIsGone() {
    // two Deployments of the fixture's shape take the same URI: one database
    Deployment d = Fixtures.deployment().build();
    Deployment other = Fixtures.deployment().name("other").uid("other-uid").build();
    Job running = Fixtures.job(other, NEW).running().build();
    Pod left = Fixtures.migrationPod(running, "Running");
    left.getMetadata().setOwnerReferences(List.of()); // its Job deleted with --cascade=orphan
    Pod unlabelled = Fixtures.migrationPod(running, "Running");
    unlabelled.getMetadata().setOwnerReferences(List.of());
    unlabelled.getMetadata().getLabels().remove(Keys.JOB_NAME_LABEL);

    StatusRow forJob =
        StatusView.row(
                new Observed(
                    d, Optional.empty(), Optional.empty(), List.of(), List.of(running), List.of()),
                NOW)
            .orElseThrow();
    StatusRow forPod =
        StatusView.row(
                new Observed(
                    d, Optional.empty(), Optional.empty(), List.of(), List.of(), List.of(left)),
                NOW)
            .orElseThrow();
    StatusRow forUnlabelled =
        StatusView.row(
                new Observed(
                    d,
                    Optional.empty(),
                    Optional.empty(),
                    List.of(),
                    List.of(),
                    List.of(unlabelled)),
                NOW)
            .orElseThrow();

    assertThat(forJob.state()).isEqualTo(State.WAITING);
    assertThat(forJob.stateText()).isEqualTo("waiting for Deployment default/other");
    assertThat(forPod.state()).isEqualTo(State.WAITING);
    assertThat(forPod.stateText())
        .isEqualTo("waiting for migration pod default/other-migrate-x7k2p");
    assertThat(forPod.summary()).contains("(Job other-migrate)");
    assertThat(forUnlabelled.stateText())
        .isEqualTo("waiting for migration pod default/other-migrate-x7k2p");
  }

  @Test
  void upToDate() {
    Deployment d = Fixtures.deployment().replicas(3).build();
    Job done = Fixtures.job(d, NEW).complete(NOW.minusSeconds(60)).ttl(300).build();

    StatusRow row = row(d, recorded(d, NEW), done);

    assertThat(row.state()).isEqualTo(State.UP_TO_DATE);
    assertThat(row.stateText()).isEqualTo("up to date");
    assertThat(row.desiredVersion()).contains(NEW);
    assertThat(row.migratedVersion()).contains(NEW);
    assertThat(row.job())
        .hasValueSatisfying(
            j -> {
              assertThat(j.name()).isEqualTo("openfga-migrate");
              assertThat(j.status()).isEqualTo("complete");
              assertThat(j.version()).contains(NEW);
              assertThat(j.managed()).isTrue();
            });
    assertThat(row.retryAt()).isEmpty();
  }

  @Test
  void migratingWithoutAJobYetAndWhileTheJobRuns() {
    Deployment d = Fixtures.deployment().build();

    StatusRow firstInstall = row(d, null, null);
    assertThat(firstInstall.state()).isEqualTo(State.MIGRATING);
    assertThat(firstInstall.stateText()).isEqualTo("migrating");
    assertThat(firstInstall.migratedVersion()).isEmpty();
    assertThat(firstInstall.job()).isEmpty();

    StatusRow running = row(d, recorded(d, OLD), Fixtures.job(d, NEW).running().build());
    assertThat(running.state()).isEqualTo(State.MIGRATING);
    assertThat(running.stateText()).isEqualTo("migrating");
    assertThat(running.migratedVersion()).contains(OLD);
    assertThat(running.job().orElseThrow().status()).isEqualTo("running");
  }

  @Test
  void aRefusedPodsReasonIsMaskedAsTheOperatorMasksIt() {
    Deployment d =
        Fixtures.deployment()
            .envVar("OPENFGA_DATASTORE_URI", "postgres://openfga@db:5432/openfga")
            .envVar("OPENFGA_DATASTORE_PASSWORD", "Lit3ralPw")
            .build();
    Job refused = Fixtures.job(d, NEW).build();
    Event failedCreate =
        new EventBuilder()
            .withNewMetadata()
            .withName("openfga-migrate.1")
            .withNamespace(Fixtures.NAMESPACE)
            .endMetadata()
            .withNewInvolvedObject()
            .withKind("Job")
            .withName(refused.getMetadata().getName())
            .withNamespace(Fixtures.NAMESPACE)
            .withUid(refused.getMetadata().getUid())
            .endInvolvedObject()
            .withReason("FailedCreate")
            .withType("Warning")
            .withMessage(
                "Error creating: admission webhook denied env postgres://u:S3cretPw@db/x and"
                    + " OPENFGA_DATASTORE_PASSWORD=Lit3ralPw")
            .build();

    StatusRow row = row(d, null, refused, List.of(failedCreate));

    assertThat(row.state()).isEqualTo(State.BLOCKED);
    assertThat(row.summary())
        .contains("admission webhook denied")
        .doesNotContain("S3cretPw", "Lit3ralPw");
  }

  @Test
  void failedRetriesWhenTheJobIsNoLongerKept() {
    Deployment d =
        Fixtures.deployment().failedCondition(NEW).retryAfter(NOW.plusSeconds(42)).build();
    // kept for the diagnostics window beyond the retry deadline: the retry waits for it
    Job failed =
        Fixtures.job(d, NEW)
            .failed(NOW.minusSeconds(18))
            .retention(NOW.plusSeconds(42), NOW.plusSeconds(282))
            .ttl(582)
            .build();

    StatusRow row = row(d, recorded(d, OLD), failed);

    assertThat(row.state()).isEqualTo(State.FAILED);
    assertThat(row.stateText()).isEqualTo("failed, retrying in 4m42s");
    assertThat(row.retryAt()).contains(NOW.plusSeconds(282));
    assertThat(row.retryIn()).contains(Duration.ofSeconds(282));
    assertThat(row.job().orElseThrow().status()).isEqualTo("failed");
    assertThat(row.summary()).contains("failed");
  }

  @Test
  void failedRetryingIn42s() {
    Deployment d =
        Fixtures.deployment().failedCondition(NEW).retryAfter(NOW.plusSeconds(42)).build();
    Job failed =
        Fixtures.job(d, NEW)
            .failed(NOW.minusSeconds(300))
            .retention(NOW.plusSeconds(42), NOW.plusSeconds(42))
            .ttl(342)
            .build();

    StatusRow row = row(d, recorded(d, OLD), failed);

    assertThat(row.stateText()).isEqualTo("failed, retrying in 42s");
  }

  @Test
  void failedShowsTheRetryTheOperatorRecordedWhateverItsTimings() {
    // an operator run with --ttl-seconds-after-finished=5 --retry-cooldown=10s: the Job failed a
    // second ago and is replaced 9 s from now, not after the default 5 minutes of diagnostics
    Instant failedAt = NOW.minusSeconds(1);
    Deployment d =
        Fixtures.deployment().failedCondition(NEW).retryAfter(failedAt.plusSeconds(10)).build();
    Job failed =
        Fixtures.job(d, NEW)
            .failed(failedAt)
            .retention(failedAt.plusSeconds(10), failedAt.plusSeconds(10))
            .ttl(310)
            .build();

    StatusRow row = row(d, recorded(d, OLD), failed);

    assertThat(row.state()).isEqualTo(State.FAILED);
    assertThat(row.stateText()).isEqualTo("failed, retrying in 9s");
    assertThat(row.retryAt()).contains(NOW.plusSeconds(9));
    assertThat(row.summary())
        .isEqualTo(
            "migration to "
                + NEW
                + " failed; retrying after "
                + Timestamps.format(NOW.plusSeconds(9)));
  }

  @Test
  void aLaterRetryAfterSetOnTheDeploymentWins() {
    // a person holds the retries: the operator copies the later time onto the Job and waits
    Deployment d =
        Fixtures.deployment().failedCondition(NEW).retryAfter(NOW.plusSeconds(3600)).build();
    Job failed =
        Fixtures.job(d, NEW)
            .failed(NOW.minusSeconds(1))
            .retention(NOW.plusSeconds(9), NOW.plusSeconds(9))
            .ttl(310)
            .build();

    StatusRow row = row(d, recorded(d, OLD), failed);

    assertThat(row.stateText()).isEqualTo("failed, retrying in 60m");
    assertThat(row.retryAt()).contains(NOW.plusSeconds(3600));
  }

  @Test
  void failedBeforeTheOperatorRecordedTheRetentionOnTheJobSaysOnlyWhatIsKnown() {
    // the Deployment's retry-after is written, the Job's retention not yet: the next Job comes
    // then at the earliest (the retention, which depends on the operator's flags, may be later)
    Deployment d = Fixtures.deployment().retryAfter(NOW.plusSeconds(10)).build();
    StatusRow lowerBound = row(d, recorded(d, OLD), Fixtures.job(d, NEW).failed(NOW).build());
    assertThat(lowerBound.state()).isEqualTo(State.FAILED);
    assertThat(lowerBound.stateText()).isEqualTo("failed, retrying in 10s at the earliest");
    assertThat(lowerBound.retryAt()).isEmpty();
    assertThat(lowerBound.summary())
        .endsWith(
            "; retrying after " + Timestamps.format(NOW.plusSeconds(10)) + " at the earliest");

    Deployment nothingYet = Fixtures.deployment().build();
    StatusRow unknown =
        row(
            nothingYet,
            recorded(nothingYet, OLD),
            Fixtures.job(nothingYet, NEW).failed(NOW).build());
    assertThat(unknown.state()).isEqualTo(State.FAILED);
    assertThat(unknown.stateText()).isEqualTo("failed, retry time not recorded yet");
    assertThat(unknown.retryAt()).isEmpty();
    assertThat(unknown.retryIn()).isEmpty();
    assertThat(unknown.summary())
        .isEqualTo("migration to " + NEW + " failed; the retry time is not recorded yet");
  }

  @Test
  void aJobWithOnlyFailureTargetHasAProvisionalRetentionSoOnlyALowerBound() {
    // its diagnostics window starts when Failed arrives: the retention may still grow
    Deployment d =
        Fixtures.deployment().failedCondition(NEW).retryAfter(NOW.plusSeconds(10)).build();
    Job failing =
        Fixtures.job(d, NEW)
            .failureTarget(NOW)
            .retention(NOW.plusSeconds(10), NOW.plusSeconds(10))
            .ttl(310)
            .build();

    StatusRow row = row(d, recorded(d, OLD), failing);

    assertThat(row.state()).isEqualTo(State.FAILED);
    assertThat(row.stateText()).isEqualTo("failed, retrying in 10s at the earliest");
    assertThat(row.retryAt()).isEmpty();
    assertThat(row.job().orElseThrow().status()).isEqualTo("failing");
  }

  @Test
  void failedPastTheDeadlineRetriesNow() {
    Deployment d = Fixtures.deployment().retryAfter(NOW.minusSeconds(5)).build();
    Job failed =
        Fixtures.job(d, NEW)
            .failed(NOW.minusSeconds(400))
            .retention(NOW.minusSeconds(5), NOW.minusSeconds(5))
            .ttl(600)
            .build();

    assertThat(row(d, recorded(d, OLD), failed).stateText()).isEqualTo("failed, retrying now");
  }

  @Test
  void cooldownWaitsForTheDeploymentsRetryAfter() {
    Deployment d =
        Fixtures.deployment().failedCondition(NEW).retryAfter(NOW.plusSeconds(42)).build();

    StatusRow row = row(d, recorded(d, OLD), null);

    assertThat(row.state()).isEqualTo(State.COOLDOWN);
    assertThat(row.stateText()).isEqualTo("failed, retrying in 42s");
    assertThat(row.retryAt()).contains(NOW.plusSeconds(42));
    assertThat(row.job()).isEmpty();
  }

  @Test
  void blockedByAForeignJob() {
    Deployment d = Fixtures.deployment().build();
    Job foreign =
        new JobBuilder()
            .withNewMetadata()
            .withName("openfga-migrate")
            .withNamespace(Fixtures.NAMESPACE)
            .withUid("someone-else")
            .endMetadata()
            .build();

    StatusRow row = row(d, null, foreign);

    assertThat(row.state()).isEqualTo(State.BLOCKED);
    assertThat(row.stateText()).isEqualTo("blocked by a Job collision");
    assertThat(row.summary()).contains("delete or rename it");
    assertThat(row.job().orElseThrow().managed()).isFalse();
    assertThat(StatusTable.jobCell(row.job().orElseThrow()))
        .isEqualTo("openfga-migrate (foreign, pending)");
  }

  @Test
  void blockedByAForeignConfigMap() {
    Deployment d = Fixtures.deployment().build();
    ConfigMap foreign =
        new io.fabric8.kubernetes.api.model.ConfigMapBuilder(recorded(d, NEW))
            .editMetadata()
            .withLabels(java.util.Map.of())
            .withOwnerReferences()
            .endMetadata()
            .build();

    StatusRow row = row(d, foreign, null);

    assertThat(row.state()).isEqualTo(State.BLOCKED);
    assertThat(row.stateText()).isEqualTo("blocked by a ConfigMap collision");
    assertThat(row.migratedVersion()).as("not this Deployment's record").isEmpty();
  }

  @Test
  void blockedByBadInput() {
    Deployment missing = Fixtures.deployment().annotation(Keys.CONTAINER_NAME, "server").build();
    StatusRow noContainer = row(missing, null, null);
    assertThat(noContainer.stateText()).isEqualTo("blocked: container not found");
    assertThat(noContainer.desiredVersion()).isEmpty();

    Deployment badImage = Fixtures.deployment().image("openfga/openfga:v1 .0").build();
    assertThat(row(badImage, null, null).stateText()).isEqualTo("blocked: invalid configuration");
  }

  @Test
  void aJobTheApiServerRejectedIsShownWithItsAnswerUntilAJobIsCreated() {
    String answer = "jobs.batch \"openfga-migrate\" is forbidden: exceeded quota: jobs (HTTP 403)";
    // as the operator recorded the refusal
    Deployment rejected =
        Fixtures.deployment()
            .condition(
                Keys.CONDITION_TYPE,
                "True",
                Keys.REASON_JOB_REJECTED,
                Messages.conditionRejected("openfga-migrate", NEW, answer))
            .build();

    StatusRow row = row(rejected, recorded(rejected, OLD), null);

    assertThat(row.state()).isEqualTo(State.BLOCKED);
    assertThat(row.stateText()).isEqualTo("blocked: Job rejected");
    assertThat(row.summary())
        .isEqualTo(
            "Migration Job openfga-migrate for version "
                + NEW
                + " was rejected by the API server: "
                + answer);
    // the Job created since: migrating, whatever the condition still says
    Job created = Fixtures.job(rejected, NEW).running().build();
    assertThat(row(rejected, recorded(rejected, OLD), created).stateText()).isEqualTo("migrating");
    // a failure is no refusal
    Deployment failed = Fixtures.deployment().failedCondition(OLD).build();
    assertThat(row(failed, recorded(failed, OLD), null).stateText()).isEqualTo("migrating");
  }

  @Test
  void skippedEngines() {
    Deployment d =
        Fixtures.deployment()
            .containers(
                new ContainerBuilder()
                    .withName("openfga")
                    .withImage(Fixtures.IMAGE)
                    .withEnv(Fixtures.env(Keys.ENGINE_ENV, "sqlite"))
                    .build())
            .build();

    Deployment memory =
        Fixtures.deployment()
            .containers(
                new ContainerBuilder()
                    .withName("openfga")
                    .withImage(Fixtures.IMAGE)
                    .withEnv(Fixtures.env(Keys.ENGINE_ENV, "memory"))
                    .build())
            .build();
    Deployment sqlite =
        Fixtures.deployment()
            .containers(
                new ContainerBuilder()
                    .withName("openfga")
                    .withImage(Fixtures.IMAGE)
                    .withEnv(Fixtures.env(Keys.ENGINE_ENV, "sqlite"))
                    .build())
            .initContainer(Fixtures.sqliteMigrate())
            .build();

    assertThat(row(memory, null, null).state()).isEqualTo(State.SKIPPED);
    assertThat(row(memory, null, null).stateText()).isEqualTo("skipped: datastore engine memory");
    assertThat(row(sqlite, null, null).stateText()).isEqualTo("skipped: datastore engine sqlite");
    assertThat(row(d, null, null).stateText())
        .isEqualTo("blocked: sqlite needs an openfga migrate initContainer");
  }

  @Test
  void deploymentsTheOperatorIgnoresAreLeftOut() {
    Deployment notOptedIn = Fixtures.deployment().annotation(Keys.MIGRATION_ENABLED, "yes").build();
    Deployment b = Fixtures.deployment().name("b").build();
    Deployment a = Fixtures.deployment().name("a").build();

    List<StatusRow> rows =
        StatusView.rows(
            List.of(
                new Observed(notOptedIn, Optional.empty(), Optional.empty(), List.of()),
                new Observed(b, Optional.empty(), Optional.empty(), List.of()),
                new Observed(a, Optional.empty(), Optional.empty(), List.of())),
            NOW);

    assertThat(rows).extracting(StatusRow::deployment).containsExactly("a", "b");
  }

  @Test
  void lastEventIsTheNewestAboutThisDeployment() {
    Deployment d = Fixtures.deployment().build();
    Event started = event("e1", "MigrationStarted", "Created", "2025-12-31T23:58:00Z");
    Event failed = event("e2", "MigrationFailed", "Migration Job failed", "2025-12-31T23:59:18Z");
    Event otherDeployment =
        new EventBuilder(event("e3", "MigrationStarted", "other", "2025-12-31T23:59:59Z"))
            .editInvolvedObject()
            .withName("other")
            .endInvolvedObject()
            .build();
    Event previousIncarnation =
        new EventBuilder(event("e4", "MigrationStarted", "old uid", "2025-12-31T23:59:59Z"))
            .editInvolvedObject()
            .withUid("old")
            .endInvolvedObject()
            .build();
    Event aPod =
        new EventBuilder(event("e5", "Pulled", "pod", "2025-12-31T23:59:59Z"))
            .editInvolvedObject()
            .withKind("Pod")
            .endInvolvedObject()
            .build();
    // newer, and timed only by eventTime (events.k8s.io style)
    Event byEventTime =
        new EventBuilder(event("e6", "MigrationSucceeded", "Database migrated", null))
            .withEventTime(new MicroTime("2025-12-31T23:59:30.123456Z"))
            .build();

    StatusRow row =
        row(
            d,
            null,
            null,
            List.of(byEventTime, otherDeployment, failed, started, previousIncarnation, aPod));

    assertThat(row.lastEvent())
        .hasValueSatisfying(
            e -> {
              assertThat(e.reason()).isEqualTo("MigrationSucceeded");
              assertThat(e.time()).contains(Instant.parse("2025-12-31T23:59:30Z"));
              assertThat(e.age()).contains(Duration.ofSeconds(30));
            });
    assertThat(row(d, null, null, List.of(started, failed)).lastEvent().orElseThrow().reason())
        .isEqualTo("MigrationFailed");
    assertThat(row(d, null, null, List.of(otherDeployment, aPod)).lastEvent()).isEmpty();
  }

  @Test
  void humanDurationsAsKubectlShowsAges() {
    assertThat(StatusView.human(Duration.ofSeconds(0))).isEqualTo("0s");
    assertThat(StatusView.human(Duration.ofSeconds(42))).isEqualTo("42s");
    assertThat(StatusView.human(Duration.ofSeconds(119))).isEqualTo("119s");
    assertThat(StatusView.human(Duration.ofSeconds(282))).isEqualTo("4m42s");
    assertThat(StatusView.human(Duration.ofMinutes(5))).isEqualTo("5m");
    assertThat(StatusView.human(Duration.ofMinutes(42))).isEqualTo("42m");
    assertThat(StatusView.human(Duration.ofMinutes(200))).isEqualTo("3h20m");
    assertThat(StatusView.human(Duration.ofHours(20))).isEqualTo("20h");
    assertThat(StatusView.human(Duration.ofHours(76))).isEqualTo("3d4h");
    assertThat(StatusView.human(Duration.ofDays(42))).isEqualTo("42d");
    assertThat(StatusView.human(Duration.ofDays(1200))).isEqualTo("3y");
  }

  @Test
  void retryAfterFormatsAsTheOperatorWritesIt() {
    // the row's retryAt round-trips through the annotation format
    Deployment d = Fixtures.deployment().retryAfter(NOW.plusSeconds(42)).build();
    assertThat(Timestamps.format(row(d, recorded(d, OLD), null).retryAt().orElseThrow()))
        .isEqualTo(d.getMetadata().getAnnotations().get(Keys.RETRY_AFTER));
  }
}
