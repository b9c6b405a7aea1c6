package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.event;
import static dev.openfga.operator.migration.rules.PlannerFixtures.kinds;
import static dev.openfga.operator.migration.rules.PlannerFixtures.migrationFailed;
import static dev.openfga.operator.migration.rules.PlannerFixtures.only;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.observe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Plan.Next;
import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.ClearRetryAfter;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.SetConditions;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** SPEC section 10: a Job create the API server refused ({@link RejectedRule}). */
class RejectedRuleTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);
  private static final String QUOTA =
      "jobs.batch \"openfga-migrate\" is forbidden: exceeded quota: jobs, requested:"
          + " count/jobs.batch=1, used: count/jobs.batch=0, limited: count/jobs.batch=0"
          + " (HTTP 403)";

  /** The Deployment as it is after the plan's condition write. */
  private Deployment written(Deployment d, Plan plan) {
    return new DeploymentBuilder(d)
        .editOrNewStatus()
        .withConditions(only(plan, SetConditions.class).conditions())
        .endStatus()
        .build();
  }

  private Plan refused(Deployment d, Instant now, String rejection) {
    return planner.plan(observe(d, now).withJobRejection(java.util.Optional.of(rejection)));
  }

  @Test
  void aRefusedCreateSetsTheConditionSendsAWarningAndBacksOff() {
    Deployment d = Fixtures.deployment().build();

    Plan plan = refused(d, NOW, QUOTA);

    assertThat(kinds(plan)).containsExactly(SetConditions.class, Emit.class);
    assertThat(plan.state()).isEqualTo(State.BLOCKED);
    assertThat(plan.next()).isInstanceOf(Next.Blocked.class);
    assertThat(plan.summary())
        .isEqualTo(
            "Migration Job openfga-migrate for version v1.14.0 was rejected by the API server: "
                + QUOTA);
    DeploymentCondition c = migrationFailed(only(plan, SetConditions.class));
    assertThat(c.getStatus()).isEqualTo("True");
    assertThat(c.getReason()).isEqualTo(Keys.REASON_JOB_REJECTED);
    assertThat(c.getMessage()).isEqualTo(plan.summary());
    assertThat(c.getLastTransitionTime()).isEqualTo(Timestamps.format(NOW));
    Emit warning = event(plan);
    assertThat(warning.reason()).isEqualTo(EventReason.JobRejected);
    assertThat(warning.reason().warning()).isTrue();
    assertThat(warning.message()).startsWith(plan.summary()).contains("at most 5 minutes apart");
  }

  @Test
  void theSameRefusalAtTheNextTryWritesNothingAndIsTheSameEvent() {
    Deployment d = Fixtures.deployment().build();
    Plan first = refused(d, NOW, QUOTA);

    Plan again = refused(written(d, first), NOW.plusSeconds(4), QUOTA);

    assertThat(kinds(again)).containsExactly(Emit.class);
    assertThat(event(again).key()).isEqualTo(event(first).key());
    assertThat(again.state()).isEqualTo(State.BLOCKED);
  }

  @Test
  void anotherAnswerIsAnotherRefusal() {
    Deployment d = Fixtures.deployment().build();
    Plan first = refused(d, NOW, QUOTA);
    String policy =
        "jobs.batch \"openfga-migrate\" is forbidden: ValidatingAdmissionPolicy 'no-jobs'"
            + " with binding 'no-jobs' denied request: no migration Jobs here (HTTP 403)";

    Plan other = refused(written(d, first), NOW.plusSeconds(4), policy);

    assertThat(migrationFailed(only(other, SetConditions.class)).getMessage()).endsWith(policy);
    // still True since the first refusal
    assertThat(migrationFailed(only(other, SetConditions.class)).getLastTransitionTime())
        .isEqualTo(Timestamps.format(NOW));
    assertThat(event(other).key()).isNotEqualTo(event(first).key());
  }

  @Test
  void theNextCreateClearsTheConditionOnceTheJobIsCreated() {
    Deployment d = Fixtures.deployment().retryAfter(NOW.minusSeconds(5)).build();
    Deployment rejected = written(d, refused(d, NOW, QUOTA));

    Plan plan = planner.plan(observe(rejected, NOW.plusSeconds(8)));

    // the create first: the condition says nothing until the API server took the Job
    assertThat(kinds(plan))
        .containsExactly(CreateJob.class, SetConditions.class, ClearRetryAfter.class, Emit.class);
    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    DeploymentCondition c = migrationFailed(only(plan, SetConditions.class));
    assertThat(c.getStatus()).isEqualTo("False");
    assertThat(c.getReason()).isEqualTo(Keys.REASON_JOB_CREATED);
    assertThat(c.getMessage())
        .isEqualTo("Migration Job openfga-migrate for version v1.14.0 was created.");
  }

  @Test
  void aRefusalAfterAJobWasCreatedInBetweenIsNews() {
    Deployment d = Fixtures.deployment().build();
    Plan first = refused(d, NOW, QUOTA);
    Plan created = planner.plan(observe(written(d, first), NOW.plusSeconds(8)));
    Deployment afterCreate = written(d, created);

    Plan second = refused(afterCreate, NOW.plusSeconds(600), QUOTA);

    assertThat(migrationFailed(only(second, SetConditions.class)).getStatus()).isEqualTo("True");
    assertThat(event(second).key()).isNotEqualTo(event(first).key());
  }

  @Test
  void aRunningJobClearsARefusalAWriteAfterTheCreateLeftBehind() {
    Deployment d = Fixtures.deployment().build();
    Deployment rejected = written(d, refused(d, NOW, QUOTA));
    Job running = Fixtures.job(d, "v1.14.0").running().build();

    Plan plan = planner.plan(observe(rejected, null, running, NOW.plusSeconds(20)));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    assertThat(kinds(plan)).containsExactly(SetConditions.class);
    assertThat(migrationFailed(only(plan, SetConditions.class)).getReason())
        .isEqualTo(Keys.REASON_JOB_CREATED);
  }

  @Test
  void aFailureIsNotClearedByTheCreateOfItsRetry() {
    Deployment d = Fixtures.deployment().failedCondition("v1.14.0").build();

    Plan plan = planner.plan(observe(d));

    assertThat(kinds(plan)).containsExactly(CreateJob.class, Emit.class);
  }

  @Test
  void aRefusalShownByTheConditionWaitsBehindTheCooldown() {
    Deployment cooling = Fixtures.deployment().retryAfter(NOW.plusSeconds(30)).build();

    assertThat(refused(cooling, NOW, QUOTA).state()).isEqualTo(State.COOLDOWN);
  }

  @Test
  void theConditionGivesBackTheAnswerItWasGiven() {
    Deployment d = Fixtures.deployment().build();

    Deployment rejected = written(d, refused(d, NOW, QUOTA));

    assertThat(FailedCondition.rejection(rejected)).contains(QUOTA);
    assertThat(FailedCondition.rejection(d)).isEmpty();
    assertThat(FailedCondition.rejection(Fixtures.deployment().failedCondition("v1").build()))
        .isEmpty();
  }
}
