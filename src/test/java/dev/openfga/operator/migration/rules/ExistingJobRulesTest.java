package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.after;
import static dev.openfga.operator.migration.rules.PlannerFixtures.event;
import static dev.openfga.operator.migration.rules.PlannerFixtures.kinds;
import static dev.openfga.operator.migration.rules.PlannerFixtures.only;
import static dev.openfga.operator.migration.rules.PlannerFixtures.record;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.observe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan.Next;
import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.ClearRetryAfter;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.DeleteJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.PlanReplay;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Rule 7 with the Job there: terminating, not the operator's, for another version, running ({@link
 * TerminatingJobRule}, {@link ForeignJobRule}, {@link OtherVersionRule}, {@link RunningJobRule}).
 */
class ExistingJobRulesTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  private final Deployment d = Fixtures.deployment().image("openfga/openfga:v1.15.0").build();
  private final ConfigMap recorded = record(d, "v1.14.0");

  @Test
  void waitsForATerminatingJobWithoutCreatingAReplacement() {
    Job terminating = Fixtures.job(d, "v1.14.0").failed(NOW).terminating().build();

    Plan plan = planner.plan(observe(d, recorded, terminating, NOW));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    assertThat(plan.steps()).isEmpty();
    assertThat(plan.next()).isEqualTo(after(1));
  }

  static Stream<Arguments> untrustedJobs() {
    OwnerReference ours = Fixtures.controllerRef("openfga", "test-uid-123");
    OwnerReference notController = new OwnerReferenceBuilder(ours).withController(false).build();
    OwnerReference foreignController =
        new OwnerReferenceBuilder()
            .withApiVersion("batch/v1")
            .withKind("CronJob")
            .withName("nightly")
            .withUid("cron-uid")
            .withController(true)
            .build();
    return Stream.of(
        Arguments.of("managed-by label only", true, List.of()),
        Arguments.of("owner reference only", false, List.of(ours)),
        Arguments.of("neither", false, List.of()),
        Arguments.of(
            "non-controller reference beside another controller",
            true,
            List.of(notController, foreignController)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("untrustedJobs")
  void refusesAJobItDoesNotOwnAndLeavesItAlone(
      String description, boolean managed, List<OwnerReference> refs) {
    var fixture =
        Fixtures.job(d, "v1.14.0")
            .complete(NOW)
            .ownerReferences(refs.toArray(new OwnerReference[0]));
    if (!managed) {
      fixture.withoutLabel(Keys.MANAGED_BY);
    }

    Plan plan = planner.plan(observe(d, recorded, fixture.build(), NOW));

    assertThat(plan.state()).isEqualTo(State.BLOCKED);
    assertThat(kinds(plan)).containsExactly(Emit.class);
    assertThat(event(plan).reason()).isEqualTo(EventReason.MigrationJobConflict);
    assertThat(event(plan).reason().warning()).isTrue();
    assertThat(plan.next())
        .isInstanceOfSatisfying(
            Next.Blocked.class,
            b ->
                assertThat(b.problem())
                    .contains("default/openfga-migrate")
                    .contains(
                        "must be managed by openfga-operator and controlled by Deployment"
                            + " openfga"));
    // another Job in the way later, of the same name: news again, not a repeat of this one
    fixture.uid("another-foreign-job");
    assertThat(event(planner.plan(observe(d, recorded, fixture.build(), NOW))).key())
        .isNotEqualTo(event(plan).key());
  }

  @Test
  void deletesItsOwnJobForAnotherVersion() {
    Job stale = Fixtures.job(d, "v1.14.0").complete(NOW.minusSeconds(600)).build();

    Plan plan = planner.plan(observe(d, recorded, stale, NOW));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    assertThat(kinds(plan)).containsExactly(DeleteJob.class);
    assertThat(only(plan, DeleteJob.class).why()).contains("v1.14.0", "v1.15.0");
    assertThat(plan.next()).isEqualTo(after(1));
  }

  @Test
  void deletesAStaleJobWithATtlWithoutPatchingItFirst() {
    Job stale = Fixtures.job(d, "v1.14.0").complete(NOW.minusSeconds(600)).ttl(300).build();

    Plan plan = planner.plan(observe(d, recorded, stale, NOW));

    assertThat(kinds(plan)).containsExactly(DeleteJob.class);
  }

  @Test
  void deletesAStaleJobKnownOnlyByItsVersionLabel() {
    Job stale =
        Fixtures.job(d, "v1.14.0")
            .withoutAnnotation(Keys.DESIRED_VERSION)
            .complete(NOW.minusSeconds(600))
            .build();

    Plan plan = planner.plan(observe(d, recorded, stale, NOW));

    assertThat(kinds(plan)).containsExactly(DeleteJob.class);
  }

  @Test
  void neverTrustsACompletedJobWithoutVersion() {
    Job unknown =
        Fixtures.job(d, "v1.15.0")
            .withoutAnnotation(Keys.DESIRED_VERSION)
            .withoutLabel(Keys.VERSION_LABEL)
            .complete(NOW)
            .build();

    Plan plan = planner.plan(observe(d, recorded, unknown, NOW));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    assertThat(kinds(plan)).containsExactly(DeleteJob.class);
    assertThat(only(plan, DeleteJob.class).why()).contains("unknown");
    assertThat(plan.next()).isEqualTo(after(1));
  }

  @Test
  void letsARunningMigrationToAnotherVersionFinish() {
    Job running = Fixtures.job(d, "v1.14.0").running().build();

    Plan plan = planner.plan(observe(d, record(d, "v1.13.0"), running, NOW));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    assertThat(plan.steps()).isEmpty();
    assertThat(plan.next()).isEqualTo(after(10));
  }

  @Test
  void replacesAJobForAnotherVersionWhosePodNeverStarted() {
    Job stuck = Fixtures.job(d, "v1.14.0").podNeverStarted().build();

    Plan plan = planner.plan(observe(d, record(d, "v1.13.0"), stuck, NOW));
    Plan next =
        planner.plan(
            PlanReplay.apply(
                observe(d, record(d, "v1.13.0"), stuck, NOW), plan, NOW.plusSeconds(1)));

    assertThat(kinds(plan)).containsExactly(DeleteJob.class);
    assertThat(kinds(next)).containsExactly(CreateJob.class, Emit.class);
    assertThat(only(next, CreateJob.class).version()).isEqualTo("v1.15.0");
  }

  @Test
  void waitsForTheRunningJobOfTheDesiredVersion() {
    Deployment scaledDown = Fixtures.deployment().replicas(0).desiredReplicas(3).build();
    Job running = Fixtures.job(scaledDown, "v1.14.0").running().build();

    Plan plan = planner.plan(observe(scaledDown, null, running, NOW));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    assertThat(plan.steps()).isEmpty();
    assertThat(plan.next()).isEqualTo(after(10));
  }

  @Test
  void waitsForAJobThatHasNoStatusYet() {
    Job created = Fixtures.job(d, "v1.15.0").build();

    Plan plan = planner.plan(observe(d, recorded, created, NOW));

    assertThat(plan.steps()).isEmpty();
    assertThat(plan.next()).isEqualTo(after(10));
  }

  @Test
  void clearsALeftoverRetryDeadlineWhileTheJobRuns() {
    Deployment withDeadline =
        Fixtures.deployment()
            .image("openfga/openfga:v1.15.0")
            .retryAfter(NOW.minusSeconds(5))
            .build();
    Job running = Fixtures.job(withDeadline, "v1.15.0").running().build();

    Plan plan = planner.plan(observe(withDeadline, recorded, running, NOW));

    assertThat(plan.steps()).containsExactly(new ClearRetryAfter());
    assertThat(plan.next()).isEqualTo(after(10));
  }
}
