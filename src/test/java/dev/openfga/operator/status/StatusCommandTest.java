package dev.openfga.operator.status;

import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.openfga.operator.config.Environment;
import dev.openfga.operator.config.Flags;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code openfga-operator status} against the mock API server, after the real operator has brought
 * three Deployments to three different states: up to date, failed (retrying), blocked by a foreign
 * Job. One more, in a namespace the operator does not watch, has not been migrated yet.
 */
class StatusCommandTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final String OTHER_NS = "elsewhere";

  @RegisterExtension static final MockCluster cluster = new MockCluster();
  private static Clock clock;

  @BeforeAll
  static void bringDeploymentsToTheirStates() {
    cluster
        .jobs()
        .script(
            j ->
                switch (j.getMetadata().getName()) {
                  case "broken-migrate" -> Script.FAIL;
                  case "blocked-migrate" -> Script.MANUAL;
                  default -> Script.SUCCEED;
                });
    cluster
        .client()
        .batch()
        .v1()
        .jobs()
        .inNamespace(MockCluster.NS)
        .resource(
            new JobBuilder()
                .withNewMetadata()
                .withName("blocked-migrate")
                .withNamespace(MockCluster.NS)
                .endMetadata()
                .withNewSpec()
                .withNewTemplate()
                .withNewSpec()
                .addNewContainer()
                .withName("hand-made")
                .withImage("busybox")
                .endContainer()
                .withRestartPolicy("Never")
                .endSpec()
                .endTemplate()
                .endSpec()
                .build())
        .create();
    cluster.create(openfga().version("v1.8.0").build());
    cluster.create(openfga().name("broken").version("v1.9.0").build());
    cluster.create(openfga().name("blocked").version("v1.9.0").build());
    cluster.create(openfga().name("bystander").annotation(Keys.MIGRATION_ENABLED, "false").build());
    Deployment elsewhere =
        new DeploymentBuilder(openfga().version("v1.10.0").build())
            .editMetadata()
            .withNamespace(OTHER_NS)
            .endMetadata()
            .build();
    cluster.client().apps().deployments().inNamespace(OTHER_NS).resource(elsewhere).create();
    // a long cooldown: "broken" stays failed for the whole test
    cluster.startOperator(MockCluster.config(Duration.ofMinutes(10), 1), "operator-status");

    await()
        .atMost(WAIT)
        .until(() -> cluster.recordedVersion("openfga").orElse(""), v -> v.equals("v1.8.0"));
    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("openfga"), r -> r.contains("MigrationSucceeded"));
    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("broken"), r -> r.contains("MigrationFailed"));
    await()
        .atMost(WAIT)
        .until(
            () -> cluster.job("broken-migrate").getMetadata().getAnnotations(),
            a -> a != null && a.containsKey(Keys.RETAIN_UNTIL));
    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("blocked"), r -> r.contains("MigrationJobConflict"));

    // 42 s before the operator retries "broken"
    Job failed = cluster.job("broken-migrate");
    Instant retryAt =
        Timestamps.parse(failed.getMetadata().getAnnotations().get(Keys.RETAIN_UNTIL))
            .orElseThrow();
    clock = Clock.fixed(retryAt.minusSeconds(42), ZoneOffset.UTC);
  }

  private record Run(int exitCode, String out, String err) {}

  /** As Main runs it: the operator's command line with the status subcommand. */
  private static Run run(KubernetesClient client, String... args) {
    var commandLine =
        Flags.commandLine(
                Environment.of(Map.of("POD_NAMESPACE", "openfga"), Path.of("/nonexistent")),
                config -> 99)
            .addSubcommand(new StatusCommand(client, clock));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));
    int exitCode = commandLine.execute(args);
    return new Run(exitCode, out.toString(), err.toString());
  }

  private static List<String> cells(String line) {
    return Arrays.asList(line.split(" {3,}"));
  }

  @Test
  void tableOfTheNamespace() {
    Run run = run(cluster.client(), "status", "--namespace", MockCluster.NS);

    assertThat(run.exitCode()).isZero();
    assertThat(run.err()).isEmpty();
    List<String> lines = run.out().lines().toList();
    assertThat(lines).hasSize(4);
    assertThat(cells(lines.get(0)))
        .containsExactly("DEPLOYMENT", "DESIRED", "MIGRATED", "STATE", "JOB", "LAST EVENT");
    assertThat(cells(lines.get(1)))
        .startsWith(
            "blocked",
            "v1.9.0",
            "<none>",
            "blocked by a Job collision",
            "blocked-migrate (foreign, pending)");
    assertThat(cells(lines.get(1)).get(5)).startsWith("MigrationJobConflict ");
    assertThat(cells(lines.get(2)))
        .startsWith(
            "broken", "v1.9.0", "<none>", "failed, retrying in 42s", "broken-migrate (failed)");
    assertThat(cells(lines.get(2)).get(5))
        .startsWith("MigrationFailed ")
        .contains("ago: Migration Job broken-migrate failed for version v1.9.0")
        .endsWith("...");
    assertThat(cells(lines.get(3)))
        .startsWith("openfga", "v1.8.0", "v1.8.0", "up to date", "openfga-migrate (complete)");
    assertThat(cells(lines.get(3)).get(5)).startsWith("MigrationSucceeded ");
    assertThat(run.out()).doesNotContain("bystander");
  }

  @Test
  void aReaderWhoMayNotListPodsStillGetsTheTable() {
    // a person's role often may not read pods: the view goes without the migration pods
    cluster.failNext("GET", "/pods?", 403, 1);
    Run run = run(cluster.client(), "status", "--namespace", MockCluster.NS);

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("up to date");
    // any other refusal is the command's
    cluster.failNext("GET", "/pods?", 401, 1);
    assertThat(run(cluster.client(), "status", "--namespace", MockCluster.NS).exitCode())
        .isNotZero();
  }

  @Test
  void jsonForScripts() throws Exception {
    Run run = run(cluster.client(), "status", "-n", MockCluster.NS, "-o", "json");

    assertThat(run.exitCode()).isZero();
    List<Map<String, Object>> rows =
        new ObjectMapper().readValue(run.out(), new TypeReference<>() {});
    assertThat(rows)
        .extracting(r -> r.get("deployment"))
        .containsExactly("blocked", "broken", "openfga");
    Map<String, Object> broken = rows.get(1);
    assertThat(broken)
        .containsEntry("namespace", MockCluster.NS)
        .containsEntry("desiredVersion", "v1.9.0")
        .containsEntry("migratedVersion", null)
        .containsEntry("state", "FAILED")
        .containsEntry("stateText", "failed, retrying in 42s")
        .containsEntry("retryInSeconds", 42)
        .containsKeys("summary", "retryAt");
    assertThat(broken.get("job"))
        .isEqualTo(
            Map.of(
                "name",
                "broken-migrate",
                "status",
                "failed",
                "version",
                "v1.9.0",
                "managed",
                true));
    @SuppressWarnings("unchecked")
    Map<String, Object> event = (Map<String, Object>) broken.get("lastEvent");
    assertThat(event).containsEntry("type", "Warning").containsEntry("reason", "MigrationFailed");
    assertThat((String) event.get("message")).contains("retrying after");
    assertThat(rows.get(0)).containsEntry("state", "BLOCKED");
    assertThat(rows.get(2)).containsEntry("state", "UP_TO_DATE").containsEntry("retryAt", null);
  }

  @Test
  void allNamespacesAddsTheNamespaceColumn() {
    Run run = run(cluster.client(), "status", "-A");

    assertThat(run.exitCode()).isZero();
    List<String> lines = run.out().lines().toList();
    assertThat(cells(lines.get(0)))
        .containsExactly(
            "NAMESPACE", "DEPLOYMENT", "DESIRED", "MIGRATED", "STATE", "JOB", "LAST EVENT");
    assertThat(lines).hasSize(5);
    assertThat(cells(lines.get(1)))
        .startsWith(OTHER_NS, "openfga", "v1.10.0", "<none>", "migrating", "<none>", "<none>");
    assertThat(cells(lines.get(4)))
        .startsWith(MockCluster.NS, "openfga", "v1.8.0", "v1.8.0", "up to date");
  }

  @Test
  void defaultNamespaceIsTheContexts() {
    // the mock server's client is configured for namespace "test", which has no Deployments
    assertThat(cluster.client().getNamespace()).isEqualTo("test");

    Run table = run(cluster.client(), "status");
    assertThat(table.exitCode()).isZero();
    assertThat(table.out()).isEmpty();
    assertThat(table.err()).isEqualTo("No opted-in OpenFGA Deployments found in namespace test.\n");

    Run json = run(cluster.client(), "status", "-o", "json");
    assertThat(json.exitCode()).isZero();
    assertThat(json.out()).isEqualTo("[]\n");
  }

  @Test
  void unreachableClusterIsOneLineAndExit1() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    try (KubernetesClient nowhere =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder()
                    .withMasterUrl("https://127.0.0.1:" + port)
                    .withNamespace("openfga")
                    .withRequestRetryBackoffLimit(0)
                    .build())
            .build()) {
      Run run = run(nowhere, "status");

      assertThat(run.exitCode()).isEqualTo(1);
      assertThat(run.out()).isEmpty();
      assertThat(run.err().lines()).hasSize(1);
      assertThat(run.err())
          .startsWith("error: cannot reach the Kubernetes API server at https://127.0.0.1:" + port);
    }
  }

  @Test
  void networkFailuresAreNamed() {
    String server = "https://10.0.0.1:6443/";
    var refused =
        new KubernetesClientException(
            "Operation: [list] for kind: [Deployment] failed.",
            new IOException(new ConnectException().initCause(new ClosedChannelException())));
    assertThat(StatusCommand.describe(refused, server))
        .isEqualTo(
            "cannot reach the Kubernetes API server at https://10.0.0.1:6443/: connection refused");
    var unknownHost =
        new KubernetesClientException(
            "failed",
            new IOException(new ConnectException().initCause(new UnresolvedAddressException())));
    assertThat(StatusCommand.describe(unknownHost, server)).endsWith(": unknown host");
    var forbidden =
        new KubernetesClientException(
            new StatusBuilder()
                .withCode(403)
                .withMessage(
                    "deployments.apps is forbidden: User \"me\" cannot list resource"
                        + " \"deployments\"")
                .build());
    assertThat(StatusCommand.describe(forbidden, server))
        .isEqualTo(
            "the Kubernetes API server at https://10.0.0.1:6443/ answered 403:"
                + " deployments.apps is forbidden: User \"me\" cannot list resource"
                + " \"deployments\"");
  }

  @Test
  void helpAndUsageErrors() {
    Run help = run(cluster.client(), "status", "--help");
    assertThat(help.exitCode()).isZero();
    assertThat(help.out())
        .startsWith("Usage: openfga-operator status")
        .contains("--namespace", "--all-namespaces", "--output");

    Run both = run(cluster.client(), "status", "-n", "a", "-A");
    assertThat(both.exitCode()).isEqualTo(2);
    assertThat(both.err())
        .contains("--namespace and --all-namespaces cannot be combined")
        .contains("openfga-operator status --help");

    Run yaml = run(cluster.client(), "status", "-o", "yaml");
    assertThat(yaml.exitCode()).isEqualTo(2);
    assertThat(yaml.err()).contains("'yaml' (expected table or json)");

    Run unknown = run(cluster.client(), "status", "--namespaces", "a");
    assertThat(unknown.exitCode()).isEqualTo(2);
    assertThat(unknown.err()).contains("Unknown option: '--namespaces'");

    Run missing = run(cluster.client(), "status", "-n");
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.err()).contains("Missing required parameter for option '-n'");
  }

  @Test
  void optionsTakeTheirValueAfterASpaceOrAnEqualsSign() {
    Run spaced = run(cluster.client(), "status", "--namespace", MockCluster.NS, "-o", "json");
    Run joined = run(cluster.client(), "status", "--namespace=" + MockCluster.NS, "-o=json");

    assertThat(joined.exitCode()).isZero();
    assertThat(joined.out()).isNotEmpty().isEqualTo(spaced.out());
  }

  @Test
  void withoutTheSubcommandTheOperatorRunsAsBefore() {
    Run root = run(cluster.client(), "--backoff-limit=5");
    assertThat(root.exitCode()).isEqualTo(99);

    Run help = run(cluster.client(), "--help");
    assertThat(help.out()).startsWith("Usage: openfga-operator").contains("status");
  }
}
