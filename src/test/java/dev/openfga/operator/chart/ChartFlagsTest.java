package dev.openfga.operator.chart;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.config.Environment;
import dev.openfga.operator.config.Flag;
import dev.openfga.operator.config.Flags;
import dev.openfga.operator.config.InvalidFlagsException;
import dev.openfga.operator.config.LoggingConfig;
import dev.openfga.operator.config.StartupConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The container args and environment the chart renders are accepted by the operator's own flag
 * parser, and mean what the values say.
 */
class ChartFlagsTest {
  private static final Path NO_NAMESPACE_FILE = Path.of("/nonexistent/serviceaccount/namespace");

  /** Parses the rendered args with the environment the pod would have. */
  static StartupConfig parse(OperatorChart.Manifests manifests) throws InvalidFlagsException {
    String namespace = manifests.deployment().getMetadata().getNamespace();
    var environment = Environment.of(manifests.env(namespace, "operator-0"), NO_NAMESPACE_FILE);
    return Flags.parse(environment, manifests.args().toArray(String[]::new));
  }

  @Test
  void defaultsWatchTheOperatorsOwnNamespaceWithLeaderElection() throws Exception {
    StartupConfig config = parse(chart().render());

    var operator = config.operator();
    assertThat(operator.watchNamespaces()).containsExactly("openfga-system");
    assertThat(operator.leaderElect()).isTrue();
    assertThat(operator.leaseNamespace()).contains("openfga-system");
    assertThat(operator.leaseName()).isEqualTo("openfga-operator-leader");
    assertThat(operator.metricsAddress()).isEmpty();
    assertThat(operator.healthAddress()).isPresent();
    assertThat(operator.backoffLimit()).isEqualTo(3);
    assertThat(operator.activeDeadlineSeconds()).isEqualTo(300);
    assertThat(operator.ttlSecondsAfterFinished()).isEqualTo(300);
    assertThat(operator.retryCooldown()).isEqualTo(Duration.ofSeconds(60));
    assertThat(operator.failureLogLines()).isEqualTo(20);
    assertThat(config.logging()).isEqualTo(LoggingConfig.DEFAULT);
  }

  @Test
  void everyOptionReachesTheOperator() throws Exception {
    StartupConfig config = parse(chart().valuesFile("every-option.yaml").render());

    var operator = config.operator();
    assertThat(operator.watchNamespaces())
        .containsExactlyInAnyOrder("openfga", "openfga-staging", "openfga-prod");
    assertThat(operator.leaderElect()).isTrue();
    assertThat(operator.leaseNamespace()).isEqualTo(Optional.of("fga-system"));
    assertThat(operator.leaseName()).isEqualTo("fga-team-a-leader");
    assertThat(operator.metricsAddress()).isPresent();
    assertThat(operator.metricsAddress().get()).endsWith(":8080");
    assertThat(operator.backoffLimit()).isZero();
    assertThat(operator.activeDeadlineSeconds()).isEqualTo(1800);
    assertThat(operator.ttlSecondsAfterFinished()).isZero();
    assertThat(operator.retryCooldown()).isEqualTo(Duration.ofSeconds(150));
    assertThat(operator.failureLogLines()).isEqualTo(50);
    assertThat(config.logging())
        .isEqualTo(new LoggingConfig(LoggingConfig.Format.JSON, LoggingConfig.Level.DEBUG));
  }

  @Test
  void allNamespacesModeIsAccepted() throws Exception {
    StartupConfig config = parse(chart().valuesFile("all-namespaces.yaml").render());

    assertThat(config.operator().watchesAllNamespaces()).isTrue();
    assertThat(config.operator().storesAndModels()).isTrue();
    assertThat(config.operator().modelTestMaxChecks()).isEqualTo(5000);
    assertThat(config.operator().openfgaServers())
        .containsExactly("http://openfga.openfga.svc:8080", "https://fga.example.com/api/");
  }

  @Test
  void severalNamespacesAreAccepted() throws Exception {
    StartupConfig config = parse(chart().valuesFile("several-namespaces.yaml").render());

    assertThat(config.operator().watchNamespaces()).containsExactlyInAnyOrder("team-a", "team-b");
  }

  @Test
  void largeNumbersAreRenderedAsIntegers() throws Exception {
    var manifests =
        chart()
            .values(
                "migrationJob:\n  activeDeadlineSeconds: 12345678901\n"
                    + "  ttlSecondsAfterFinished: 2147483647\n  backoffLimit: 1000000\n")
            .render();

    var operator = parse(manifests).operator();
    assertThat(operator.activeDeadlineSeconds()).isEqualTo(12345678901L);
    assertThat(operator.ttlSecondsAfterFinished()).isEqualTo(Integer.MAX_VALUE);
    assertThat(operator.backoffLimit()).isEqualTo(1000000);
  }

  @Test
  void theChartCanSetEveryFlagOfTheOperator() {
    Set<String> rendered = new HashSet<>();
    for (String file : new String[] {"every-option.yaml", "all-namespaces.yaml"}) {
      chart().valuesFile(file).render().args().stream()
          .map(a -> a.split("=", 2)[0])
          .forEach(rendered::add);
    }

    assertThat(rendered)
        .containsExactlyInAnyOrderElementsOf(
            Arrays.stream(Flag.values()).map(Flag::option).collect(Collectors.toSet()));
  }

  @Test
  void thePodNamespaceComesFromTheDownwardApi() {
    var env = chart().render().operator().getEnv();

    assertThat(env)
        .filteredOn(e -> e.getName().equals(Flags.POD_NAMESPACE))
        .singleElement()
        .satisfies(
            e ->
                assertThat(e.getValueFrom().getFieldRef().getFieldPath())
                    .isEqualTo("metadata.namespace"));
  }
}
