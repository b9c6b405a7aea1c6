package dev.openfga.operator.model;

/**
 * Every label, annotation, condition, reason and data key the operator reads or writes. The
 * spelling is upstream's (openfga/helm-charts PR #346) and part of the contract: see the README.
 */
public final class Keys {
  private Keys() {}

  // Labels
  public static final String PART_OF = "app.kubernetes.io/part-of";
  public static final String COMPONENT = "app.kubernetes.io/component";
  public static final String MANAGED_BY = "app.kubernetes.io/managed-by";
  public static final String VERSION_LABEL = "app.kubernetes.io/version";
  public static final String INSTANCE = "app.kubernetes.io/instance";
  public static final String NAME = "app.kubernetes.io/name";

  public static final String PART_OF_OPENFGA = "openfga";
  public static final String COMPONENT_SERVER = "authorization-controller";
  public static final String COMPONENT_MIGRATION = "migration";
  public static final String MANAGED_BY_OPERATOR = "openfga-operator";
  public static final String MANAGED_BY_HELM = "Helm";

  /** Label selector of the Deployments the operator watches. */
  public static final String DEPLOYMENT_SELECTOR =
      PART_OF + "=" + PART_OF_OPENFGA + "," + COMPONENT + "=" + COMPONENT_SERVER;

  /** Label selector of the Jobs and ConfigMaps the operator caches (its own). */
  public static final String OWNED_SELECTOR = MANAGED_BY + "=" + MANAGED_BY_OPERATOR;

  // Deployment annotations
  public static final String MIGRATION_ENABLED = "openfga.dev/migration-enabled";
  public static final String CONTAINER_NAME = "openfga.dev/container-name";
  public static final String DESIRED_REPLICAS = "openfga.dev/desired-replicas";
  public static final String MIGRATION_SERVICE_ACCOUNT = "openfga.dev/migration-service-account";

  /** On the Deployment and on a failed Job: no new Job before this instant (RFC 3339, UTC). */
  public static final String RETRY_AFTER = "openfga.dev/migration-retry-after";

  // Job annotations
  public static final String DESIRED_VERSION = "openfga.dev/desired-version";

  /** On a failed Job: the operator keeps it (and its pod's log) at least until this instant. */
  public static final String RETAIN_UNTIL = "openfga.dev/migration-retain-until";

  /**
   * On a failed Job: what its pod left behind (exit code, reason, the last log lines), read once
   * before anything can delete the pod, and repeated in the condition and the Event.
   */
  public static final String FAILURE_EVIDENCE = "openfga.dev/failure-evidence";

  public static final String HELM_HOOK = "helm.sh/hook";

  public static final String DEFAULT_CONTAINER = "openfga";
  public static final String MIGRATION_CONTAINER = "migrate-database";
  public static final String MIGRATE_ARG = "migrate";

  // Status ConfigMap data
  public static final String DATA_VERSION = "version";
  public static final String DATA_MIGRATED_AT = "migratedAt";
  public static final String DATA_JOB_NAME = "jobName";

  /**
   * In the record while the replicas of a first install are still to be restored ("true"): written
   * with the first record, removed right after the scale, so a crash between the two still scales
   * and a later scale to 0 is left alone.
   */
  public static final String DATA_RESTORE_REPLICAS = "restoreReplicas";

  // Condition on the Deployment
  public static final String CONDITION_TYPE = "MigrationFailed";
  public static final String REASON_JOB_FAILED = "MigrationJobFailed";
  public static final String REASON_SUCCEEDED = "MigrationSucceeded";
  public static final String MESSAGE_SUCCEEDED = "Migration completed successfully.";

  public static String failedMessage(String version) {
    return "Database migration failed for version " + version + ". Check migration job logs.";
  }

  // Datastore
  public static final String ENGINE_ENV = "OPENFGA_DATASTORE_ENGINE";

  public static final String LEADER_LEASE = "openfga-operator-leader";
}
