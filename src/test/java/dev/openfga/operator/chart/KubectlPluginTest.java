package dev.openfga.operator.chart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.testing.KubectlPlugin;
import dev.openfga.operator.testing.KubectlPlugin.Run;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kubectl plugin {@code bin/kubectl-openfga_operator} against a stand-in {@code kubectl} that
 * records its arguments and answers with what the chart renders: it finds the operator's Deployment
 * by the chart's labels, and runs {@code status} with the caller's arguments in a pod of the
 * chart's image and ServiceAccount that the restricted Pod Security Standard admits.
 */
class KubectlPluginTest {

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
    Pod pod = run.pod();
    var spec = pod.getSpec();
    var template = operator.getSpec().getTemplate().getSpec();
    assertThat(spec.getServiceAccountName()).isEqualTo(template.getServiceAccountName());
    assertThat(spec.getImagePullSecrets()).extracting("name").containsExactly("regcred");
    assertThat(spec.getContainers()).hasSize(1);
    assertThat(spec.getContainers().get(0).getImage())
        .isEqualTo(template.getContainers().get(0).getImage())
        .isEqualTo(run.value(2, "--image="));
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
    Pod pod = run.pod();
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
    Run run =
        new KubectlPlugin(dir).run("a openfga-operator\nb openfga-operator\n", "", "", "status");
    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.output())
        .contains("found 2 operator Deployments", "--operator-namespace", "a openfga-operator");
    assertThat(run.calls()).hasSize(1);
  }

  private Run plugin(Deployment operator, String... args) {
    var template = operator.getSpec().getTemplate().getSpec();
    String pullSecrets =
        template.getImagePullSecrets() == null
            ? ""
            : template.getImagePullSecrets().stream()
                .map(s -> s.getName() + " ")
                .reduce("", String::concat);
    return new KubectlPlugin(dir)
        .run(
            operator.getMetadata().getNamespace() + " " + operator.getMetadata().getName() + "\n",
            operator.getMetadata().getName(),
            template.getContainers().get(0).getImage()
                + "\t"
                + template.getServiceAccountName()
                + "\t"
                + pullSecrets,
            args);
  }
}
