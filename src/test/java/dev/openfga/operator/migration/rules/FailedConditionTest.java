package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.testing.Fixtures.NOW;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import java.util.List;
import org.junit.jupiter.api.Test;

class FailedConditionTest {

  private static DeploymentCondition ours(List<DeploymentCondition> conditions) {
    return conditions.stream()
        .filter(c -> c.getType().equals(Keys.CONDITION_TYPE))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void addsATrueConditionNamingTheFailedVersion() {
    Deployment d = Fixtures.deployment().build();

    List<DeploymentCondition> conditions = FailedCondition.failed(d, "v1.14.0", NOW).orElseThrow();

    assertThat(conditions)
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getType()).isEqualTo("MigrationFailed");
              assertThat(c.getStatus()).isEqualTo("True");
              assertThat(c.getReason()).isEqualTo("MigrationJobFailed");
              assertThat(c.getMessage())
                  .isEqualTo(
                      "Database migration failed for version v1.14.0. Check migration job logs.");
              assertThat(c.getLastTransitionTime()).isEqualTo("2026-01-01T00:00:00Z");
            });
  }

  @Test
  void keepsEveryOtherConditionAsItIs() {
    Deployment d =
        Fixtures.deployment()
            .condition("Available", "True", "MinimumReplicasAvailable", "ok")
            .failedCondition("v1.13.0")
            .condition("Progressing", "True", "NewReplicaSetAvailable", "done")
            .build();

    List<DeploymentCondition> failed = FailedCondition.failed(d, "v1.14.0", NOW).orElseThrow();
    List<DeploymentCondition> cleared = FailedCondition.cleared(d, NOW).orElseThrow();

    for (List<DeploymentCondition> conditions : List.of(failed, cleared)) {
      assertThat(conditions)
          .extracting(DeploymentCondition::getType)
          .containsExactly("Available", "MigrationFailed", "Progressing");
      assertThat(conditions.get(0)).isEqualTo(d.getStatus().getConditions().get(0));
      assertThat(conditions.get(2)).isEqualTo(d.getStatus().getConditions().get(2));
    }
  }

  @Test
  void changesNothingWhenAlreadyFailedForTheSameVersion() {
    Deployment d = Fixtures.deployment().failedCondition("v1.14.0").build();

    assertThat(FailedCondition.failed(d, "v1.14.0", NOW)).isEmpty();
  }

  @Test
  void keepsTheTransitionTimeWhenOnlyTheFailedVersionChanges() {
    Deployment d = Fixtures.deployment().failedCondition("v1.13.0").build();

    DeploymentCondition c = ours(FailedCondition.failed(d, "v1.14.0", NOW).orElseThrow());

    assertThat(c.getMessage()).contains("v1.14.0");
    assertThat(c.getLastTransitionTime()).isEqualTo("2025-12-01T00:00:00Z");
  }

  @Test
  void clearsATrueConditionWithANewTransitionTime() {
    Deployment d = Fixtures.deployment().failedCondition("v1.14.0").build();

    DeploymentCondition c = ours(FailedCondition.cleared(d, NOW).orElseThrow());

    assertThat(c.getStatus()).isEqualTo("False");
    assertThat(c.getReason()).isEqualTo("MigrationSucceeded");
    assertThat(c.getMessage()).isEqualTo("Migration completed successfully.");
    assertThat(c.getLastTransitionTime()).isEqualTo("2026-01-01T00:00:00Z");
  }

  @Test
  void neverCreatesTheConditionOnSuccess() {
    assertThat(FailedCondition.cleared(Fixtures.deployment().build(), NOW)).isEmpty();
  }

  @Test
  void changesNothingWhenAlreadyCleared() {
    Deployment d = Fixtures.deployment().clearedCondition().build();

    assertThat(FailedCondition.cleared(d, NOW)).isEmpty();
    assertThat(FailedCondition.isTrue(d)).isFalse();
  }
}
