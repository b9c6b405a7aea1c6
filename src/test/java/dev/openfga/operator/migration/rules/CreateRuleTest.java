package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.migration.rules.PlannerFixtures.after;
import static dev.openfga.operator.migration.rules.PlannerFixtures.event;
import static dev.openfga.operator.migration.rules.PlannerFixtures.kinds;
import static dev.openfga.operator.migration.rules.PlannerFixtures.only;
import static dev.openfga.operator.migration.rules.PlannerFixtures.record;
import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.env;
import static dev.openfga.operator.testing.Fixtures.observe;
import static dev.openfga.operator.testing.Fixtures.secretEnv;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.ClearRetryAfter;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Rule 7 without a Job: the cooldown and the create ({@link CooldownRule}, {@link CreateRule}). */
class CreateRuleTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  @Test
  void createsTheJobOnFirstInstallWithAFilteredEnvironment() {
    Deployment d =
        Fixtures.deployment()
            .env(
                env("OPENFGA_DATASTORE_ENGINE", "postgres"),
                secretEnv("OPENFGA_DATASTORE_URI", "openfga-datastore", "uri"),
                env("OPENFGA_LOG_LEVEL", "info"),
                env("OPENFGA_PLAYGROUND_ENABLED", "true"),
                secretEnv("OPENFGA_AUTHN_PRESHARED_KEYS", "openfga-authn", "keys"))
            .build();

    Plan plan = planner.plan(observe(d));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    assertThat(kinds(plan)).containsExactly(CreateJob.class, Emit.class);
    assertThat(plan.next()).isEqualTo(after(5));
    CreateJob create = only(plan, CreateJob.class);
    Job job = create.job();
    assertThat(create.version()).isEqualTo("v1.14.0");
    assertThat(job.getMetadata().getName()).isEqualTo("openfga-migrate");
    assertThat(job.getSpec().getTtlSecondsAfterFinished()).isNull();
    assertThat(job.getSpec().getBackoffLimit()).isEqualTo(3);
    assertThat(job.getSpec().getActiveDeadlineSeconds()).isEqualTo(300L);
    assertThat(job.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            ref -> {
              assertThat(ref.getUid()).isEqualTo("test-uid-123");
              assertThat(ref.getController()).isTrue();
              assertThat(ref.getBlockOwnerDeletion()).isNull();
            });
    assertThat(job.getSpec().getTemplate().getSpec().getContainers())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getImage()).isEqualTo("openfga/openfga:v1.14.0");
              assertThat(c.getArgs()).containsExactly("migrate");
              assertThat(c.getEnv())
                  .extracting(EnvVar::getName)
                  .containsExactly(
                      "OPENFGA_DATASTORE_ENGINE", "OPENFGA_DATASTORE_URI", "OPENFGA_LOG_LEVEL");
            });
    assertThat(event(plan).reason()).isEqualTo(EventReason.MigrationStarted);
    assertThat(event(plan).message()).contains("openfga-migrate", "v1.14.0", "first install");
  }

  @Test
  void createsTheJobWhenTheRecordedVersionIsOlder() {
    Deployment d = Fixtures.deployment().build();

    Plan plan = planner.plan(observe(d, record(d, "v1.13.0"), null, NOW));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    assertThat(kinds(plan)).containsExactly(CreateJob.class, Emit.class);
    assertThat(event(plan).message()).contains("recorded version v1.13.0");
  }

  @Test
  void neverScalesDownWhileAMigrationIsNeeded() {
    Deployment d = Fixtures.deployment().replicas(3).desiredReplicas(3).build();

    Plan plan = planner.plan(observe(d));

    assertThat(kinds(plan)).containsExactly(CreateJob.class, Emit.class);
  }

  @Test
  void runsTheJobWithTheMigrationServiceAccount() {
    Deployment d =
        Fixtures.deployment()
            .annotation(Keys.MIGRATION_SERVICE_ACCOUNT, "openfga-migration")
            .build();

    CreateJob create = only(planner.plan(observe(d)), CreateJob.class);

    assertThat(create.job().getSpec().getTemplate().getSpec().getServiceAccountName())
        .isEqualTo("openfga-migration");
  }

  @Test
  void usesTheBackoffAndDeadlineOfThePolicy() {
    Planner custom = new Planner(new Policy(0, 1, 300, Duration.ofSeconds(60)));

    CreateJob create = only(custom.plan(observe(Fixtures.deployment().build())), CreateJob.class);

    assertThat(create.job().getSpec().getBackoffLimit()).isZero();
    assertThat(create.job().getSpec().getActiveDeadlineSeconds()).isEqualTo(1L);
  }

  @Test
  void waitsForAFutureRetryDeadlineWithoutCreatingAJob() {
    Deployment d = Fixtures.deployment().retryAfter(NOW.plusSeconds(30)).build();

    Plan plan = planner.plan(observe(d));

    assertThat(plan.state()).isEqualTo(State.COOLDOWN);
    assertThat(plan.steps()).isEmpty();
    assertThat(plan.next()).isEqualTo(after(30));
  }

  @Test
  void keepsTheCooldownWhenTheImageChanges() {
    Deployment d =
        Fixtures.deployment()
            .image("openfga/openfga:v1.15.0")
            .retryAfter(NOW.plusSeconds(45))
            .failedCondition("v1.14.0")
            .build();

    Plan plan = planner.plan(observe(d, record(d, "v1.13.0"), null, NOW));

    assertThat(plan.state()).isEqualTo(State.COOLDOWN);
    assertThat(plan.steps()).isEmpty();
    assertThat(plan.next()).isEqualTo(after(45));
  }

  @ParameterizedTest(name = "deadline now{0}s")
  @ValueSource(longs = {0, -1, -3600})
  void clearsTheRetryDeadlineOnlyAfterCreatingTheJob(long offset) {
    Deployment d = Fixtures.deployment().retryAfter(NOW.plusSeconds(offset)).build();

    Plan plan = planner.plan(observe(d));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
    assertThat(kinds(plan)).containsExactly(CreateJob.class, ClearRetryAfter.class, Emit.class);
  }

  @Test
  void emitsOneStartedEventPerCreatedJob() {
    Deployment d = Fixtures.deployment().build();

    Emit first = event(planner.plan(observe(d, NOW)));
    Emit second = event(planner.plan(observe(d, NOW.plusSeconds(120))));

    assertThat(first.key()).isNotEqualTo(second.key());
  }
}
