package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.chart.Exposition;
import dev.openfga.operator.chart.MonitoringQuery;
import dev.openfga.operator.chart.OperatorChart;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.tuples.FGATuples;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfigurationBuilder;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The chart's alerts and dashboard against the metrics of a real operator: installed by the chart
 * with {@code storesAndModels}, the metrics, the PrometheusRule and the dashboard on, it migrates a
 * real OpenFGA, fails a migration (a wrong password), meets a Job create a quota refuses (a
 * reconcile error) and brings an FGAModel and an FGATuples in sync on that OpenFGA; then every
 * metric and label an alert's expression or a dashboard query names must be in its {@code
 * /metrics}.
 */
class MonitoringIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();
  private static final Duration WAIT = Duration.ofMinutes(2);

  /** The OpenFGA server's port, chosen first: its URL is the chart's storesAndModels.servers. */
  private static final int PORT = RealCluster.serverPort();

  private static final String VALUES =
      """
      leaderElection: {enabled: false}
      storesAndModels: {enabled: true, servers: ["http://127.0.0.1:%d"]}
      metrics: {enabled: true}
      prometheusRule: {enabled: true}
      grafanaDashboard: {enabled: true}
      migrationJob: {backoffLimit: 0}
      """
          .formatted(PORT);

  private static OperatorInstall install;
  private static OperatorInstall.OperatorProcess operator;

  @BeforeAll
  static void installTheOperator() {
    install = cluster.installOperator(cluster.namespace(), VALUES);
    operator = cluster.startOperator(install, "operator-0");
  }

  @Test
  void everyMetricAndLabelOfTheAlertsAndTheDashboardIsInARealScrape() {
    String ns = cluster.namespace();
    // a migration that succeeds, of the OpenFGA the FGAModel and the FGATuples are written to
    String url =
        cluster.serveOpenFga("openfga", cluster.postgres().createDatabase("mon"), Map.of(), PORT);
    storeModelAndTuples(ns, url);
    await()
        .atMost(WAIT)
        .until(
            operator::scrape,
            t ->
                t.contains("openfga_operator_fgamodels{state=\"in_sync\"} 1.0")
                    && t.contains("openfga_operator_fgatuples{state=\"in_sync\"} 1.0"));

    // a migration that fails
    Postgres.Database other = cluster.postgres().createDatabase("monbroken");
    cluster.deploy(
        UpstreamOpenFga.fixture(ns, "broken", Binaries.OLD_OPENFGA, 0, 1)
            .envVar("OPENFGA_TIMEOUT", "3s"),
        other.ownerUri().replace(other.password(), "not-the-password"));
    await()
        .atMost(WAIT)
        .until(
            operator::scrape,
            t -> t.contains("openfga_operator_migrations_failed_total{deployment=\"broken\""));

    // a Job create the API server refuses (403, exceeded quota): JobRejected, counted
    cluster
        .client()
        .resource(
            new ResourceQuotaBuilder()
                .withNewMetadata()
                .withName("no-jobs")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .addToHard("count/jobs.batch", new Quantity("0"))
                .endSpec()
                .build())
        .create();
    cluster.deploy(
        UpstreamOpenFga.fixture(ns, "refused", Binaries.OLD_OPENFGA, 0, 1),
        cluster.postgres().createDatabase("monrefused").ownerUri());
    await()
        .atMost(WAIT)
        .until(operator::scrape, t -> t.contains("openfga_operator_job_rejections_total{"));
    cluster.client().resourceQuotas().inNamespace(ns).withName("no-jobs").delete();

    // a reconcile that throws: an admission webhook that cannot be reached fails the Job create
    // with 500 (not a refusal: retried with the framework's backoff, counted as a failure)
    String webhook = "monitoring-unreachable-" + ns;
    cluster
        .client()
        .resource(
            new ValidatingWebhookConfigurationBuilder()
                .withNewMetadata()
                .withName(webhook)
                .endMetadata()
                .addNewWebhook()
                .withName("unreachable.openfga-operator.test")
                .withNewClientConfig()
                .withUrl("https://127.0.0.1:1/validate")
                .endClientConfig()
                .addNewRule()
                .withApiGroups("batch")
                .withApiVersions("v1")
                .withResources("jobs")
                .withOperations("CREATE")
                .endRule()
                .withNewNamespaceSelector()
                .addToMatchLabels("kubernetes.io/metadata.name", ns)
                .endNamespaceSelector()
                .withFailurePolicy("Fail")
                .withSideEffects("None")
                .withAdmissionReviewVersions("v1")
                .endWebhook()
                .build())
        .create();
    try {
      cluster.deploy(
          UpstreamOpenFga.fixture(ns, "unreachable", Binaries.OLD_OPENFGA, 0, 1),
          cluster.postgres().createDatabase("monunreachable").ownerUri());
      await()
          .atMost(WAIT)
          .until(
              operator::scrape,
              t -> t.contains("operator_sdk_controllers_execution_reconcile_failure_total{"));
    } finally {
      cluster
          .client()
          .admissionRegistration()
          .v1()
          .validatingWebhookConfigurations()
          .withName(webhook)
          .delete();
    }

    String text = operator.scrape();
    assertThat(text)
        .contains("openfga_operator_migrations_succeeded_total{deployment=\"openfga\"")
        .contains("openfga_operator_migration_duration_seconds_bucket{deployment=\"openfga\"")
        .contains("openfga_operator_fgamodels{state=\"in_sync\"} 1.0")
        .contains("openfga_operator_fgatuples{state=\"in_sync\"} 1.0");
    Exposition scrape = Exposition.parse(text);
    List<MonitoringQuery> queries =
        MonitoringQuery.of(
            OperatorChart.chart()
                .namespace(install.namespace())
                .values("watchNamespace: " + ns + "\n" + VALUES)
                .render());
    assertThat(queries)
        .extracting(MonitoringQuery::where)
        .contains(
            "alert OpenFGAMigrationFailed",
            "alert OpenFGAMigrationWaiting",
            "alert OpenFGAModelNotInSync",
            "alert OpenFGATuplesNotInSync",
            "alert OpenFGAOperatorDown",
            "alert OpenFGAOperatorNotReady",
            "variable job")
        .anyMatch(w -> w.startsWith("panel "));
    Map<String, List<String>> missing = new LinkedHashMap<>();
    for (MonitoringQuery query : queries) {
      List<String> names = scrape.missing(query.names(), query.labels());
      if (!names.isEmpty()) {
        missing.put(query.where() + ": " + query.expr(), names);
      }
    }
    assertThat(missing)
        .withFailMessage("named but not in the scrape: %s%n%nthe scrape:%n%s", missing, text)
        .isEmpty();
  }

  /**
   * The FGAStore {@code app} on the OpenFGA at {@code url}, the FGAModel {@code app} in it and the
   * FGATuples {@code app} against that model.
   */
  private static void storeModelAndTuples(String ns, String url) {
    FGAStore store = new FGAStore();
    store.setMetadata(new ObjectMetaBuilder().withName("app").withNamespace(ns).build());
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName("monitoring");
    FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
    ref.setUrl(url);
    spec.setOpenfgaRef(ref);
    store.setSpec(spec);
    cluster.client().resource(store).create();

    FGAModel model = new FGAModel();
    model.setMetadata(new ObjectMetaBuilder().withName("app").withNamespace(ns).build());
    FGAModel.Spec m = new FGAModel.Spec();
    m.setStoreRef(new FGAStore.NameRef("app"));
    m.setModel(
        "model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n");
    model.setSpec(m);
    cluster.client().resource(model).create();

    FGATuples tuples = new FGATuples();
    tuples.setMetadata(new ObjectMetaBuilder().withName("app").withNamespace(ns).build());
    FGATuples.Spec t = new FGATuples.Spec();
    t.setStoreRef(new FGAStore.NameRef("app"));
    t.setModelRef(new FGAStore.NameRef("app"));
    t.setTuples(List.of(new FGATuples.TupleSpec("user:anne", "viewer", "doc:readme")));
    tuples.setSpec(t);
    cluster.client().resource(tuples).create();
  }
}
