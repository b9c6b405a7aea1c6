package dev.openfga.operator;

import dev.openfga.operator.config.OperatorConfig;
import dev.openfga.operator.kube.ConnectionKeeper;
import dev.openfga.operator.kube.EventRecorder;
import dev.openfga.operator.kube.Leadership;
import dev.openfga.operator.kube.OperatorClient;
import dev.openfga.operator.migration.FailureEvidence;
import dev.openfga.operator.migration.MigrationMetrics;
import dev.openfga.operator.migration.MigrationReconciler;
import dev.openfga.operator.migration.TrimmingDeploymentStore;
import dev.openfga.operator.migration.WarmUp;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.Planner;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.models.ModelMetrics;
import dev.openfga.operator.models.ModelReconciler;
import dev.openfga.operator.openfga.Connector;
import dev.openfga.operator.openfga.Credentials;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.openfga.Servers;
import dev.openfga.operator.stores.Claims;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.stores.StoreReconciler;
import dev.openfga.operator.tuples.FGATuples;
import dev.openfga.operator.tuples.TuplesMetrics;
import dev.openfga.operator.tuples.TuplesReconciler;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.Cloner;
import io.javaoperatorsdk.operator.api.config.ControllerConfigurationOverrider;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.javaoperatorsdk.operator.processing.retry.GenericRetry;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The running operator: JOSDK with the migration reconciler registered on the Deployments that
 * carry the discovery labels, in the watched namespaces, with Job and ConfigMap informers scoped to
 * the operator's own objects.
 */
public final class Controllers implements AutoCloseable {
  static final String CONTROLLER = "openfga-migration";

  /** The custom resources the controllers read: their client must know these kinds. */
  public static final List<Class<? extends io.fabric8.kubernetes.api.model.KubernetesResource>>
      CUSTOM_KINDS = List.of(FGAStore.class, FGAModel.class, FGATuples.class);

  /** The FGAStore controller's name (with --stores-and-models). */
  static final String STORE_CONTROLLER = "openfga-stores";

  /** The FGAModel controller's name (with --stores-and-models). */
  static final String MODEL_CONTROLLER = "openfga-models";

  /** The FGATuples controller's name (with --stores-and-models). */
  static final String TUPLES_CONTROLLER = "openfga-tuples";

  /** A safety net: converged Deployments are looked at again this often (no writes). */
  static final Duration RESYNC = Duration.ofMinutes(10);

  /**
   * Hands the migration reconcile the cached object (docs/performance.md: CPU per event). An
   * FGAStore or FGAModel is copied: JOSDK adds a finalizer and patches a status as the difference
   * between the cached object and a changed copy, and with no copy there is no difference.
   */
  private static final Cloner NO_COPY =
      new Cloner() {
        @Override
        public <R extends HasMetadata> R clone(R object) {
          return object instanceof io.fabric8.kubernetes.client.CustomResource<?, ?>
              ? io.fabric8.kubernetes.client.utils.Serialization.clone(object)
              : object;
        }
      };

  /**
   * How long a stop waits for the reconciles under way; within the pod's default 30 s grace period.
   */
  static final Duration STOP_WAIT = Duration.ofSeconds(10);

  private final Operator operator;

  /** Leader election's state and the Lease release at shutdown; {@code null} without it. */
  private final Leadership leadership;

  /**
   * Set once {@link Operator#start()} has returned. JOSDK holds a lock while it starts, and its
   * runtime information waits for that lock: the probes must not ask before.
   */
  private volatile boolean started;

  private final FailureEvidence evidence;

  private final MigrationReconciler reconciler;

  /** The planner, for the warm-up after start ({@link WarmUp}). */
  private final Planner planner;

  /** For the warm-up (its serialization) and the connection keeper. */
  private final KubernetesClient client;

  /** Without leader election: keeps the client's connection in use ({@code null} before start). */
  private ConnectionKeeper keeper;

  private Controllers(
      Operator operator,
      Leadership leadership,
      FailureEvidence evidence,
      MigrationReconciler reconciler,
      Planner planner,
      KubernetesClient client) {
    this.operator = operator;
    this.leadership = leadership;
    this.evidence = evidence;
    this.reconciler = reconciler;
    this.planner = planner;
    this.client = client;
  }

  /**
   * The production operator: identity from the pod's name, JOSDK's, the migration and the FGAModel
   * metrics in the registry ({@code null}: the metrics endpoint is off, no metrics are kept).
   */
  public static Controllers create(
      KubernetesClient client, OperatorConfig config, Clock clock, MeterRegistry registry) {
    String identity =
        Optional.ofNullable(System.getenv("POD_NAME"))
            .or(() -> Optional.ofNullable(System.getenv("HOSTNAME")))
            .orElseGet(() -> UUID.randomUUID().toString());
    return create(client, config, clock, identity, true, registry);
  }

  /** An operator without metrics (tests, the demo). */
  public static Controllers create(
      KubernetesClient client,
      OperatorConfig config,
      Clock clock,
      String identity,
      boolean exitOnStopLeading) {
    return create(client, config, clock, identity, exitOnStopLeading, null);
  }

  /**
   * @param identity this instance's name in Events and in the leader-election Lease
   * @param exitOnStopLeading whether losing the Lease ends the process (tests say no)
   * @param registry where JOSDK's, the migration, the FGAModel and the FGATuples metrics go, or
   *     {@code null}
   */
  public static Controllers create(
      KubernetesClient client,
      OperatorConfig config,
      Clock clock,
      String identity,
      boolean exitOnStopLeading,
      MeterRegistry registry) {
    Leadership leadership = leadership(client, config, identity, exitOnStopLeading);
    Operator operator = operator(client, leadership, identity, registry);
    FailureEvidence evidence = new FailureEvidence(client, config.failureLogLines());
    EventRecorder events = new EventRecorder(client, identity);
    Planner planner = new Planner(config.policy());
    MigrationReconciler reconciler =
        new MigrationReconciler(
            planner,
            client,
            events,
            registry == null ? MigrationMetrics.none() : new MigrationMetrics(registry, clock),
            evidence,
            clock,
            config.dryRun());
    GenericRetry retry = retry();
    registerMigrations(operator, reconciler, retry, config);
    if (config.storesAndModels()) {
      registerStoresAndModels(operator, client, config, events, clock, registry, retry);
    }
    return new Controllers(operator, leadership, evidence, reconciler, planner, client);
  }

  /** Leader election's state, or {@code null} without it (or in a dry run). */
  private static Leadership leadership(
      KubernetesClient client, OperatorConfig config, String identity, boolean exitOnStopLeading) {
    return config.leaderElect() && !config.dryRun()
        ? new Leadership(
            client,
            config.leaseNamespace().orElseGet(client::getNamespace),
            config.leaseName(),
            identity,
            exitOnStopLeading)
        : null;
  }

  /** JOSDK, configured for every controller. */
  private static Operator operator(
      KubernetesClient client, Leadership leadership, String identity, MeterRegistry registry) {
    return new Operator(
        o -> {
          o.withKubernetesClient(client)
              .withCloseClientOnStop(false)
              .checkingCRDAndValidateLocalModel(false)
              .withUseSSAToPatchPrimaryResource(false)
              .withSSABasedCreateUpdateMatchForDependentResources(false)
              .withConcurrentReconciliationThreads(4)
              // The reconcile gets the cached Deployment itself, not a JSON round-trip copy:
              // nothing the reconcile calls changes it (the planner is pure, the Job builder
              // copies, writes build their own patches), as with the Jobs and ConfigMaps.
              .withResourceCloner(NO_COPY)
              .withStopOnInformerErrorDuringStartup(true)
              .withCacheSyncTimeout(Duration.ofMinutes(2))
              // a stop (a rolling update: then the Lease is handed back) waits for the
              // reconciles under way: the next leader must not plan while a Job create of
              // this one is still on its way (JOSDK's default waits for nothing)
              .withReconciliationTerminationTimeout(STOP_WAIT);
          if (registry != null) {
            o.withMetrics(MicrometerMetrics.withoutPerResourceMetrics(registry));
          }
          if (leadership != null) {
            // JOSDK's own exit on stop-leading calls System.exit from inside our shutdown
            // hook (the Lease future is cancelled there) and the JVM hangs: Leadership exits
            // only when the Lease is lost while running
            o.withLeaderElectionConfiguration(
                LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration(leadership.name())
                    .withLeaseNamespace(leadership.namespace())
                    .withIdentity(identity)
                    .withExitOnStopLeading(false)
                    .withLeaderCallbacks(leadership.callbacks())
                    .build());
          }
        });
  }

  /** A failed reconcile is tried again 1 s later, then twice as long each time, up to 5 min. */
  private static GenericRetry retry() {
    return new GenericRetry()
        .withoutMaxAttempts()
        .setInitialInterval(Duration.ofSeconds(1))
        .setIntervalMultiplier(2)
        .setMaxInterval(Duration.ofMinutes(5).toMillis());
  }

  /** The migration controller, on the Deployments with the discovery labels. */
  private static void registerMigrations(
      Operator operator,
      MigrationReconciler reconciler,
      GenericRetry retry,
      OperatorConfig config) {
    operator.register(
        reconciler,
        c -> {
          c.withName(CONTROLLER)
              .withLabelSelector(Keys.DEPLOYMENT_SELECTOR)
              .withGenerationAware(false)
              .withRetry(retry)
              .withReconciliationMaxInterval(RESYNC)
              // the first list in pages: the full objects never have to fit in the heap at once
              .withInformerListLimit(OperatorClient.LIST_PAGE_SIZE);
          watched(c, config);
          if (config.watchesAllNamespaces() || config.watchNamespaces().size() == 1) {
            // Cache trimmed Deployments. Only with a single informer: JOSDK gives every watched
            // namespace its own informer but the same store, and a relist clears the rest of it.
            c.withItemStore(new TrimmingDeploymentStore());
          }
        });
  }

  /** The FGAStore, FGAModel and FGATuples controllers (--stores-and-models). */
  private static void registerStoresAndModels(
      Operator operator,
      KubernetesClient client,
      OperatorConfig config,
      EventRecorder events,
      Clock clock,
      MeterRegistry registry,
      GenericRetry retry) {
    java.net.http.HttpClient http = FgaApi.defaultHttpClient();
    // one per process: both controllers fetch an OIDC token once per expiry, not per reconcile
    // (for up to Credentials.Cache.KEPT Secrets in use)
    Connector connector = new Connector(client, http, new Credentials.Cache(), clock);
    // at most two of the four reconcile threads in calls to OpenFGA: the migrations keep two
    OpenFgaCallLimit slots = new OpenFgaCallLimit();
    // the servers FGAStores may name; the stores each FGAStore was confirmed for (both shared)
    Servers servers = new Servers(config.openfgaServers());
    Claims claims = new Claims();
    // every event, not only a new generation: a touched resource is looked at again (a store
    // deleted out of band is found at once, not at the next recheck)
    operator.register(
        new StoreReconciler(client, connector, slots, servers, claims, events, clock),
        c -> stage2(c, STORE_CONTROLLER, retry, config));
    operator.register(
        new ModelReconciler(
            client,
            connector,
            slots,
            servers,
            claims,
            events,
            clock,
            registry == null ? ModelMetrics.none() : new ModelMetrics(registry),
            config.modelTestMaxChecks()),
        c -> stage2(c, MODEL_CONTROLLER, retry, config));
    operator.register(
        new TuplesReconciler(
            client,
            connector,
            slots,
            servers,
            claims,
            events,
            clock,
            config.tuplesPerWrite(),
            registry == null ? TuplesMetrics.none() : new TuplesMetrics(registry)),
        c -> stage2(c, TUPLES_CONTROLLER, retry, config));
  }

  /**
   * A store, model or tuples controller: every event, not only a new generation (a touched resource
   * is looked at again), the shared retry, paged lists, the watched namespaces.
   */
  private static void stage2(
      ControllerConfigurationOverrider<?> c,
      String name,
      GenericRetry retry,
      OperatorConfig config) {
    watched(
        c.withName(name)
            .withRetry(retry)
            .withGenerationAware(false)
            .withInformerListLimit(OperatorClient.LIST_PAGE_SIZE),
        config);
  }

  /** A controller watches the namespaces the flags name (or all). */
  private static void watched(ControllerConfigurationOverrider<?> c, OperatorConfig config) {
    if (config.watchesAllNamespaces()) {
      c.watchingAllNamespaces();
    } else {
      c.settingNamespaces(config.watchNamespaces());
    }
  }

  /**
   * Starts the informers and blocks until they have synced (with leader election: returns at once,
   * and the controller starts when this instance leads).
   */
  public void start() {
    // the Job and record lists beside the Deployment list, not after it (JOSDK's order)
    reconciler.startOwnedInformers();
    operator.start();
    started = true;
    WarmUp.start(planner, client.getKubernetesSerialization());
    if (leadership == null) {
      // with leader election the Lease's renewals keep the connection in use
      keeper = ConnectionKeeper.start(client, ConnectionKeeper.PERIOD);
    }
  }

  /** True once started and every informer is healthy (synced and watching). */
  public boolean isReady() {
    return started && operator.getRuntimeInfo().allEventSourcesAreHealthy();
  }

  /** False when an informer has stopped watching; true while starting. */
  public boolean isHealthy() {
    return !started || operator.getRuntimeInfo().allEventSourcesAreHealthy();
  }

  /** Stops the controller and, when this instance leads, hands the Lease back at once. */
  @Override
  public void close() {
    if (leadership != null) {
      leadership.stopping();
    }
    if (keeper != null) {
      keeper.close();
    }
    operator.stop();
    if (leadership != null) {
      leadership.release();
    }
    evidence.close();
  }
}
