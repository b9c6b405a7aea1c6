package dev.openfga.operator.chart;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The chart lints strictly and renders what its values say, in each mode. */
class ChartRenderTest {

  @Test
  void lintsStrictlyWithItsDefaults() {
    LintResult result = chart().lint();
    assertThat(result.isFailed()).as("%s", result.getMessages()).isFalse();
    assertThat(result.getMessages())
        .noneMatch(m -> m.contains("[WARNING]") || m.contains("[ERROR]"));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "every-option.yaml",
        "all-namespaces.yaml",
        "several-namespaces.yaml",
        "existing-service-account.yaml"
      })
  void lintsStrictlyWithEachValuesFile(String file) {
    LintResult result = chart().valuesFile(file).lint();
    assertThat(result.isFailed()).as("%s", result.getMessages()).isFalse();
    assertThat(result.getMessages())
        .noneMatch(m -> m.contains("[WARNING]") || m.contains("[ERROR]"));
  }

  @Test
  void lintsStrictlyWithTheChartTestingValues() throws IOException {
    try (var files = Files.list(OperatorChart.DIR.resolve("ci"))) {
      List<Path> ci = files.toList();
      assertThat(ci).isNotEmpty();
      for (Path file : ci) {
        LintResult result = chart().valuesFile(file).lint();
        assertThat(result.isFailed()).as("%s: %s", file, result.getMessages()).isFalse();
      }
    }
  }

  @Test
  void defaultsRenderTheOperatorWithARoleInItsOwnNamespace() {
    var manifests = chart().render();

    assertThat(manifests.objects().stream().map(o -> o.getKind() + "/" + o.getMetadata().getName()))
        .containsExactlyInAnyOrder(
            "ServiceAccount/openfga-operator",
            "Role/openfga-operator",
            "RoleBinding/openfga-operator-role",
            "Role/openfga-operator-leader-election",
            "RoleBinding/openfga-operator-leader-election",
            "Deployment/openfga-operator");
    assertThat(manifests.objects())
        .allSatisfy(o -> assertThat(o.getMetadata().getNamespace()).isEqualTo("openfga-system"))
        .allSatisfy(
            o ->
                assertThat(o.getMetadata().getLabels())
                    .containsEntry("app.kubernetes.io/name", "openfga-operator")
                    .containsEntry("app.kubernetes.io/instance", "openfga-operator")
                    .containsEntry("app.kubernetes.io/part-of", "openfga")
                    .containsEntry("app.kubernetes.io/component", "operator")
                    .containsEntry("app.kubernetes.io/managed-by", "Helm")
                    .containsEntry("helm.sh/chart", "openfga-operator-0.1.0"));

    Deployment deployment = manifests.deployment();
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(1);
    var pod = deployment.getSpec().getTemplate().getSpec();
    assertThat(pod.getServiceAccountName()).isEqualTo("openfga-operator");
    var container = manifests.operator();
    assertThat(container.getImage()).isEqualTo("ghcr.io/openfga-operator/openfga-operator:0.1.0");
    assertThat(container.getImagePullPolicy()).isEqualTo("IfNotPresent");
    assertThat(container.getArgs())
        .containsExactly(
            "--leader-elect=true",
            "--leader-election-id=openfga-operator-leader",
            "--dry-run=false",
            "--metrics-bind-address=0",
            "--health-probe-bind-address=:8081",
            "--backoff-limit=3",
            "--active-deadline-seconds=300",
            "--ttl-seconds-after-finished=300",
            "--retry-cooldown=60s",
            "--failure-log-lines=20",
            "--log-format=text",
            "--log-level=info");
    EnvVar podNamespace = container.getEnv().get(0);
    assertThat(podNamespace.getName()).isEqualTo("POD_NAMESPACE");
    assertThat(podNamespace.getValueFrom().getFieldRef().getFieldPath())
        .isEqualTo("metadata.namespace");
    assertThat(container.getPorts())
        .extracting(p -> p.getName() + ":" + p.getContainerPort())
        .containsExactly("healthz:8081");
    assertThat(container.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
    assertThat(container.getLivenessProbe().getHttpGet().getPort())
        .isEqualTo(new IntOrString("healthz"));
    assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    assertThat(container.getReadinessProbe().getHttpGet().getPort())
        .isEqualTo(new IntOrString("healthz"));
    assertThat(container.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(container.getResources().getLimits()).containsKey("memory");
    assertThat(manifests.all(Service.class)).isEmpty();
    assertThat(manifests.all(PodDisruptionBudget.class)).isEmpty();
    assertThat(manifests.all(ClusterRole.class)).isEmpty();
  }

  @Test
  void everyOptionIsRendered() {
    var manifests = chart().valuesFile("every-option.yaml").render();

    Deployment deployment = manifests.deployment();
    assertThat(deployment.getMetadata().getName()).isEqualTo("platform-fga-operator");
    assertThat(deployment.getMetadata().getNamespace()).isEqualTo("fga-system");
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
    var pod = deployment.getSpec().getTemplate();
    assertThat(pod.getMetadata().getAnnotations()).containsEntry("example.com/team", "platform");
    assertThat(pod.getMetadata().getLabels()).containsEntry("app.kubernetes.io/name", "fga-op");
    assertThat(pod.getSpec().getImagePullSecrets()).extracting("name").containsExactly("regcred");
    assertThat(pod.getSpec().getServiceAccountName()).isEqualTo("fga-operator-sa");
    assertThat(pod.getSpec().getSecurityContext().getSeccompProfile().getLocalhostProfile())
        .isEqualTo("profiles/operator.json");
    assertThat(pod.getSpec().getNodeSelector()).containsEntry("kubernetes.io/os", "linux");
    assertThat(pod.getSpec().getTolerations()).extracting("key").containsExactly("dedicated");
    assertThat(pod.getSpec().getAffinity().getPodAntiAffinity()).isNotNull();
    var container = manifests.operator();
    assertThat(container.getImage())
        .isEqualTo("registry.example.com/platform/openfga-operator:0.1.0-rc.1");
    assertThat(container.getImagePullPolicy()).isEqualTo("Always");
    assertThat(container.getArgs())
        .containsExactly(
            "--watch-namespace=openfga",
            "--watch-namespaces=openfga-staging,openfga-prod",
            "--leader-elect=true",
            "--leader-election-id=fga-team-a-leader",
            "--dry-run=false",
            "--metrics-bind-address=:8080",
            "--health-probe-bind-address=:8081",
            "--backoff-limit=0",
            "--active-deadline-seconds=1800",
            "--ttl-seconds-after-finished=0",
            "--retry-cooldown=2m30s",
            "--failure-log-lines=50",
            "--log-format=json",
            "--log-level=debug");
    assertThat(container.getPorts())
        .extracting(p -> p.getName() + ":" + p.getContainerPort())
        .containsExactly("healthz:8081", "metrics:8080");
    assertThat(container.getResources().getLimits().get("cpu").toString()).isEqualTo("1");
    assertThat(container.getSecurityContext().getRunAsUser()).isEqualTo(10001L);

    ServiceAccount account = manifests.one(ServiceAccount.class);
    assertThat(account.getMetadata().getName()).isEqualTo("fga-operator-sa");
    assertThat(account.getMetadata().getAnnotations()).containsKey("eks.amazonaws.com/role-arn");

    Service metrics = manifests.one(Service.class);
    assertThat(metrics.getMetadata().getName()).isEqualTo("platform-fga-operator-metrics");
    assertThat(metrics.getSpec().getPorts())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.getName()).isEqualTo("metrics");
              assertThat(p.getPort()).isEqualTo(8080);
              assertThat(p.getTargetPort()).isEqualTo(new IntOrString("metrics"));
            });
    assertThat(pod.getMetadata().getLabels()).containsAllEntriesOf(metrics.getSpec().getSelector());

    ServiceMonitor monitor = manifests.one(ServiceMonitor.class);
    assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "prometheus");
    assertThat(metrics.getMetadata().getLabels())
        .containsAllEntriesOf(monitor.getSpec().getSelector().getMatchLabels());
    assertThat(monitor.getSpec().getEndpoints())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getPort()).isEqualTo("metrics");
              assertThat(e.getPath()).isEqualTo("/metrics");
              assertThat(e.getInterval()).isEqualTo("30s");
              assertThat(e.getScrapeTimeout()).isEqualTo("10s");
            });

    // three watched namespaces: one ClusterRole, bound in each of them only
    assertThat(manifests.all(Role.class))
        .extracting(r -> r.getMetadata().getName())
        .containsExactly("platform-fga-operator-leader-election");
    ClusterRole rules = manifests.one(ClusterRole.class);
    assertThat(rules.getMetadata().getName()).isEqualTo("fga-system-platform-fga-operator");
    assertThat(manifests.all(ClusterRoleBinding.class)).isEmpty();
    assertThat(
            manifests.all(RoleBinding.class, b -> "ClusterRole".equals(b.getRoleRef().getKind())))
        .extracting(b -> b.getMetadata().getNamespace())
        .containsExactlyInAnyOrder("openfga", "openfga-staging", "openfga-prod");

    PodDisruptionBudget pdb = manifests.one(PodDisruptionBudget.class);
    assertThat(pdb.getSpec().getMinAvailable()).isEqualTo(new IntOrString(0));
    assertThat(pdb.getSpec().getMaxUnavailable()).isNull();
    assertThat(pod.getMetadata().getLabels())
        .containsAllEntriesOf(pdb.getSpec().getSelector().getMatchLabels());
  }

  @Test
  void watchingAllNamespacesUsesAClusterRoleAndClusterRoleBinding() {
    var manifests = chart().valuesFile("all-namespaces.yaml").render();

    assertThat(manifests.args()).contains("--watch-all-namespaces=true");
    assertThat(manifests.args()).noneMatch(a -> a.startsWith("--watch-namespace"));
    ClusterRole role = manifests.one(ClusterRole.class);
    ClusterRoleBinding binding = manifests.one(ClusterRoleBinding.class);
    assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getKind()).isEqualTo("ServiceAccount");
              assertThat(s.getName()).isEqualTo("openfga-operator");
              assertThat(s.getNamespace()).isEqualTo("openfga-system");
            });
    // only the Lease stays namespaced
    assertThat(manifests.all(Role.class))
        .extracting(r -> r.getMetadata().getName())
        .containsExactly("openfga-operator-leader-election");
  }

  @Test
  void severalNamespacesBindTheClusterRoleInEachAndNowhereElse() {
    var manifests = chart().valuesFile("several-namespaces.yaml").render();

    assertThat(manifests.args()).contains("--watch-namespaces=team-a,team-b");
    assertThat(manifests.all(ClusterRoleBinding.class)).isEmpty();
    assertThat(manifests.all(RoleBinding.class))
        .extracting(b -> b.getMetadata().getNamespace() + ":" + b.getRoleRef().getKind())
        .containsExactlyInAnyOrder(
            "team-a:ClusterRole", "team-b:ClusterRole", "openfga-system:Role");
  }

  @Test
  void aSingleOtherNamespaceGetsTheRoleWhileTheLeaseRoleStaysWithTheOperator() {
    var manifests = chart().values("watchNamespace: openfga\n").render();

    assertThat(manifests.args()).contains("--watch-namespace=openfga");
    assertThat(manifests.all(Role.class))
        .extracting(r -> r.getMetadata().getNamespace() + "/" + r.getMetadata().getName())
        .containsExactlyInAnyOrder(
            "openfga/openfga-operator", "openfga-system/openfga-operator-leader-election");
    assertThat(manifests.all(RoleBinding.class))
        .allSatisfy(
            b ->
                assertThat(b.getSubjects())
                    .singleElement()
                    .satisfies(s -> assertThat(s.getNamespace()).isEqualTo("openfga-system")));
  }

  @Test
  void podLogsAreReadOnlyWhenFailureLogLinesAreWantedAndMigrationPodsAlwaysWatched() {
    var withLogs =
        chart()
            .render()
            .one(Role.class, r -> !r.getMetadata().getName().endsWith("-leader-election"));
    var without =
        chart()
            .values("failureLogLines: 0\n")
            .render()
            .one(Role.class, r -> !r.getMetadata().getName().endsWith("-leader-election"));

    assertThat(withLogs.getRules()).flatExtracting("resources").contains("pods", "pods/log");
    assertThat(without.getRules()).flatExtracting("resources").doesNotContain("pods/log");
    // the migration pods are cached either way: one outlives a Job deleted by someone else
    assertThat(without.getRules())
        .filteredOn(r -> r.getResources().contains("pods"))
        .singleElement()
        .satisfies(r -> assertThat(r.getVerbs()).containsExactly("list", "watch"));
  }

  @Test
  void fgaStoreFinalizersAreGrantedBeyondTheWatchedNamespaces() {
    // a watched namespace deleted whole takes its RoleBinding with it: the finalizer must still
    // come off its FGAStores and FGATuples
    var single =
        chart()
            .values(
                "storesAndModels:\n  enabled: true\n  servers: [http://openfga.openfga.svc:8080]\n")
            .render();
    var all =
        chart()
            .values(
                "storesAndModels:\n  enabled: true\n  servers: [http://openfga.openfga.svc:8080]\nwatchAllNamespaces: true\n")
            .render();

    assertThat(single.all(ClusterRoleBinding.class))
        .singleElement()
        .satisfies(b -> assertThat(b.getRoleRef().getName()).endsWith("-fgastore-finalizers"));
    assertThat(single.all(ClusterRole.class))
        .singleElement()
        .satisfies(
            r ->
                assertThat(r.getRules())
                    .singleElement()
                    .satisfies(
                        rule -> {
                          assertThat(rule.getResources()).containsExactly("fgastores", "fgatuples");
                          assertThat(rule.getVerbs()).containsExactly("get", "patch");
                        }));
    // several watched namespaces: their RoleBindings go with them too
    var several =
        chart()
            .values(
                "storesAndModels:\n  enabled: true\n  servers: [http://openfga.openfga.svc:8080]\nwatchNamespaces: [a, b]\n")
            .render();
    assertThat(several.all(ClusterRoleBinding.class))
        .singleElement()
        .satisfies(b -> assertThat(b.getRoleRef().getName()).endsWith("-fgastore-finalizers"));
    // watching all namespaces, the ClusterRoleBinding of every rule holds anyway
    assertThat(all.all(ClusterRole.class))
        .noneMatch(r -> r.getMetadata().getName().endsWith("-fgastore-finalizers"));
    assertThat(chart().render().all(ClusterRole.class)).isEmpty();
  }

  @Test
  void withoutLeaderElectionThereIsNoLeaseRole() {
    var manifests = chart().values("leaderElection:\n  enabled: false\n").render();

    assertThat(manifests.args()).contains("--leader-elect=false");
    assertThat(manifests.all(Role.class))
        .extracting(r -> r.getMetadata().getName())
        .containsExactly("openfga-operator");
  }

  @Test
  void anExistingServiceAccountWithoutRbacRendersOnlyTheDeployment() {
    var manifests = chart().valuesFile("existing-service-account.yaml").render();

    assertThat(manifests.objects()).extracting(HasMetadata::getKind).containsExactly("Deployment");
    assertThat(manifests.deployment().getSpec().getTemplate().getSpec().getServiceAccountName())
        .isEqualTo("platform-operator");
  }

  @Test
  void anExistingServiceAccountMustBeNamed() {
    assertThat(chart().values("serviceAccount:\n  create: false\n").renderError())
        .contains("serviceAccount.name is required when serviceAccount.create is false");
  }

  @Test
  void watchingAllNamespacesCannotBeCombinedWithNamedOnes() {
    assertThat(chart().values("watchAllNamespaces: true\nwatchNamespace: openfga\n").renderError())
        .contains("watchAllNamespaces cannot be combined with watchNamespace or watchNamespaces");
  }

  @Test
  void aDryRunTakesNoLeaseGrantsOnlyReadsAndRunsOneReplica() {
    var manifests = chart().values("dryRun: true\n").render();

    assertThat(manifests.args()).contains("--dry-run=true", "--leader-elect=false");
    var rules = manifests.yaml();
    assertThat(rules).doesNotContain("leader-election", "leases");
    for (String write : new String[] {"\"create\"", "\"patch\"", "\"delete\"", "\"update\""}) {
      assertThat(rules).as("RBAC of a dry run").doesNotContain(write);
    }
    assertThat(chart().values("dryRun: true\nreplicaCount: 2\n").renderError())
        .contains("replicaCount is 2 but dryRun is true");
    // the operator refuses --dry-run with --stores-and-models at start-up: a crash loop
    assertThat(chart().values("dryRun: true\nstoresAndModels:\n  enabled: true\n").renderError())
        .contains("storesAndModels.enabled cannot be combined with dryRun");
  }

  @Test
  void storesAndModelsWithoutServersIsRefusedSayingWhatToSet() {
    // a new install, or an upgrade of a release made before the value existed (with or without
    // --reuse-values: the key is then missing, or the chart's empty default)
    for (String values :
        List.of(
            "storesAndModels: {enabled: true}\n",
            "storesAndModels: {enabled: true, servers: []}\n",
            "storesAndModels: {enabled: true, servers: null}\n")) {
      assertThat(chart().values(values).renderError())
          .as(values)
          .contains("storesAndModels.servers must list the OpenFGA servers FGAStores may name")
          .contains("--set 'storesAndModels.servers={http://openfga.openfga.svc:8080}'");
    }
    assertThat(
            chart()
                .values(
                    "storesAndModels: {enabled: true, servers: [http://openfga.a.svc:8080,"
                        + " https://fga.example.com/api]}\n")
                .render()
                .args())
        .contains(
            "--stores-and-models=true",
            "--openfga-servers=http://openfga.a.svc:8080,https://fga.example.com/api");
    // without stores and models the list is neither needed nor passed
    assertThat(chart().render().args()).noneMatch(a -> a.startsWith("--openfga-servers"));
    assertThat(chart().values("storesAndModels: {servers: [http://a:8080]}\n").render().args())
        .noneMatch(a -> a.startsWith("--openfga-servers"));
  }

  @Test
  void withoutLeaderElectionAnUpgradeNeverRunsTwoOperatorsAtOnce() {
    Deployment without =
        chart().values("leaderElection:\n  enabled: false\n").render().deployment();
    assertThat(without.getSpec().getStrategy().getType()).isEqualTo("Recreate");
    // with a Lease the new pod waits for it: the rolling update (Kubernetes' default) stays
    assertThat(chart().render().deployment().getSpec().getStrategy()).isNull();
  }

  @Test
  void severalReplicasNeedLeaderElection() {
    assertThat(chart().values("replicaCount: 2\nleaderElection:\n  enabled: false\n").renderError())
        .contains("replicaCount is 2 but leaderElection.enabled is false");
  }

  @Test
  void aServiceMonitorNeedsTheMetricsService() {
    assertThat(chart().values("metrics:\n  serviceMonitor:\n    enabled: true\n").renderError())
        .contains("metrics.serviceMonitor.enabled needs metrics.enabled: true");
  }

  @Test
  void metricsAddAServicePortAndTheBindAddress() {
    var manifests = chart().values("metrics:\n  enabled: true\n").render();

    assertThat(manifests.args()).contains("--metrics-bind-address=:8080");
    assertThat(manifests.one(Service.class).getSpec().getPorts())
        .extracting("name")
        .containsExactly("metrics");
    assertThat(manifests.all(ServiceMonitor.class)).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "1", "\"50%\""})
  void disruptionBudgetHonoursAnExplicitMinAvailableZeroIncluded(String value) {
    PodDisruptionBudget pdb =
        chart()
            .values("podDisruptionBudget:\n  enabled: true\n  minAvailable: " + value + "\n")
            .render()
            .one(PodDisruptionBudget.class);

    assertThat(pdb.getSpec().getMinAvailable()).isEqualTo(intOrString(value));
    assertThat(pdb.getSpec().getMaxUnavailable()).isNull();
  }

  @ParameterizedTest
  @ValueSource(strings = {"0", "1", "\"25%\""})
  void disruptionBudgetUsesMaxUnavailableWhenMinAvailableIsEmpty(String value) {
    PodDisruptionBudget pdb =
        chart()
            .values("podDisruptionBudget:\n  enabled: true\n  maxUnavailable: " + value + "\n")
            .render()
            .one(PodDisruptionBudget.class);

    assertThat(pdb.getSpec().getMaxUnavailable()).isEqualTo(intOrString(value));
    assertThat(pdb.getSpec().getMinAvailable()).isNull();
  }

  @Test
  void disruptionBudgetNeedsOneOfTheTwo() {
    assertThat(
            chart()
                .values(
                    "podDisruptionBudget:\n  enabled: true\n  minAvailable: \"\"\n"
                        + "  maxUnavailable: \"\"\n")
                .renderError())
        .contains("podDisruptionBudget.enabled needs");
  }

  @Test
  void imageTagDefaultsToTheAppVersionAndCanBeSet() {
    assertThat(chart().values("image:\n  tag: v9\n").render().operator().getImage())
        .isEqualTo("ghcr.io/openfga-operator/openfga-operator:v9");
  }

  @Test
  void imageDigestWinsOverTheTagAndIsUsedInTheNotes() {
    String digest = "sha256:" + "0123456789abcdef".repeat(4);
    var chart = chart().values("image:\n  tag: v9\n  digest: " + digest + "\n");

    assertThat(chart.render().operator().getImage())
        .isEqualTo("ghcr.io/openfga-operator/openfga-operator@" + digest);
    assertThat(chart.notes())
        .contains("The image ghcr.io/openfga-operator/openfga-operator@" + digest + " ");
  }

  @Test
  void longReleaseNamesAreCutToADnsLabel() {
    String release = "long-release-" + "x".repeat(40); // Helm's maximum: 53 characters
    var manifests = chart().release(release).render();

    assertThat(manifests.deployment().getMetadata().getName())
        .hasSizeLessThanOrEqualTo(63)
        .doesNotEndWith("-")
        .startsWith("long-release-xxx");
  }

  @Test
  void notesTellHowToSeeMigrationState() {
    String notes = chart().values("watchNamespace: openfga\n").notes();

    assertThat(notes)
        .contains("kubectl -n openfga-system get deployment openfga-operator")
        .contains("kubectl -n openfga-system logs -l app.kubernetes.io/name=openfga-operator")
        .contains(
            "kubectl get configmaps -n openfga -l app.kubernetes.io/managed-by=openfga-operator")
        .contains("kubectl get jobs -n openfga -l app.kubernetes.io/managed-by=openfga-operator")
        .contains("datastore.applyMigrations=false")
        .contains("--set-string 'annotations.openfga\\.dev/migration-enabled=true'")
        .contains("MigrationFailed")
        .contains("openfga-migration-status")
        .contains("the later of the cooldown (60s) and the")
        .contains("failed Job's retention (300s after it finished)")
        .contains("get lease openfga-operator-leader");
    assertThat(notes).doesNotContain("openfga.dev/openfga-url");
    assertThat(
            chart()
                .values(
                    "watchNamespace: openfga\nstoresAndModels: {enabled: true, servers:"
                        + " [http://openfga.openfga.svc:8080, https://fga.example.com]}\n")
                .notes())
        .contains(
            "kubectl -n openfga annotate secret openfga-api"
                + " openfga.dev/openfga-url=http://openfga.openfga.svc:8080");
    // a dry run takes no Lease: the notes do not send anyone looking for one
    assertThat(chart().values("watchNamespace: openfga\ndryRun: true\n").notes())
        .doesNotContain("get lease");
  }

  @Test
  void notesOfAClusterWideOperatorLookEverywhere() {
    String notes = chart().valuesFile("all-namespaces.yaml").notes();

    assertThat(notes)
        .contains("every namespace")
        .contains("kubectl get configmaps -A -l app.kubernetes.io/managed-by=openfga-operator");
    // kubectl takes -A only after the verb ("flags cannot be placed before plugin name: -A")
    assertThat(notes.lines().filter(l -> l.strip().startsWith("kubectl -A"))).isEmpty();
  }

  /**
   * A RoleBinding's roleRef cannot change: an upgrade from one watched namespace (a Role) to
   * several (a ClusterRole) must not render a binding of the same name with another roleRef.
   */
  @Test
  void noRoleBindingChangesItsRoleRefBetweenOneWatchedNamespaceAndSeveral() {
    var one = chart().values("watchNamespace: openfga\n").render();
    var several = chart().values("watchNamespace: openfga\nwatchNamespaces: [apps]\n").render();

    for (var a : one.all(io.fabric8.kubernetes.api.model.rbac.RoleBinding.class)) {
      for (var b : several.all(io.fabric8.kubernetes.api.model.rbac.RoleBinding.class)) {
        if (a.getMetadata().getName().equals(b.getMetadata().getName())
            && a.getMetadata().getNamespace().equals(b.getMetadata().getNamespace())) {
          assertThat(b.getRoleRef()).as(b.getMetadata().getName()).isEqualTo(a.getRoleRef());
        }
      }
    }
    assertThat(several.all(io.fabric8.kubernetes.api.model.rbac.RoleBinding.class))
        .extracting(r -> r.getMetadata().getNamespace())
        .contains("openfga", "apps");
  }

  /**
   * The upstream {@code openfga} chart depends on this one with {@code condition:
   * openfga-operator.enabled}; the parent passes {@code enabled} and {@code global}.
   */
  @Test
  void worksAsADependencyOfTheOpenfgaChartBehindItsCondition(@TempDir Path dir) throws IOException {
    Path parent = dir.resolve("openfga");
    Files.createDirectories(parent.resolve("charts"));
    Files.writeString(
        parent.resolve("Chart.yaml"),
        """
        apiVersion: v2
        name: openfga
        version: 0.3.12
        appVersion: v1.8.0
        dependencies:
          - name: openfga-operator
            version: 0.1.0
            repository: file://../openfga-operator
            condition: openfga-operator.enabled
        """);
    Files.writeString(
        parent.resolve("values.yaml"),
        """
        global:
          imageRegistry: ""
        openfga-operator:
          enabled: false
        """);
    Files.createDirectories(parent.resolve("templates"));
    Files.writeString(
        parent.resolve("templates/configmap.yaml"),
        """
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: {{ .Release.Name }}-parent
        data:
          chart: {{ .Chart.Name }}
        """);
    copy(OperatorChart.DIR, parent.resolve("charts/openfga-operator"));

    var off = chart().at(parent).release("openfga").namespace("openfga").render();
    assertThat(off.objects()).extracting(HasMetadata::getKind).containsExactly("ConfigMap");

    var on =
        chart()
            .at(parent)
            .release("openfga")
            .namespace("openfga")
            .values("openfga-operator:\n  enabled: true\n  logLevel: debug\n")
            .render();
    assertThat(on.deployment().getMetadata().getName()).isEqualTo("openfga-openfga-operator");
    assertThat(on.deployment().getMetadata().getNamespace()).isEqualTo("openfga");
    assertThat(on.args()).contains("--log-level=debug");
    assertThat(on.all(Role.class))
        .extracting(r -> r.getMetadata().getNamespace() + "/" + r.getMetadata().getName())
        .containsExactlyInAnyOrder(
            "openfga/openfga-openfga-operator", "openfga/openfga-openfga-operator-leader-election");

    assertThat(
            chart()
                .at(parent)
                .values("openfga-operator:\n  enabled: true\n  logLevl: debug\n")
                .renderError())
        .contains("openfga-operator")
        .contains("logLevl");
  }

  private static IntOrString intOrString(String yaml) {
    return yaml.startsWith("\"")
        ? new IntOrString(yaml.substring(1, yaml.length() - 1))
        : new IntOrString(Integer.parseInt(yaml));
  }

  private static void copy(Path from, Path to) throws IOException {
    try (var files = Files.walk(from)) {
      for (Path source : (Iterable<Path>) files::iterator) {
        Path target = to.resolve(from.relativize(source).toString());
        if (Files.isDirectory(source)) {
          Files.createDirectories(target);
        } else {
          Files.copy(source, target);
        }
      }
    }
  }
}
