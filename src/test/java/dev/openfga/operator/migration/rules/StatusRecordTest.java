package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.testing.Fixtures.NOW;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class StatusRecordTest {

  private final Deployment deployment = Fixtures.deployment().build();

  @Test
  void readsTheRecordedVersionOfItsOwnRecord() {
    ConfigMap cm = Fixtures.statusConfigMap(deployment, "v1.14.0").build();

    assertThat(StatusRecord.read(cm, deployment))
        .isEqualTo(
            new StatusRecord.Reading.Recorded(
                Optional.of("v1.14.0"), false, false, Optional.empty()));
  }

  @Test
  void treatsAnEmptyVersionAsNoRecord() {
    ConfigMap cm = Fixtures.statusConfigMap(deployment, "").build();

    assertThat(StatusRecord.read(cm, deployment))
        .isEqualTo(
            new StatusRecord.Reading.Recorded(Optional.empty(), false, false, Optional.empty()));
  }

  @Test
  void acceptsAManagedRecordWithoutOwner() {
    ConfigMap cm =
        Fixtures.statusConfigMap(deployment, "v1.14.0")
            .editMetadata()
            .withOwnerReferences()
            .endMetadata()
            .build();

    assertThat(StatusRecord.read(cm, deployment))
        .isEqualTo(
            new StatusRecord.Reading.Recorded(
                Optional.of("v1.14.0"), false, false, Optional.empty()));
  }

  @Test
  void repairsTheOwnerOfARecordOfARecreatedDeployment() {
    ConfigMap cm =
        Fixtures.statusConfigMap(deployment, "v1.14.0")
            .editMetadata()
            .withOwnerReferences(Fixtures.controllerRef("openfga", "old-uid"))
            .endMetadata()
            .build();

    assertThat(StatusRecord.read(cm, deployment))
        .isEqualTo(
            new StatusRecord.Reading.Recorded(
                Optional.of("v1.14.0"), true, false, Optional.empty()));
  }

  @Test
  void refusesAnUnmanagedConfigMap() {
    ConfigMap cm =
        Fixtures.statusConfigMap(deployment, "v1.14.0")
            .editMetadata()
            .withLabels(Map.of("owner", "user-owned"))
            .endMetadata()
            .build();

    assertThat(StatusRecord.read(cm, deployment))
        .isInstanceOfSatisfying(
            StatusRecord.Reading.Collision.class,
            c ->
                assertThat(c.problem())
                    .contains("default/openfga-migration-status")
                    .contains("exists but is not managed"));
  }

  @Test
  void refusesARecordControlledByAnotherDeployment() {
    ConfigMap cm =
        Fixtures.statusConfigMap(deployment, "v1.14.0")
            .editMetadata()
            .withOwnerReferences(Fixtures.controllerRef("another-deployment", "other-uid"))
            .endMetadata()
            .build();

    assertThat(StatusRecord.read(cm, deployment))
        .isInstanceOfSatisfying(
            StatusRecord.Reading.Collision.class,
            c -> assertThat(c.problem()).contains("controlled by Deployment another-deployment"));
  }

  @Test
  void buildsARecordControlledByTheDeployment() {
    ConfigMap cm =
        StatusRecord.build(deployment, StatusRecord.data("v1.14.0", NOW, "openfga-migrate"));

    assertThat(cm.getMetadata().getName()).isEqualTo("openfga-migration-status");
    assertThat(cm.getMetadata().getNamespace()).isEqualTo("default");
    assertThat(cm.getMetadata().getLabels())
        .isEqualTo(
            Map.of(
                Keys.PART_OF, "openfga",
                Keys.COMPONENT, "migration",
                Keys.MANAGED_BY, "openfga-operator"));
    assertThat(cm.getMetadata().getOwnerReferences())
        .containsExactly(MigrationJob.ownerReference(deployment));
    assertThat(cm.getData())
        .isEqualTo(
            Map.of(
                "version", "v1.14.0",
                "migratedAt", "2026-01-01T00:00:00Z",
                "jobName", "openfga-migrate"));
    assertThat(StatusRecord.read(cm, deployment))
        .isEqualTo(
            new StatusRecord.Reading.Recorded(
                Optional.of("v1.14.0"), false, false, Optional.empty()));
  }
}
