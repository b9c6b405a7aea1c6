package dev.openfga.operator.migration.rules;

/**
 * Every label, annotation, condition, reason and data key the operator reads or writes. The
 * spelling is upstream's (openfga/helm-charts PR #346) and part of the contract: see
 * docs/reference.md.
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

  /**
   * Label selector of the Jobs and ConfigMaps the migration controller caches: its own migration
   * Jobs and records (not, e.g., an FGAModel's published ConfigMap).
   */
  public static final String OWNED_SELECTOR =
      MANAGED_BY + "=" + MANAGED_BY_OPERATOR + "," + COMPONENT + "=" + COMPONENT_MIGRATION;

  // Deployment annotations
  public static final String MIGRATION_ENABLED = "openfga.dev/migration-enabled";
  public static final String CONTAINER_NAME = "openfga.dev/container-name";
  public static final String DESIRED_REPLICAS = "openfga.dev/desired-replicas";
  public static final String MIGRATION_SERVICE_ACCOUNT = "openfga.dev/migration-service-account";

  /**
   * A Secret in the Deployment's namespace whose keys {@code uri}, {@code username} and {@code
   * password} (each optional) give the migration Job its datastore credentials, over the
   * Deployment's own.
   */
  public static final String MIGRATION_SECRET = "openfga.dev/migration-secret";

  /** Containers of the pod (database proxies) copied into the Job as native sidecars: a,b. */
  public static final String MIGRATION_SIDECARS = "openfga.dev/migration-sidecars";

  /**
   * {@code "true"}: the Job's pod may get the service mesh's proxy (and the pod template's mesh
   * annotations); otherwise the pod opts out of Istio and Linkerd injection.
   */
  public static final String MIGRATION_MESH = "openfga.dev/migration-mesh";

  /**
   * A request to run the migration once more (RFC 3339): handled once when newer than the request
   * the status record last handled.
   */
  public static final String MIGRATE_REQUESTED_AT = "openfga.dev/migrate-requested-at";

  /** On the Deployment and on a failed Job: no new Job before this instant (RFC 3339, UTC). */
  public static final String RETRY_AFTER = "openfga.dev/migration-retry-after";

  /**
   * On the Deployment, written by the operator: the Events about a lasting state of the Deployment
   * ({@link EventReason#standing()}) already sent, as the ids that end their names
   * (comma-separated), so that a restarted operator does not send them again. Rewritten only when
   * that set changes.
   */
  public static final String REPORTED_EVENTS = "openfga.dev/reported-events";

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

  /**
   * Job and migration-pod label: a short hash of the database the Job migrates (engine and URI
   * without credentials, or the Secret key the URI comes from). At most one unfinished Job, and one
   * pod that has not stopped, per value. The operator caches the pods that carry it.
   */
  public static final String DATABASE_LABEL = "openfga.dev/database";

  /**
   * Job and migration-pod annotation, when a Job has more than one database key (with a migration
   * Secret): all of them, comma-separated; the label holds the first.
   */
  public static final String DATABASES_ANNOTATION = "openfga.dev/databases";

  /** The label the Job controller puts on a Job's pods with the Job's name (1.27+). */
  public static final String JOB_NAME_LABEL = "batch.kubernetes.io/job-name";

  /** The same label as Kubernetes before 1.27 spelled it (still set beside the new one). */
  public static final String LEGACY_JOB_NAME_LABEL = "job-name";

  /** The label the Job controller puts on a Job's pods with the Job's UID (1.27+). */
  public static final String JOB_UID_LABEL = "batch.kubernetes.io/controller-uid";

  /** The same label as Kubernetes before 1.27 spelled it (still set beside the new one). */
  public static final String LEGACY_JOB_UID_LABEL = "controller-uid";

  /** The secretKeyRef keys of {@link #MIGRATION_SECRET}, and the variables they set. */
  public static final String SECRET_KEY_URI = "uri";

  public static final String SECRET_KEY_USERNAME = "username";
  public static final String SECRET_KEY_PASSWORD = "password";
  public static final String URI_ENV = "OPENFGA_DATASTORE_URI";
  public static final String USERNAME_ENV = "OPENFGA_DATASTORE_USERNAME";
  public static final String PASSWORD_ENV = "OPENFGA_DATASTORE_PASSWORD";

  /** Pod annotations that keep a mesh from injecting a proxy that never exits. */
  public static final String ISTIO_INJECT = "sidecar.istio.io/inject";

  public static final String LINKERD_INJECT = "linkerd.io/inject";

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

  /** The {@link #MIGRATE_REQUESTED_AT} value the last recorded migration handled. */
  public static final String DATA_HANDLED_REQUEST = "handledRequest";

  // Condition on the Deployment
  public static final String CONDITION_TYPE = "MigrationFailed";
  public static final String REASON_JOB_FAILED = "MigrationJobFailed";
  public static final String REASON_SUCCEEDED = "MigrationSucceeded";

  /** The API server refused to create the migration Job (SPEC section 10). */
  public static final String REASON_JOB_REJECTED = "JobRejected";

  /** A migration Job was created after the API server had refused one. */
  public static final String REASON_JOB_CREATED = "JobCreated";

  /**
   * The Deployment controller's annotation on a Deployment: the revision of its newest pod template
   * (one more for each new template).
   */
  public static final String DEPLOYMENT_REVISION = "deployment.kubernetes.io/revision";

  // Datastore
  public static final String ENGINE_ENV = "OPENFGA_DATASTORE_ENGINE";

  public static final String LEADER_LEASE = "openfga-operator-leader";
}
