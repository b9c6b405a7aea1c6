package dev.openfga.operator.chart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.migration.rules.DeploymentSettings;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The README's "Quick start on a cluster", command by command, as the shell splits it: the operator
 * chart installed as written watches the namespace where the stock {@code openfga} chart is
 * installed with the values file the command names; that values file is the one the upstream
 * chart's operator-mode fixture was rendered with (the Deployment the real-cluster tier deploys),
 * so the operator selects that Deployment and no Helm hook runs; the Secret the second command
 * makes is the one that Deployment reads; the labels the fourth command lists by are the ones the
 * operator puts on its Jobs and records; the status pod runs the chart's image as its
 * ServiceAccount with the {@code status} subcommand.
 */
class QuickStartTest {
  private static final String FIXTURE = "/fixtures/upstream-openfga-chart-0.3.12/";
  private static List<List<String>> commands;

  @BeforeAll
  static void readTheQuickStart() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    assertThat(readme.indexOf("\n## "))
        .as("the quick start is the README's first section, after the two commands")
        .isEqualTo(readme.indexOf("\n## Quick start on a cluster\n"))
        .isGreaterThan(readme.indexOf("./mvnw verify"));
    commands =
        ShellCommands.parse(
            ShellCommands.between(readme, "<!-- quickstart:start -->", "<!-- quickstart:end -->"));
    assertThat(commands).hasSize(5);
  }

  @Test
  void theOperatorIsThePublishedChartAndWatchesTheNamespaceOfOpenFga() throws Exception {
    List<String> helm = commands.get(0);
    assertThat(helm.subList(0, 4))
        .containsExactly(
            "helm",
            "install",
            "openfga-operator",
            ReleaseTest.published("charts") + "/openfga-operator");
    Map<String, Object> chartYaml =
        OperatorChart.YAML.readValue(
            OperatorChart.DIR.resolve("Chart.yaml").toFile(), OperatorChart.MAP);
    assertThat(ShellCommands.flag(helm, "--version")).isEqualTo(chartYaml.get("version"));
    assertThat(helm).contains("--create-namespace");

    OperatorChart.Manifests operator = operatorChart(helm).render();
    assertThat(operator.args()).noneMatch(a -> a.startsWith("--watch"));
    // no --watch flag: the operator watches its own namespace, POD_NAMESPACE
    assertThat(operator.env(namespace(helm), "pod"))
        .containsEntry("POD_NAMESPACE", namespace(helm));
    assertThat(namespace(helm)).isEqualTo(namespace(commands.get(2)));
  }

  @Test
  void theSecretIsTheOneTheRenderedDeploymentReads() {
    List<String> kubectl = commands.get(1);
    assertThat(kubectl.subList(0, 6))
        .containsExactly(
            "kubectl", "-n", namespace(commands.get(2)), "create", "secret", "generic");
    String literal = ShellCommands.flag(kubectl, "--from-literal");
    EnvVar uri =
        upstreamDeployment()
            .getSpec()
            .getTemplate()
            .getSpec()
            .getContainers()
            .get(0)
            .getEnv()
            .stream()
            .filter(e -> e.getName().equals("OPENFGA_DATASTORE_URI"))
            .findFirst()
            .orElseThrow();
    assertThat(kubectl.get(6)).isEqualTo(uri.getValueFrom().getSecretKeyRef().getName());
    assertThat(literal).startsWith(uri.getValueFrom().getSecretKeyRef().getKey() + "=postgres://");
  }

  @Test
  void theOpenFgaValuesAreTheFixturesSoTheOperatorSelectsItsDeployment() throws Exception {
    List<String> helm = commands.get(2);
    assertThat(helm.subList(0, 4)).containsExactly("helm", "upgrade", "--install", "openfga");
    assertThat(ShellCommands.flag(helm, "--repo"))
        .isEqualTo("https://openfga.github.io/helm-charts");
    String url = ShellCommands.flag(helm, "--values", "-f");
    String owner = ReleaseTest.published("image").split("/")[1];
    String prefix =
        "https://raw.githubusercontent.com/" + owner + "/openfga-operator/v" + chartVersion() + "/";
    assertThat(url).startsWith(prefix);
    Path file = Path.of(url.substring(prefix.length()));
    assertThat(file).exists();
    assertThat(OperatorChart.YAML.readValue(file.toFile(), OperatorChart.MAP))
        .isEqualTo(
            OperatorChart.YAML.readValue(
                QuickStartTest.class.getResource(FIXTURE + "operator-mode.values.yaml"),
                OperatorChart.MAP));

    // the fixture was rendered as release openfga in namespace openfga
    Deployment deployment = upstreamDeployment();
    assertThat(deployment.getMetadata().getName()).isEqualTo("openfga");
    assertThat(namespace(helm)).isEqualTo("openfga");
    assertThat(DeploymentSettings.isDiscovered(deployment)).isTrue();
    assertThat(DeploymentSettings.of(deployment).optedIn()).isTrue();
    assertThat(Fixtures.load(FIXTURE + "operator-mode.yaml", Job.class)).isEmpty();
  }

  @Test
  void theFirstMigrationIsListedByTheLabelsTheOperatorPutsOnItsObjects() {
    List<String> kubectl = commands.get(3);
    assertThat(kubectl.subList(0, 4))
        .containsExactly("kubectl", "-n", namespace(commands.get(2)), "get");
    assertThat(kubectl.get(4).split(",")).containsExactly("jobs", "configmaps");
    assertThat(ShellCommands.flag(kubectl, "-l"))
        .isEqualTo(Keys.MANAGED_BY + "=" + Keys.MANAGED_BY_OPERATOR);
    // the README names what it lists
    assertThat(Names.job("openfga")).isEqualTo("openfga-migrate");
    assertThat(Names.statusConfigMap("openfga")).isEqualTo("openfga-migration-status");
  }

  @Test
  void theStatusViewRunsTheChartsImageAsItsServiceAccount() throws Exception {
    List<String> kubectl = commands.get(4);
    int dashes = kubectl.indexOf("--");
    assertThat(kubectl.subList(dashes + 1, kubectl.size())).containsExactly("status");
    assertThat(kubectl).contains("--rm", "-i", "--restart=Never");
    assertThat(ShellCommands.flag(kubectl, "-n")).isEqualTo(namespace(commands.get(0)));

    Deployment operator = operatorChart(commands.get(0)).render().deployment();
    assertThat(ShellCommands.flag(kubectl, "--image"))
        .isEqualTo(operator.getSpec().getTemplate().getSpec().getContainers().get(0).getImage());
    Pod overrides =
        new com.fasterxml.jackson.databind.ObjectMapper()
            .readValue(ShellCommands.flag(kubectl, "--overrides"), Pod.class);
    assertThat(overrides.getSpec().getServiceAccountName())
        .isEqualTo(operator.getSpec().getTemplate().getSpec().getServiceAccountName());
  }

  private static OperatorChart operatorChart(List<String> helm) {
    return OperatorChart.chart().release(helm.get(2)).namespace(namespace(helm));
  }

  private static String namespace(List<String> command) {
    String namespace = ShellCommands.flag(command, "--namespace", "-n");
    assertThat(namespace).as("the namespace of %s", command).isNotNull();
    return namespace;
  }

  private static Deployment upstreamDeployment() {
    return Fixtures.upstreamChart("operator-mode.yaml", Deployment.class);
  }

  private static String chartVersion() throws Exception {
    return (String)
        OperatorChart.YAML
            .readValue(OperatorChart.DIR.resolve("Chart.yaml").toFile(), OperatorChart.MAP)
            .get("version");
  }
}
