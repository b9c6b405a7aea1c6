package dev.openfga.operator.chart;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.Rule;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The opt-in PrometheusRule and Grafana dashboard: rendered only when asked for, valid, on the
 * ServiceMonitor's job. That their metrics and labels exist is {@code MonitoringIT}'s, against a
 * real operator's scrape.
 */
class ChartMonitoringTest {
  private static final String MONITORED =
      "metrics: {enabled: true, serviceMonitor: {enabled: true}}\n";
  private static final Pattern JOB = Pattern.compile("job=\"([^\"]*)\"");

  @Test
  void neitherIsRenderedUnlessAskedFor() {
    var manifests = chart().values(MONITORED).render();

    assertThat(manifests.all(PrometheusRule.class)).isEmpty();
    assertThat(manifests.all(ConfigMap.class)).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"prometheusRule", "grafanaDashboard"})
  void eachNeedsTheMetrics(String key) {
    assertThat(chart().values(key + ": {enabled: true}\n").renderError())
        .contains(key + ".enabled needs metrics.enabled: true");
  }

  @Test
  void theRuleAlertsOnTheServiceMonitorsJobWithTheDefaultThresholds() {
    var manifests =
        chart()
            .values(MONITORED + "prometheusRule: {enabled: true, labels: {release: prometheus}}\n")
            .render();

    PrometheusRule rule = manifests.one(PrometheusRule.class);
    assertThat(UnknownFields.in(rule)).isEmpty();
    assertThat(rule.getMetadata().getName()).isEqualTo("openfga-operator");
    assertThat(rule.getMetadata().getNamespace()).isEqualTo("openfga-system");
    assertThat(rule.getMetadata().getLabels())
        .containsEntry("release", "prometheus")
        .containsEntry("app.kubernetes.io/name", "openfga-operator");
    List<Rule> alerts = alerts(rule);
    assertThat(alerts)
        .extracting(Rule::getAlert)
        .containsExactly(
            "OpenFGAMigrationFailed",
            "OpenFGAMigrationWaiting",
            "OpenFGAOperatorDown",
            "OpenFGAOperatorNotReady");
    assertThat(alerts).extracting(Rule::getFor).containsExactly(null, "15m", "5m", "5m");
    assertThat(alerts)
        .extracting(a -> a.getLabels().get("severity"))
        .containsExactly("warning", "warning", "critical", "critical");
    // the ServiceMonitor's job is its Service's name; the series keep their own namespace label
    // (an OpenFGA Deployment's), which the alerts' texts name
    Service service = manifests.one(Service.class);
    ServiceMonitor monitor = manifests.one(ServiceMonitor.class);
    assertThat(monitor.getSpec().getJobLabel()).isNull();
    assertThat(monitor.getSpec().getEndpoints())
        .singleElement()
        .satisfies(e -> assertThat(e.getHonorLabels()).isTrue());
    assertThat(alerts).allSatisfy(a -> assertOnlyJob(a, service.getMetadata().getName()));
  }

  @Test
  void theThresholdsAndTheJobAreTheValuesAndTheModelAndTuplesAlertsComeWithStoresAndModels() {
    PrometheusRule rule =
        chart()
            .values(
                """
                metrics: {enabled: true}
                storesAndModels: {enabled: true, servers: ["http://openfga:8080"]}
                prometheusRule:
                  enabled: true
                  job: openfga-operator-pods
                  waitingMinutes: 40
                  fgaModelNotInSyncMinutes: 20
                  fgaTuplesNotInSyncMinutes: 25
                  operatorDownMinutes: 3
                """)
            .render()
            .one(PrometheusRule.class);

    List<Rule> alerts = alerts(rule);
    assertThat(alerts)
        .extracting(a -> a.getAlert() + " " + a.getFor())
        .containsExactly(
            "OpenFGAMigrationFailed null",
            "OpenFGAMigrationWaiting 40m",
            "OpenFGAModelNotInSync 20m",
            "OpenFGATuplesNotInSync 25m",
            "OpenFGAOperatorDown 3m",
            "OpenFGAOperatorNotReady 3m");
    assertThat(alerts).allSatisfy(a -> assertOnlyJob(a, "openfga-operator-pods"));
    assertThat(alerts.get(1).getAnnotations().get("summary")).contains("40 minutes");
    assertThat(alerts.get(3).getAnnotations().get("summary")).contains("25 minutes");
    assertThat(alerts.get(3).getExpr().getStrVal())
        .contains("openfga_operator_fgatuples{")
        .contains("state!=\"in_sync\"");
  }

  /** Every selector of the alert's expression is on that job, and no other. */
  private static void assertOnlyJob(Rule alert, String job) {
    String expr = alert.getExpr().getStrVal();
    PromQl.Names names = PromQl.parse(expr);
    assertThat(names.selectors()).as(expr).isNotEmpty();
    assertThat(names.selectors()).as(expr).allSatisfy(s -> assertThat(s.labels()).contains("job"));
    List<String> jobs = new ArrayList<>();
    Matcher m = JOB.matcher(expr);
    while (m.find()) {
      jobs.add(m.group(1));
    }
    assertThat(jobs).as(expr).hasSize(names.selectors().size()).containsOnly(job);
  }

  private static List<Rule> alerts(PrometheusRule rule) {
    assertThat(rule.getSpec().getGroups()).hasSize(1);
    return rule.getSpec().getGroups().get(0).getRules();
  }

  @Test
  void theDashboardIsTheChartsJsonInAConfigMapForTheSidecar() throws IOException {
    var manifests =
        chart()
            .values(
                MONITORED
                    + "grafanaDashboard:\n  enabled: true\n  labels: {team: platform}\n"
                    + "  annotations: {grafana_folder: OpenFGA}\n")
            .render();

    ConfigMap map = manifests.one(ConfigMap.class);
    assertThat(UnknownFields.in(map)).isEmpty();
    assertThat(map.getMetadata().getName()).isEqualTo("openfga-operator-dashboard");
    assertThat(map.getMetadata().getNamespace()).isEqualTo("openfga-system");
    assertThat(map.getMetadata().getLabels())
        .containsEntry("grafana_dashboard", "1")
        .containsEntry("team", "platform")
        .containsEntry("app.kubernetes.io/name", "openfga-operator");
    assertThat(map.getMetadata().getAnnotations()).containsEntry("grafana_folder", "OpenFGA");
    assertThat(map.getData()).containsOnlyKeys("openfga-operator.json");
    JsonNode dashboard = MonitoringQuery.read(map.getData().get("openfga-operator.json"));
    assertThat(dashboard)
        .isEqualTo(
            MonitoringQuery.read(
                Files.readString(OperatorChart.DIR.resolve("dashboards/openfga-operator.json"))));

    assertThat(dashboard.path("uid").asText()).isEqualTo("openfga-operator");
    Set<Integer> ids = new HashSet<>();
    for (JsonNode panel : dashboard.path("panels")) {
      String title = panel.path("title").asText();
      assertThat(ids.add(panel.path("id").asInt())).as("id of %s", title).isTrue();
      JsonNode grid = panel.path("gridPos");
      assertThat(grid.path("x").asInt() + grid.path("w").asInt()).as(title).isBetween(1, 24);
      if (!panel.path("type").asText().equals("row")) {
        assertThat(panel.path("targets")).as(title).isNotEmpty();
        assertThat(panel.path("datasource").path("uid").asText())
            .as(title)
            .isEqualTo("${datasource}");
      }
    }
    List<MonitoringQuery> queries = MonitoringQuery.of(manifests);
    Set<String> metrics = new HashSet<>();
    for (MonitoringQuery query : queries) {
      PromQl.Names names = query.names();
      assertThat(names.metrics()).as(query.where()).isNotEmpty();
      metrics.addAll(names.metrics());
      if (query.where().startsWith("panel")) {
        // the operators the variable job chose
        assertThat(names.selectors())
            .as(query.where())
            .allSatisfy(s -> assertThat(s.labels()).contains("job"));
      }
    }
    assertThat(metrics)
        .contains(
            "openfga_operator_migrations_started_total",
            "openfga_operator_migrations_succeeded_total",
            "openfga_operator_migrations_failed_total",
            "openfga_operator_migration_duration_seconds_bucket",
            "openfga_operator_deployments_waiting",
            "openfga_operator_last_success_timestamp_seconds",
            "openfga_operator_fgamodels",
            "openfga_operator_fgatuples",
            "operator_sdk_controllers_execution_reconcile_seconds_count",
            "operator_sdk_controllers_execution_reconcile_failure_total",
            "jvm_memory_used_bytes");
  }

  @Test
  void theSidecarsLabelCanBeDropped() {
    ConfigMap map =
        chart()
            .values(
                MONITORED
                    + "grafanaDashboard: {enabled: true, labels: {grafana_dashboard: null}}\n")
            .render()
            .one(ConfigMap.class);

    assertThat(map.getMetadata().getLabels()).doesNotContainKey("grafana_dashboard");
  }
}
