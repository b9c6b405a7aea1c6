package dev.openfga.operator.stores;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatusBuilder;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * openfgaRef.deploymentRef: a store waits until its database was migrated once and for an available
 * replica; a later migration (an upgrade) does not hold it while a replica serves.
 */
class MigrationGateTest {
  private static Deployment openfga(String version, Integer available) {
    Deployment d = Fixtures.openfga().name("openfga").namespace("auth").version(version).build();
    d.setStatus(new DeploymentStatusBuilder().withAvailableReplicas(available).build());
    return d;
  }

  @Test
  void onlyARecordTheOperatorWroteForThisDeploymentCounts() {
    Deployment d = openfga("v1.9.0", 1);
    d.getMetadata().setUid("deployment-uid");
    assertThat(MigrationGate.recorded(Fixtures.statusConfigMap(d, "v1.9.0").build(), d))
        .contains("v1.9.0");
    // a ConfigMap of the record's name that anyone who may create ConfigMaps could make
    var foreign = Fixtures.statusConfigMap(d, "v1.9.0").build();
    foreign.getMetadata().setLabels(null);
    assertThat(MigrationGate.recorded(foreign, d)).isEmpty();
    var otherOwner = Fixtures.statusConfigMap(d, "v1.9.0").build();
    otherOwner.getMetadata().setOwnerReferences(java.util.List.of());
    assertThat(MigrationGate.recorded(otherOwner, d)).isEmpty();
    assertThat(MigrationGate.recorded(null, d)).isEmpty();
  }

  @Test
  void waitsUntilTheDatabaseWasMigratedOnce() {
    assertThat(MigrationGate.waiting(openfga("v1.9.0", 1), Optional.empty()))
        .get()
        .asString()
        .contains("first migration")
        .contains("Deployment auth/openfga")
        .contains("v1.9.0")
        .contains("recorded: none");
    // an empty record is none
    assertThat(MigrationGate.waiting(openfga("v1.9.0", 1), Optional.of("")))
        .get()
        .asString()
        .contains("recorded: none");
  }

  @Test
  void aLaterMigrationDoesNotHoldTheStoreWhileAReplicaServes() {
    // an upgrade: the old replicas serve on the schema they accept until the new ones are ready
    assertThat(MigrationGate.waiting(openfga("v1.9.0", 1), Optional.of("v1.8.0"))).isEmpty();
    assertThat(MigrationGate.waiting(openfga("v1.11.0", 3), Optional.of("v1.10.0"))).isEmpty();
    // versions that cannot be ordered too: the database was migrated before
    assertThat(MigrationGate.waiting(openfga("latest", 1), Optional.of("v1.10.0"))).isEmpty();
  }

  @Test
  void aLaterMigrationWithNoReplicaLeftWaitsForOneAndSaysWhy() {
    // strategy Recreate, or a scale to 0: nothing serves until the new version is up
    assertThat(MigrationGate.waiting(openfga("v1.9.0", 0), Optional.of("v1.8.0")))
        .get()
        .asString()
        .contains("Deployment auth/openfga")
        .contains("available replica")
        .contains("migration to v1.9.0 is not recorded yet: v1.8.0");
    assertThat(MigrationGate.waiting(openfga("v1.9.0", null), Optional.of("v1.8.0"))).isPresent();
  }

  @Test
  void waitsForAnAvailableReplicaOnceMigrated() {
    assertThat(MigrationGate.waiting(openfga("v1.9.0", 0), Optional.of("v1.9.0")))
        .get()
        .asString()
        .contains("available replica");
    assertThat(MigrationGate.waiting(openfga("v1.9.0", null), Optional.of("v1.9.0"))).isPresent();
  }

  @Test
  void opensWhenMigratedAndAvailable() {
    assertThat(MigrationGate.waiting(openfga("v1.9.0", 2), Optional.of("v1.9.0"))).isEmpty();
  }

  @Test
  void aRollbackToAnOlderVersionIsServedByTheNewerMigration() {
    // the operator runs nothing for a rollback and the record keeps v1.10.0 (SPEC section 9)
    assertThat(MigrationGate.waiting(openfga("v1.9.0", 1), Optional.of("v1.10.0"))).isEmpty();
    assertThat(MigrationGate.waiting(openfga("v1.9.0", 0), Optional.of("v1.10.0")))
        .get()
        .asString()
        .contains("available replica")
        .doesNotContain("not recorded");
  }

  @Test
  void aDeploymentTheOperatorDoesNotMigrateIsNamedNotWaitedForInSilence() {
    Deployment unlabelled =
        Fixtures.openfga().name("openfga").namespace("auth").withoutLabel(Keys.COMPONENT).build();
    assertThat(MigrationGate.waiting(unlabelled, Optional.empty()))
        .get()
        .asString()
        .contains("Deployment auth/openfga")
        .contains("lacks the labels")
        .contains("never recorded");
    Deployment notOptedIn =
        Fixtures.openfga()
            .name("openfga")
            .namespace("auth")
            .withoutAnnotation(Keys.MIGRATION_ENABLED)
            .build();
    assertThat(MigrationGate.waiting(notOptedIn, Optional.empty()))
        .get()
        .asString()
        .contains("is not opted in")
        .contains(Keys.MIGRATION_ENABLED);
  }

  @Test
  void aDatastoreWithoutMigrationsNeedsOnlyAnAvailableReplica() {
    for (String engine : java.util.List.of("memory", "sqlite")) {
      Deployment d = Fixtures.openfga().name("openfga").namespace("auth").engine(engine).build();
      d.setStatus(new DeploymentStatusBuilder().withAvailableReplicas(1).build());
      assertThat(MigrationGate.waiting(d, Optional.empty())).as(engine).isEmpty();
    }
  }
}
