package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.record;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.env;
import static dev.openfga.operator.testing.Fixtures.observe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What the reconcile reads besides the caches' Job and record, decided from what it observed
 * ({@link Planner#wantedJobDatabases}, {@link Planner#createsJob}): the same rules as the decision,
 * so a Job is never created without its database looked at, and nothing is read for a Deployment
 * that creates none.
 */
class ReadsBeforeCreateTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  private static Deployment on(String name, String uri) {
    return Fixtures.deployment()
        .name(name)
        .uid(name + "-uid")
        .env(env("OPENFGA_DATASTORE_ENGINE", "postgres"), env("OPENFGA_DATASTORE_URI", uri))
        .build();
  }

  @Test
  void aFirstInstallWantsTheJobItCreatesAndReadsBeforeCreatingIt() {
    Deployment d = on("a", "postgres://u:p@db:5432/fga");
    Observation o = observe(d);

    Optional<List<String>> wanted = planner.wantedJobDatabases(o);

    Job created =
        planner.plan(o).steps().stream()
            .filter(Step.CreateJob.class::isInstance)
            .map(s -> ((Step.CreateJob) s).job())
            .findFirst()
            .orElseThrow();
    assertThat(wanted).contains(Database.keysOf(created));
    assertThat(wanted.get()).isNotEmpty();
    assertThat(planner.createsJob(o)).isTrue();
  }

  @Test
  void aConvergedDeploymentWantsNoJobAndReadsNothing() {
    Deployment d = Fixtures.deployment().version("v1.14.0").build();
    Observation o = observe(d, record(d, "v1.14.0"), null, NOW);

    assertThat(planner.wantedJobDatabases(o)).isEmpty();
    assertThat(planner.createsJob(o)).isFalse();
  }

  @Test
  void noJobIsWantedWhileOneIsThereOrDuringTheCooldownOrWhenBlocked() {
    Deployment d = Fixtures.deployment().version("v1.14.0").build();
    Job running = Fixtures.job(d, "v1.14.0").running().build();
    Deployment cooling =
        Fixtures.deployment().version("v1.14.0").retryAfter(NOW.plusSeconds(30)).build();
    Deployment blocked = Fixtures.deployment().annotation(Keys.CONTAINER_NAME, "missing").build();

    assertThat(planner.wantedJobDatabases(observe(d, null, running, NOW))).isEmpty();
    assertThat(planner.wantedJobDatabases(observe(cooling))).isEmpty();
    assertThat(planner.wantedJobDatabases(observe(blocked))).isEmpty();
  }

  @Test
  void aDeploymentWaitingForItsDatabaseWantsTheJobButReadsNothingMore() {
    Deployment a = on("a", "postgres://u:p@db:5432/fga");
    Deployment b = on("b", "postgres://u:p@db:5432/fga");
    Job jobOfA = Fixtures.job(a, "v1.14.0").running().build();
    Observation o = observe(b);

    assertThat(planner.wantedJobDatabases(o)).isPresent();
    // its database's Jobs observed: it waits, so the record is not read (SPEC section 9)
    assertThat(planner.createsJob(o.withDatabaseJobs(List.of(jobOfA)))).isFalse();
  }

  @Test
  void aRefusedCreateIsReportedBeforeAnythingMoreIsRead() {
    Deployment d = on("a", "postgres://u:p@db:5432/fga");
    Observation o = observe(d).withJobRejection(Optional.of("exceeded quota (HTTP 403)"));

    assertThat(planner.wantedJobDatabases(o)).isPresent();
    assertThat(planner.createsJob(o)).isFalse();
    assertThat(planner.plan(o).state()).isEqualTo(Plan.State.BLOCKED);
  }
}
