package dev.openfga.operator.chart;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kubectl plugin {@code bin/kubectl-openfga_operator} against a stand-in {@code kubectl} that
 * records its arguments and answers with what the chart renders: it finds the operator's Deployment
 * by the chart's labels, and runs {@code status} with the caller's arguments in a pod of the
 * chart's image and ServiceAccount that the restricted Pod Security Standard admits.
 */
class KubectlPluginTest {
  private static final Path PLUGIN = Path.of("bin", "kubectl-openfga_operator").toAbsolutePath();
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void runsTheStatusViewInAPodOfTheOperatorsImageAndServiceAccount() throws Exception {
    Deployment operator =
        OperatorChart.chart().values("imagePullSecrets: [{name: regcred}]").render().deployment();
    Run run = plugin(operator, "status", "-n", "openfga", "-o", "json");

    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output()).contains("status printed this");
    List<List<String>> calls = run.calls();
    // found by the chart's own labels, across namespaces, then one read of the Deployment
    assertThat(calls.get(0))
        .containsSubsequence("get", "deployments", "--all-namespaces", "-l")
        .anySatisfy(
            a ->
                assertThat(operator.getMetadata().getLabels())
                    .containsEntry("app.kubernetes.io/name", a.replaceFirst(".*=", "")));
    assertThat(calls.get(1))
        .containsSubsequence(
            "-n",
            operator.getMetadata().getNamespace(),
            "get",
            "deployment",
            operator.getMetadata().getName());
    List<String> runCall = calls.get(2);
    assertThat(runCall)
        .containsSubsequence("-n", operator.getMetadata().getNamespace(), "run")
        .contains("--rm", "-i", "--restart=Never", "--override-type=merge");
    String overrides = value(runCall, "--overrides=");
    Pod pod = JSON.readValue(overrides, Pod.class);
    var spec = pod.getSpec();
    var template = operator.getSpec().getTemplate().getSpec();
    assertThat(spec.getServiceAccountName()).isEqualTo(template.getServiceAccountName());
    assertThat(spec.getImagePullSecrets()).extracting("name").containsExactly("regcred");
    assertThat(spec.getContainers()).hasSize(1);
    assertThat(spec.getContainers().get(0).getImage())
        .isEqualTo(template.getContainers().get(0).getImage())
        .isEqualTo(value(runCall, "--image="));
    // the image's entrypoint is the operator's java -jar: the arguments choose the subcommand
    assertThat(spec.getContainers().get(0).getArgs())
        .containsExactly("status", "-n", "openfga", "-o", "json");
    assertThat(spec.getContainers().get(0).getCommand()).isNullOrEmpty();
    assertThat(RestrictedPodSecurity.violations(new PodTemplateSpec(null, spec))).isEmpty();
  }

  @Test
  void argumentsThatNeedQuotingStayOneJsonStringEach() throws Exception {
    Deployment operator = OperatorChart.chart().render().deployment();
    Run run =
        plugin(operator, "--operator-namespace", "ops", "status", "-n", "a\"b\\c", "--output=json");
    assertThat(run.exitCode()).as(run.output()).isZero();
    // the namespace was given: no search across namespaces
    assertThat(run.calls().get(0)).containsSubsequence("-n", "ops", "get", "deployments");
    Pod pod = JSON.readValue(value(run.calls().get(2), "--overrides="), Pod.class);
    assertThat(pod.getSpec().getContainers().get(0).getArgs())
        .containsExactly("status", "-n", "a\"b\\c", "--output=json");
  }

  @Test
  void withoutTheStatusSubcommandItPrintsUsageAndRunsNothing() throws Exception {
    Run run = plugin(OperatorChart.chart().render().deployment(), "stats");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.output()).contains("unknown command or flag stats", "kubectl openfga-operator");
    assertThat(run.calls()).isEmpty();
  }

  @Test
  void twoOperatorsAndNoNamespaceGivenIsAnErrorNamingBoth() throws Exception {
    Path kubectl = fakeKubectl("a openfga-operator\nb openfga-operator\n", "", "");
    Run run = run(kubectl, "status");
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.output())
        .contains("found 2 operator Deployments", "--operator-namespace", "a openfga-operator");
    assertThat(run.calls()).hasSize(1);
  }

  private Run plugin(Deployment operator, String... args) throws Exception {
    var template = operator.getSpec().getTemplate().getSpec();
    String pullSecrets =
        template.getImagePullSecrets() == null
            ? ""
            : template.getImagePullSecrets().stream()
                .map(s -> s.getName() + " ")
                .reduce("", String::concat);
    Path kubectl =
        fakeKubectl(
            operator.getMetadata().getNamespace() + " " + operator.getMetadata().getName() + "\n",
            operator.getMetadata().getName(),
            template.getContainers().get(0).getImage()
                + "\t"
                + template.getServiceAccountName()
                + "\t"
                + pullSecrets);
    return run(kubectl, args);
  }

  /**
   * A {@code kubectl} that appends its arguments (one per line, a blank line after each call) to
   * {@code calls} and answers: the search across namespaces with {@code found}, a list in one
   * namespace with {@code name}, a read of one Deployment with {@code spec}, and {@code run} with a
   * line of output.
   */
  private Path fakeKubectl(String found, String name, String spec) throws IOException {
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Files.writeString(dir.resolve("found"), found);
    Files.writeString(dir.resolve("name"), name);
    Files.writeString(dir.resolve("spec"), spec);
    Path kubectl = bin.resolve("kubectl");
    Files.writeString(
        kubectl,
        """
        #!/bin/sh
        d=$(dirname "$0")/..
        for a in "$@"; do printf '%s\\n' "$a"; done >> "$d/calls"
        echo >> "$d/calls"
        case " $* " in
          *" --all-namespaces "*) cat "$d/found" ;;
          *" get deployments "*) cat "$d/name" ;;
          *" get deployment "*) cat "$d/spec" ;;
          *" run "*) echo "status printed this" ;;
          *) echo "unexpected kubectl $*" >&2; exit 9 ;;
        esac
        """);
    Files.setPosixFilePermissions(kubectl, PosixFilePermissions.fromString("rwxr-xr-x"));
    return kubectl;
  }

  private Run run(Path kubectl, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("sh", PLUGIN.toString()));
    command.addAll(Arrays.asList(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    Map<String, String> env = builder.environment();
    env.put("PATH", kubectl.getParent() + ":" + env.get("PATH"));
    env.remove("OPENFGA_OPERATOR_NAMESPACE");
    env.remove("OPENFGA_OPERATOR_NAME");
    Process process = builder.start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    Path log = dir.resolve("calls");
    List<List<String>> calls = new ArrayList<>();
    if (Files.exists(log)) {
      List<String> current = new ArrayList<>();
      for (String line : Files.readAllLines(log)) {
        if (line.isEmpty()) {
          calls.add(current);
          current = new ArrayList<>();
        } else {
          current.add(line);
        }
      }
    }
    return new Run(process.exitValue(), output, calls);
  }

  private static String value(List<String> args, String prefix) {
    return args.stream()
        .filter(a -> a.startsWith(prefix))
        .map(a -> a.substring(prefix.length()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + prefix + " in " + args));
  }

  private record Run(int exitCode, String output, List<List<String>> calls) {}
}
