package dev.openfga.operator.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The metric and label names {@link PromQl} reads out of expressions. */
class PromQlTest {

  private static List<PromQl.Selector> selectors(String expr) {
    return PromQl.parse(expr).selectors();
  }

  @Test
  void aSelectorsMetricAndMatcherLabelsAreRead() {
    assertThat(selectors("openfga_operator_deployments{job=\"op\", state!=\"up_to_date\"} > 0"))
        .containsExactly(
            new PromQl.Selector("openfga_operator_deployments", Set.of("job", "state")));
    // whitespace before the braces, and the other matcher operators
    assertThat(selectors("m {a=~\"x|y\",b!~'z',}"))
        .containsExactly(new PromQl.Selector("m", Set.of("a", "b")));
  }

  @Test
  void functionsAggregationsKeywordsNumbersAndDurationsAreNotMetrics() {
    PromQl.Names names =
        PromQl.parse(
            "histogram_quantile(0.95, sum by (le, controller) (rate(x_bucket{job=~\"$job\"}[5m])))"
                + " > 1e-3 and time() - max without (instance, pod) (last offset 15m) < Inf");
    assertThat(names.metrics()).containsExactly("x_bucket", "last");
    assertThat(names.groupingLabels())
        .containsExactlyInAnyOrder("le", "controller", "instance", "pod");
  }

  @Test
  void labelListsOfAllModifiersAreRead() {
    PromQl.Names names =
        PromQl.parse(
            "sum(rate(a_total[1m])) without (instance) / on (pod) group_left (node) b"
                + " or ignoring (x) c unless d");
    assertThat(names.metrics()).containsExactly("a_total", "b", "c", "d");
    assertThat(names.groupingLabels()).containsExactlyInAnyOrder("instance", "pod", "node", "x");
  }

  @Test
  void keywordsAreReadWhateverTheirCase() {
    PromQl.Names names = PromQl.parse("SUM BY (x) (m) OR Max(n) WITHOUT (y)");
    assertThat(names.metrics()).containsExactly("m", "n");
    assertThat(names.groupingLabels()).containsExactlyInAnyOrder("x", "y");
  }

  @Test
  void aNameMatcherIsTheMetric() {
    assertThat(selectors("{__name__=\"foo_total\", a!=\"1\"}"))
        .containsExactly(new PromQl.Selector("foo_total", Set.of("a")));
    assertThat(selectors("{__name__=~\"foo.*\"}"))
        .containsExactly(new PromQl.Selector(null, Set.of()));
  }

  @Test
  void stringsCommentsRangesAndGrafanaVariablesAreSkipped() {
    PromQl.Names names =
        PromQl.parse(
            """
            # rate(not_a_metric[5m]) by (nope)
            label_replace(m{a="b{c} d(e)"}, "dst", "$1", "src", "(.*)")
              + topk($n, increase(k[$__rate_interval:1m]))
              + ${scale:raw} * n[${window}]
            """);
    assertThat(names.metrics()).containsExactly("m", "k", "n");
    assertThat(names.groupingLabels()).isEmpty();
    assertThat(names.selectors().get(0).labels()).containsExactly("a");
  }

  @Test
  void absentAndUpAreRead() {
    assertThat(selectors("absent(up{job=\"openfga-operator-metrics\"} == 1)"))
        .containsExactly(new PromQl.Selector("up", Set.of("job")));
  }

  @Test
  void anUnknownFunctionOrAnUnclosedSelectorIsAnError() {
    assertThatThrownBy(() -> PromQl.parse("rat(m[5m])"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown function rat");
    assertThatThrownBy(() -> PromQl.parse("m{a=\"b\""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unclosed");
    assertThatThrownBy(() -> PromQl.parse("m{a}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("matcher operator");
    assertThatThrownBy(() -> PromQl.parse("rate(m[5m)"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unclosed [");
  }
}
