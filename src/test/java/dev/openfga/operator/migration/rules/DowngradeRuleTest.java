package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.observe;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.DeleteJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.WriteStatus;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** SPEC section 9, decision by decision: what no peer does yet. */
/**
 * SPEC section 9, rollbacks: an older semantic version than the recorded one runs no Job and keeps
 * the newer record ({@link DowngradeRule}).
 */
class DowngradeRuleTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  private static <T extends Step> List<T> all(Plan plan, Class<T> type) {
    return plan.steps().stream().filter(type::isInstance).map(type::cast).toList();
  }

  private static ConfigMap record(Deployment d, String version, String handled) {
    var builder = Fixtures.statusConfigMap(d, version);
    if (handled != null) {
      builder.addToData(Keys.DATA_HANDLED_REQUEST, handled);
    }
    return builder.build();
  }

  @Test
  void runsNoJobKeepsTheNewerRecordAndWarnsOnce() {
    Deployment d = Fixtures.deployment("v1.8.16");

    Plan plan = planner.plan(observe(d, record(d, "v1.10.0", null), null, NOW));

    assertThat(plan.state()).isEqualTo(State.DOWNGRADED);
    assertThat(plan.next()).isEqualTo(new Plan.Next.Done());
    assertThat(all(plan, CreateJob.class)).isEmpty();
    assertThat(all(plan, WriteStatus.class)).isEmpty();
    assertThat(all(plan, Emit.class))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.reason()).isEqualTo(EventReason.MigrationDowngrade);
              assertThat(e.reason().warning()).isTrue();
              assertThat(e.message()).contains("v1.8.16", "v1.10.0", "stays at v1.10.0");
              assertThat(e.key()).isEqualTo("downgrade/v1.10.0/v1.8.16");
            });
    assertThat(plan.summary()).contains("v1.8.16", "v1.10.0");
  }

  @Test
  void clearsAFailureAndDeletesTheFinishedJobOfTheNewerVersion() {
    Deployment d = Fixtures.deployment().version("v1.8.16").failedCondition("v1.10.0").build();
    Job done = Fixtures.job(d, "v1.10.0").complete(NOW.minusSeconds(30)).build();

    Plan first = planner.plan(observe(d, record(d, "v1.10.0", null), done, NOW));
    Plan then = planner.plan(observe(d, record(d, "v1.10.0", null), null, NOW));

    assertThat(all(first, DeleteJob.class)).hasSize(1);
    assertThat(then.steps()).anyMatch(s -> s instanceof Step.SetConditions);
    assertThat(then.state()).isEqualTo(State.DOWNGRADED);
  }

  @ParameterizedTest
  @CsvSource({
    "v1.8.16, sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "latest, v1.10.0",
    "v1.10.0, latest",
  })
  void versionsThatAreNotSemanticMigrateAsBefore(String desired, String recordedVersion) {
    Deployment d =
        desired.startsWith("sha256:")
            ? Fixtures.deployment().image("openfga/openfga@" + desired).build()
            : Fixtures.deployment(desired);
    Plan plan = planner.plan(observe(d, record(d, recordedVersion, null), null, NOW));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
  }

  @Test
  void anUpgradeAfterTheRollbackMigratesAgain() {
    Deployment d = Fixtures.deployment("v1.10.1");

    Plan plan = planner.plan(observe(d, record(d, "v1.10.0", null), null, NOW));

    assertThat(plan.state()).isEqualTo(State.MIGRATING);
  }
}
