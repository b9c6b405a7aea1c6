package dev.openfga.operator.stores;

import dev.openfga.operator.migration.rules.DeploymentSettings;
import dev.openfga.operator.migration.rules.ImageVersion;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.MigrationJob;
import dev.openfga.operator.migration.rules.Ownership;
import dev.openfga.operator.migration.rules.StatusRecord;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.Optional;

/**
 * {@code openfgaRef.deploymentRef}, pure: nothing touches the store until the OpenFGA Deployment's
 * database has been migrated once (a version recorded in its status ConfigMap) and the Deployment
 * has an available replica. No peer waits for this; a store created before the schema exists fails.
 *
 * <p>Only the first migration holds the store. A later one (an upgrade: the record holds an older
 * version than the image) does not: the replicas that are available still serve, on a schema they
 * accept (OpenFGA's migrations keep the previous version's servers working, which is how a rolling
 * upgrade works at all), so the store stays {@code Ready} and its FGAModels usable, instead of
 * every routine upgrade turning them {@code Ready=False} for the length of the migration. An
 * upgrade with no replica left meanwhile (strategy {@code Recreate}, a scale to 0) still waits, for
 * the replica.
 */
final class MigrationGate {
  private MigrationGate() {}

  /**
   * Why the store must wait, or empty when it need not, from what {@link StoreStep.ReadMigration}
   * read of the Deployment {@code namespace/name}.
   */
  static Optional<String> waiting(String namespace, String name, StoreAnswer.Migration read) {
    if (read.deployment().isEmpty()) {
      return Optional.of(
          "Deployment " + namespace + "/" + name + " (openfgaRef.deploymentRef) does not exist");
    }
    Deployment deployment = read.deployment().get();
    return waiting(deployment, recorded(read.record().orElse(null), deployment));
  }

  /**
   * The version the operator recorded for the Deployment: read as the migration planner reads its
   * record (StatusRecord), so that a ConfigMap of that name which the operator did not write (no
   * managed-by label, or no controller reference to this Deployment) records nothing. Anyone who
   * may create ConfigMaps in the namespace could otherwise open the gate with a made-up version.
   */
  static Optional<String> recorded(ConfigMap record, Deployment deployment) {
    if (record == null || !Ownership.isControlledBy(record, deployment)) {
      return Optional.empty();
    }
    return StatusRecord.read(record, deployment) instanceof StatusRecord.Reading.Recorded r
        ? r.version()
        : Optional.empty();
  }

  /**
   * The decision, from the Deployment and the version its record holds. A Deployment the operator
   * does not migrate (no discovery labels, not opted in) never gets a record: said so, not waited
   * for in silence; one whose datastore needs no migration (memory, sqlite) only needs an available
   * replica; one whose database was migrated before (any version recorded) needs an available
   * replica too, whatever version its image asks for now (the class comment says why).
   */
  static Optional<String> waiting(Deployment deployment, Optional<String> recorded) {
    String ref =
        "Deployment "
            + deployment.getMetadata().getNamespace()
            + "/"
            + deployment.getMetadata().getName();
    if (!DeploymentSettings.isDiscovered(deployment)) {
      return Optional.of(
          ref
              + " (openfgaRef.deploymentRef) lacks the labels "
              + Keys.DEPLOYMENT_SELECTOR
              + ": the operator does not migrate it, so its migration is never recorded");
    }
    DeploymentSettings settings = DeploymentSettings.of(deployment);
    if (!settings.optedIn()) {
      return Optional.of(
          ref
              + " (openfgaRef.deploymentRef) is not opted in ("
              + Keys.MIGRATION_ENABLED
              + ": \"true\"): the operator does not migrate it, so its migration is never recorded");
    }
    Optional<Container> container =
        deployment.getSpec().getTemplate().getSpec().getContainers().stream()
            .filter(c -> c.getName().equals(settings.containerName()))
            .findFirst();
    Optional<String> desired = container.map(Container::getImage).flatMap(ImageVersion::of);
    if (desired.isEmpty()) {
      return Optional.of(ref + ": no OpenFGA version can be read from its container image");
    }
    boolean migrates = !MigrationJob.needsNoJob(container.get());
    Optional<String> ever = recorded.filter(r -> !r.isBlank());
    if (migrates && ever.isEmpty()) {
      return Optional.of(
          "waiting for the first migration of "
              + ref
              + " to "
              + desired.get()
              + " (recorded: none)");
    }
    Integer available =
        deployment.getStatus() == null ? null : deployment.getStatus().getAvailableReplicas();
    if (available == null || available < 1) {
      String migrating =
          migrates && !ImageVersion.migratedFor(desired.get(), ever)
              ? " (its migration to " + desired.get() + " is not recorded yet: " + ever.get() + ")"
              : "";
      return Optional.of("waiting for " + ref + " to have an available replica" + migrating);
    }
    return Optional.empty();
  }
}
