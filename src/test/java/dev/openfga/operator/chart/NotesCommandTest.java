package dev.openfga.operator.chart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.DeploymentSettings;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The commands NOTES.txt prints work as typed: every line that looks like a command is split as the
 * shell splits it; the one that hands an upstream {@code openfga} release to the operator is
 * applied as Helm applies {@code --set} and {@code --set-string} (on top of the values of a release
 * installed in hook mode, as {@code --reuse-values} does) to a stand-in of the upstream chart's
 * relevant templates and schema, and the operator must select the Deployment it renders, with no
 * hook Job and no wait-for init container left. The two ways users fell into before (a plain {@code
 * --set}, quotes inside the key) are shown to fail in the same harness.
 */
class NotesCommandTest {
  private static final Path STANDIN = OperatorChart.resource("upstream-openfga-standin");
  private static final Path HOOK_MODE_VALUES =
      Path.of("src/test/resources/fixtures/upstream-openfga-chart-0.3.12/hook-mode.values.yaml")
          .toAbsolutePath();

  @TempDir Path dir;

  @Test
  void theHelmUpgradeInTheNotesOptsTheUpstreamReleaseIn() {
    for (String values : List.of("", "watchNamespace: apps", "watchNamespaces: [a, b]")) {
      OperatorChart chart = OperatorChart.chart();
      if (!values.isEmpty()) {
        chart.values(values);
      }
      List<String> helm = helmUpgrade(chart.notes());
      String namespace = ShellCommands.flag(helm, "--namespace", "-n");
      List<String> watched =
          chart.render().args().stream()
              .filter(a -> a.startsWith("--watch-namespace"))
              .flatMap(a -> java.util.Arrays.stream(a.substring(a.indexOf('=') + 1).split(",")))
              .toList();
      assertThat(namespace)
          .as("a watched namespace")
          .isIn(watched.isEmpty() ? List.of(OperatorChart.NAMESPACE) : watched);
      assertThat(helm).contains("--reuse-values");
      List<String> positional =
          ShellCommands.positional(
              helm, List.of("--repo", "-n", "--namespace", "--set", "--set-string", "--values"));
      assertThat(positional.subList(0, 4)).containsExactly("helm", "upgrade", "openfga", "openfga");

      HelmSetValues set = new HelmSetValues();
      for (Map.Entry<String, String> flag : ShellCommands.flags(helm, "--set", "--set-string")) {
        set.apply(flag.getValue(), flag.getKey().equals("--set"));
      }
      OperatorChart.Manifests upstream =
          OperatorChart.chart()
              .at(STANDIN)
              .release(positional.get(2))
              .namespace(namespace)
              .valuesFile(HOOK_MODE_VALUES)
              .valuesFile(set.write(dir))
              .render();
      assertSelectedWithoutHooks(upstream);
    }
  }

  @Test
  void theValuesFileInTheNotesOptsTheUpstreamReleaseInToo() throws Exception {
    String notes = OperatorChart.chart().notes();
    int from = notes.indexOf("values file:\n");
    assertThat(from).as(notes).isPositive();
    List<String> yaml = new ArrayList<>();
    for (String line : notes.substring(from).split("\n", -1)) {
      if (line.startsWith("  ")) {
        yaml.add(line.substring(2));
      } else if (!yaml.isEmpty()) {
        break;
      }
    }
    Path file = dir.resolve("notes-values.yaml");
    java.nio.file.Files.write(file, yaml);
    assertSelectedWithoutHooks(
        OperatorChart.chart()
            .at(STANDIN)
            .release("openfga")
            .namespace("openfga")
            .valuesFile(HOOK_MODE_VALUES)
            .valuesFile(file)
            .render());
  }

  @Test
  void theStandInReproducesBothTrapsOfThePlainSet() {
    // --set annotations.openfga\.dev/migration-enabled=true (quoted for the shell): a boolean
    String error =
        OperatorChart.chart()
            .at(STANDIN)
            .release("openfga")
            .namespace("openfga")
            .valuesFile(HOOK_MODE_VALUES)
            .valuesFile(
                new HelmSetValues()
                    .apply("annotations.openfga\\.dev/migration-enabled=true", true)
                    .write(dir))
            .renderError();
    // Helm's schema error (its wording depends on Helm's JSON schema library)
    assertThat(error)
        .contains("annotations.openfga.dev/migration-enabled")
        .containsIgnoringCase("boolean");

    // what the NOTES said before: annotations."openfga\.dev/migration-enabled"="true" as one
    // quoted shell word renders, with the quotes in the key and the value, and is ignored
    List<String> old =
        ShellCommands.parse(
                "helm upgrade openfga openfga --set 'annotations.\"openfga\\.dev/migration-enabled\"=\"true\"'")
            .get(0);
    HelmSetValues set = new HelmSetValues().apply(ShellCommands.flag(old, "--set"), true);
    Deployment deployment =
        OperatorChart.chart()
            .at(STANDIN)
            .release("openfga")
            .namespace("openfga")
            .valuesFile(set.write(dir))
            .render()
            .one(Deployment.class);
    assertThat(deployment.getMetadata().getAnnotations())
        .containsEntry("\"openfga.dev/migration-enabled\"", "\"true\"");
    assertThat(DeploymentSettings.of(deployment).optedIn()).isFalse();
  }

  @Test
  void everyCommandInTheNotesIsPlainShellWithoutPlaceholders() {
    for (String values :
        List.of(
            "",
            "watchNamespaces: [a, b]",
            "watchAllNamespaces: true",
            "storesAndModels: {enabled: true, servers: [http://openfga.openfga.svc:8080]}")) {
      OperatorChart chart = OperatorChart.chart();
      if (!values.isEmpty()) {
        chart.values(values);
      }
      String notes = chart.notes();
      List<String> commands = commandLines(notes);
      assertThat(commands).as(notes).isNotEmpty();
      for (String command : commands) {
        assertThat(command).as("typed as printed").doesNotContain("<", ">");
        List<List<String>> parsed = ShellCommands.parse(command);
        assertThat(parsed).as(command).hasSize(1);
        assertThat(parsed.get(0).get(0)).isIn("kubectl", "helm");
      }
    }
  }

  private static void assertSelectedWithoutHooks(OperatorChart.Manifests upstream) {
    Deployment deployment = upstream.one(Deployment.class);
    assertThat(DeploymentSettings.isDiscovered(deployment)).isTrue();
    assertThat(DeploymentSettings.of(deployment).optedIn()).isTrue();
    assertThat(upstream.all(Job.class)).as("no Helm hook Job").isEmpty();
    assertThat(deployment.getSpec().getTemplate().getSpec().getInitContainers())
        .as("no wait-for-migration init container")
        .isNullOrEmpty();
  }

  /** The helm upgrade of the NOTES, with its continuation lines, split into words. */
  private static List<String> helmUpgrade(String notes) {
    List<String> found =
        commandLines(notes).stream().filter(c -> c.startsWith("helm upgrade")).toList();
    assertThat(found).as(notes).hasSize(1);
    return ShellCommands.parse(found.get(0)).get(0);
  }

  /**
   * The lines of the NOTES that are commands (indented, starting with kubectl or helm), each joined
   * with its continuation lines, without a trailing comment.
   */
  private static List<String> commandLines(String notes) {
    List<String> commands = new ArrayList<>();
    String[] lines = notes.split("\n");
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (!lines[i].startsWith("  ")
          || !(line.startsWith("kubectl ") || line.startsWith("helm "))) {
        continue;
      }
      StringBuilder command = new StringBuilder(line);
      while (command.toString().endsWith("\\") && i + 1 < lines.length) {
        command.append('\n').append(lines[++i].strip());
      }
      commands.add(command.toString());
    }
    return commands;
  }
}
