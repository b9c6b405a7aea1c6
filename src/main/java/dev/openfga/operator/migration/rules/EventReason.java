package dev.openfga.operator.migration.rules;

/** Reasons of the Kubernetes Events the operator puts on a Deployment. */
public enum EventReason {
  /** Normal: a migration Job was created. */
  MigrationStarted(false),
  /** Normal: the migration Job completed and the version was recorded. */
  MigrationSucceeded(false),
  /** Warning: the migration Job failed; says when the operator retries. */
  MigrationFailed(true),
  /** Warning: a Job the operator does not own holds the migration Job's name. */
  MigrationJobConflict(true),
  /** Warning: a ConfigMap the operator does not own holds the status ConfigMap's name. */
  MigrationStatusConflict(true),
  /**
   * Warning: the migration Job's pod cannot be created (Pod Security admission, a quota, a missing
   * ServiceAccount); names the Job controller's reason.
   */
  MigrationPodNotCreated(true),
  /**
   * Warning: the API server refused to create the migration Job (a quota, an admission webhook or
   * policy, an invalid object); names its answer. Retried with backoff, at most 5 minutes apart.
   */
  JobRejected(true),
  /**
   * Normal: another Deployment's migration Job runs on the same database; names it. This
   * Deployment's Job is created when that one has finished.
   */
  MigrationWaiting(false),
  /**
   * Warning: the Deployment runs an older OpenFGA version than the recorded one (a rollback): no
   * Job runs, the schema stays at the newer version.
   */
  MigrationDowngrade(true),
  /** Normal: the legacy Helm hook Job of the same release was deleted so the operator can run. */
  LegacyHookJobAdopted(false),
  /**
   * Normal: the datastore engine needs no migration Job (sqlite with its migrate initContainer).
   */
  MigrationSkipped(false),
  /**
   * Warning: datastore engine sqlite without an initContainer that runs {@code openfga migrate}:
   * says what to add.
   */
  SqliteMigrationMissing(true),
  /** Warning: the container named by openfga.dev/container-name is not in the pod template. */
  ContainerNotFound(true),
  /** Warning: an openfga.dev/ annotation or the container image cannot be used. */
  InvalidConfiguration(true);

  private final boolean warning;

  EventReason(boolean warning) {
    this.warning = warning;
  }

  public boolean warning() {
    return warning;
  }

  /**
   * Whether the Event is about a lasting state of the Deployment (its annotations, pod template or
   * record) that every reconcile finds again until someone changes it: the Events already sent are
   * listed on the Deployment ({@link Keys#REPORTED_EVENTS}), so that a restarted operator knows
   * without listing Events. The others come from one transition (a Job created, failed, completed)
   * and are keyed by it.
   */
  public boolean standing() {
    return switch (this) {
      case MigrationSkipped,
          SqliteMigrationMissing,
          MigrationDowngrade,
          ContainerNotFound,
          InvalidConfiguration ->
          true;
      default -> false;
    };
  }

  public String type() {
    return warning ? "Warning" : "Normal";
  }
}
