package dev.openfga.operator.chart;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.Rule;
import io.fabric8.openshift.api.model.monitoring.v1.RuleGroup;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One PromQL query of the chart's alerts or dashboard: where it is (an alert, a panel, a template
 * variable), the expression, and the labels its text names besides ({@code $labels.x} in an alert's
 * annotations, {@code {{x}}} in a panel's legend, a variable's {@code label_values} label).
 */
public record MonitoringQuery(String where, String expr, Set<String> labels) {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern ALERT_LABEL =
      Pattern.compile("\\$labels\\.([a-zA-Z_][a-zA-Z0-9_]*)");
  private static final Pattern LEGEND_LABEL =
      Pattern.compile("\\{\\{\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*}}");
  private static final Pattern LABEL_VALUES =
      Pattern.compile("label_values\\((.+),\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*\\)", Pattern.DOTALL);

  /** What {@link PromQl} reads in the expression. */
  public PromQl.Names names() {
    return PromQl.parse(expr);
  }

  /**
   * The queries of the rendered PrometheusRules' alerts and of the dashboards in the rendered
   * ConfigMaps (a data key ending in {@code .json}).
   */
  public static List<MonitoringQuery> of(OperatorChart.Manifests manifests) {
    List<MonitoringQuery> queries = new ArrayList<>();
    for (PrometheusRule rule : manifests.all(PrometheusRule.class)) {
      for (RuleGroup group : rule.getSpec().getGroups()) {
        for (Rule r : group.getRules()) {
          Set<String> labels = new LinkedHashSet<>();
          if (r.getAnnotations() != null) {
            r.getAnnotations().values().forEach(text -> find(ALERT_LABEL, text, labels));
          }
          String name = r.getAlert() != null ? "alert " + r.getAlert() : "record " + r.getRecord();
          queries.add(new MonitoringQuery(name, r.getExpr().getStrVal(), labels));
        }
      }
    }
    for (ConfigMap map : manifests.all(ConfigMap.class)) {
      if (map.getData() == null) {
        continue;
      }
      for (Map.Entry<String, String> file : map.getData().entrySet()) {
        if (file.getKey().endsWith(".json")) {
          dashboard(read(file.getValue()), queries);
        }
      }
    }
    return queries;
  }

  /** The queries of a Grafana dashboard: its panels' (rows' panels too) and its variables'. */
  static void dashboard(JsonNode dashboard, List<MonitoringQuery> queries) {
    panels(dashboard.path("panels"), queries);
    for (JsonNode variable : dashboard.path("templating").path("list")) {
      if (!variable.path("type").asText().equals("query")) {
        continue;
      }
      JsonNode query = variable.path("query");
      String text = query.isObject() ? query.path("query").asText() : query.asText();
      Matcher m = LABEL_VALUES.matcher(text.strip());
      if (!m.matches()) {
        throw new IllegalArgumentException("not label_values(<query>, <label>): " + text);
      }
      queries.add(
          new MonitoringQuery(
              "variable " + variable.path("name").asText(), m.group(1), Set.of(m.group(2))));
    }
  }

  private static void panels(JsonNode panels, List<MonitoringQuery> queries) {
    for (JsonNode panel : panels) {
      panels(panel.path("panels"), queries);
      for (JsonNode target : panel.path("targets")) {
        if (target.hasNonNull("expr")) {
          Set<String> labels = new LinkedHashSet<>();
          find(LEGEND_LABEL, target.path("legendFormat").asText(""), labels);
          queries.add(
              new MonitoringQuery(
                  "panel \"" + panel.path("title").asText() + "\" " + target.path("refId").asText(),
                  target.get("expr").asText(),
                  labels));
        }
      }
    }
  }

  static JsonNode read(String json) {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void find(Pattern pattern, String text, Set<String> into) {
    Matcher m = pattern.matcher(text);
    while (m.find()) {
      into.add(m.group(1));
    }
  }
}
