package dev.openfga.operator.chart;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** A scrape read in the text format, and what a query names that it does not have. */
class ExpositionTest {
  private static final Exposition SCRAPE =
      Exposition.parse(
          """
          # HELP openfga_operator_migrations_failed_total Migration Jobs that failed
          # TYPE openfga_operator_migrations_failed_total counter
          openfga_operator_migrations_failed_total{deployment="openfga",namespace="openfga"} 1.0
          # TYPE openfga_operator_migration_duration_seconds histogram
          openfga_operator_migration_duration_seconds_bucket{deployment="a",namespace="b",le="1.0"} 1
          openfga_operator_migration_duration_seconds_bucket{deployment="a",namespace="b",le="+Inf"} 1
          openfga_operator_migration_duration_seconds_count{deployment="a",namespace="b"} 1
          openfga_operator_migration_duration_seconds_sum{deployment="a",namespace="b"} 0.5
          openfga_operator_deployments_waiting 0.0
          operator_sdk_x_total{exception="Bad \\"quote\\", comma}",controller="c"} 2.0
          """);

  private static java.util.List<String> missing(String expr, String... alsoLabels) {
    return SCRAPE.missing(PromQl.parse(expr), Set.of(alsoLabels));
  }

  @Test
  void samplesAreReadWithTheirSuffixesAndLabels() {
    assertThat(SCRAPE.samples())
        .containsExactly(
            "openfga_operator_migrations_failed_total",
            "openfga_operator_migration_duration_seconds_bucket",
            "openfga_operator_migration_duration_seconds_count",
            "openfga_operator_migration_duration_seconds_sum",
            "openfga_operator_deployments_waiting",
            "operator_sdk_x_total");
    assertThat(missing("operator_sdk_x_total{controller=\"c\", exception=\"e\"}")).isEmpty();
  }

  @Test
  void whatTheScrapeHasIsNotMissing() {
    assertThat(
            missing(
                "histogram_quantile(0.95, sum by (le, namespace, deployment)"
                    + " (rate(openfga_operator_migration_duration_seconds_bucket{job=~\"$job\"}[5m])))",
                "deployment"))
        .isEmpty();
    // Prometheus' own series and the target labels it adds
    assertThat(
            missing(
                "absent(up{job=\"x\"} == 1) or openfga_operator_deployments_waiting{pod=\"p\"}"))
        .isEmpty();
  }

  @Test
  void anUnknownMetricIsMissingAndAHistogramsFamilyNameIsNoSample() {
    assertThat(missing("rate(openfga_operator_migrations_failed[5m])"))
        .containsExactly("metric openfga_operator_migrations_failed");
    assertThat(missing("openfga_operator_migration_duration_seconds"))
        .containsExactly("metric openfga_operator_migration_duration_seconds");
  }

  @Test
  void aLabelTheMetricDoesNotCarryIsMissing() {
    assertThat(missing("openfga_operator_migrations_failed_total{deploymnet=\"x\"}"))
        .containsExactly("label deploymnet of openfga_operator_migrations_failed_total");
    assertThat(missing("sum by (le) (openfga_operator_migrations_failed_total)"))
        .containsExactly("label le (on none of [openfga_operator_migrations_failed_total])");
    assertThat(missing("openfga_operator_deployments_waiting > 0", "deployment"))
        .containsExactly("label deployment (on none of [openfga_operator_deployments_waiting])");
  }
}
