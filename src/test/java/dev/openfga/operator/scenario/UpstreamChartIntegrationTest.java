package dev.openfga.operator.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.MockCluster;
import dev.openfga.operator.testing.UpstreamChart;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the stock upstream {@code openfga} chart 0.3.12 renders (test fixtures copied from the
 * project's shared fixtures), handed to the real operator on the mock API server: the operator-mode
 * Deployment is picked up by its real labels and annotation and migrated; the hook-mode one,
 * without the opt-in, is left alone together with its Helm hook Job. docs/integration.md explains
 * the values; the adoption of a leftover hook Job is {@code
 * MigrationScenarioTest.legacyHelmHookJobOfTheSameReleaseIsAdopted}.
 */
class UpstreamChartIntegrationTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final Path DOCUMENTED_VALUES =
      Path.of("docs", "examples", "openfga-operator-mode.values.yaml");
  private static final Path FIXTURE_VALUES =
      Path.of(
          "src",
          "test",
          "resources",
          "fixtures",
          "upstream-openfga-chart-0.3.12",
          "operator-mode.values.yaml");
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  @RegisterExtension final MockCluster cluster = new MockCluster();

  @BeforeEach
  void startCluster() {
    cluster.jobs().script(j -> Script.SUCCEED);
  }

  private void startOperator() {
    cluster.startOperator(MockCluster.config(Duration.ofSeconds(2), 1), "operator-a");
  }

  private Deployment operatorMode() {
    return UpstreamChart.load(cluster.client(), UpstreamChart.OPERATOR_MODE, Deployment.class);
  }

  @Test
  void operatorModeDeploymentOfTheUpstreamChartIsPickedUpAndMigrated() {
    Deployment upstream = operatorMode();
    // what the operator selects on, exactly as the chart renders it
    assertThat(upstream.getMetadata().getLabels())
        .containsEntry(Keys.PART_OF, Keys.PART_OF_OPENFGA)
        .containsEntry(Keys.COMPONENT, Keys.COMPONENT_SERVER)
        .containsEntry(Keys.MANAGED_BY, Keys.MANAGED_BY_HELM);
    assertThat(upstream.getMetadata().getAnnotations())
        .containsExactlyEntriesOf(Map.of(Keys.MIGRATION_ENABLED, "true"));
    assertThat(upstream.getSpec().getTemplate().getSpec().getInitContainers()).isEmpty();
    cluster.create(upstream);
    startOperator();

    await()
        .atMost(WAIT)
        .until(() -> cluster.recordedVersion("openfga").orElse(""), v -> v.equals("v1.18.3"));

    Job job = cluster.job("openfga-migrate");
    assertThat(job.getMetadata().getLabels())
        .containsEntry(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR);
    assertThat(job.getMetadata().getAnnotations()).containsEntry(Keys.DESIRED_VERSION, "v1.18.3");
    PodSpec pod = job.getSpec().getTemplate().getSpec();
    assertThat(pod.getServiceAccountName()).isEqualTo("openfga");
    assertThat(pod.getInitContainers()).isEmpty();
    assertThat(pod.getContainers()).hasSize(1);
    Container migrate = pod.getContainers().get(0);
    assertThat(migrate.getImage()).isEqualTo("openfga/openfga:v1.18.3");
    assertThat(migrate.getArgs()).containsExactly("migrate");
    // of the chart's 16 OPENFGA_* variables only those `openfga migrate` reads
    assertThat(migrate.getEnv())
        .extracting(EnvVar::getName)
        .containsExactly(
            "OPENFGA_DATASTORE_ENGINE",
            "OPENFGA_DATASTORE_URI",
            "OPENFGA_DATASTORE_METRICS_ENABLED",
            "OPENFGA_LOG_FORMAT",
            "OPENFGA_LOG_LEVEL",
            "OPENFGA_LOG_TIMESTAMP_FORMAT");
    assertThat(migrate.getEnv().get(1).getValueFrom().getSecretKeyRef().getName())
        .isEqualTo("openfga-datastore");
    // the migration pod is never an endpoint of the chart's Service
    Service service =
        UpstreamChart.load(cluster.client(), UpstreamChart.OPERATOR_MODE, Service.class);
    assertThat(job.getSpec().getTemplate().getMetadata().getLabels())
        .doesNotContainEntry(Keys.NAME, service.getSpec().getSelector().get(Keys.NAME));

    assertThat(cluster.configMap("openfga-migration-status").getData())
        .containsEntry(Keys.DATA_VERSION, "v1.18.3")
        .containsEntry(Keys.DATA_JOB_NAME, "openfga-migrate");
    await()
        .atMost(WAIT)
        .until(() -> cluster.eventReasons("openfga"), r -> r.contains("MigrationSucceeded"));
    assertThat(cluster.eventReasons("openfga"))
        .containsExactly("MigrationStarted", "MigrationSucceeded");
    // the chart's replicas (3, no desired-replicas annotation) are not the operator's business
    assertThat(cluster.deployment("openfga").getSpec().getReplicas()).isEqualTo(3);
  }

  @Test
  void documentedValuesAddAMigrationServiceAccountToTheFixtureValues() throws IOException {
    Map<String, Object> documented = read(DOCUMENTED_VALUES);
    Map<String, Object> fixture = read(FIXTURE_VALUES);

    // everything the fixture was rendered with to hand migrations over is in the documented values
    assertThat(section(documented, "datastore"))
        .containsEntry("applyMigrations", false)
        .containsEntry("waitForMigrations", false);
    assertThat(section(fixture, "datastore"))
        .containsEntry("applyMigrations", false)
        .containsEntry("waitForMigrations", false);
    assertThat(section(documented, "annotations"))
        .containsAllEntriesOf(section(fixture, "annotations"))
        .containsEntry(Keys.MIGRATION_SERVICE_ACCOUNT, "openfga-migration");
  }

  @Test
  void documentedMigrationServiceAccountRunsTheJob() throws IOException {
    // the chart renders its `annotations` value onto the Deployment, as the fixture shows
    Map<String, String> annotations = new HashMap<>();
    section(read(DOCUMENTED_VALUES), "annotations")
        .forEach((k, v) -> annotations.put(k, String.valueOf(v)));
    Deployment upstream =
        new DeploymentBuilder(operatorMode())
            .editMetadata()
            .withAnnotations(annotations)
            .endMetadata()
            .build();
    cluster.create(upstream);
    startOperator();

    await()
        .atMost(WAIT)
        .until(() -> cluster.recordedVersion("openfga").orElse(""), v -> v.equals("v1.18.3"));

    assertThat(cluster.job("openfga-migrate").getSpec().getTemplate().getSpec())
        .extracting(PodSpec::getServiceAccountName)
        .isEqualTo("openfga-migration");
    // the pod itself keeps the chart's ServiceAccount
    assertThat(
            cluster.deployment("openfga").getSpec().getTemplate().getSpec().getServiceAccountName())
        .isEqualTo("openfga");
  }

  @Test
  void hookModeDeploymentWithoutTheOptInIsIgnoredAndItsHookJobLeftAlone() {
    Deployment hookMode =
        UpstreamChart.load(cluster.client(), UpstreamChart.HOOK_MODE, Deployment.class);
    assertThat(hookMode.getMetadata().getAnnotations()).isNullOrEmpty();
    assertThat(hookMode.getSpec().getTemplate().getSpec().getInitContainers())
        .extracting(Container::getName)
        .containsExactly("wait-for-migration");
    Deployment ignored = cluster.create(hookMode);
    Job hookJob =
        cluster
            .client()
            .batch()
            .v1()
            .jobs()
            .inNamespace(MockCluster.NS)
            .resource(UpstreamChart.load(cluster.client(), UpstreamChart.HOOK_MODE, Job.class))
            .create();
    // a second release in operator mode: once it is migrated, the operator has seen both
    Deployment other =
        new DeploymentBuilder(operatorMode())
            .editMetadata()
            .withName("openfga-b")
            .addToLabels(Keys.INSTANCE, "openfga-b")
            .endMetadata()
            .build();
    cluster.create(other);
    startOperator();

    await()
        .atMost(WAIT)
        .until(() -> cluster.recordedVersion("openfga-b").orElse(""), v -> v.equals("v1.18.3"));

    assertThat(cluster.recordedVersion("openfga")).isEmpty();
    assertThat(cluster.events("openfga")).isEmpty();
    // (the fake Deployment controller writes its status and its revision; the operator writes
    // nothing)
    Deployment now = cluster.deployment("openfga");
    assertThat(now.getSpec()).isEqualTo(ignored.getSpec());
    var annotations = new java.util.HashMap<>(now.getMetadata().getAnnotations());
    assertThat(annotations.remove(Keys.DEPLOYMENT_REVISION)).isEqualTo("1");
    assertThat(annotations).isEqualTo(ignored.getMetadata().getAnnotations());
    assertThat(cluster.fakeCondition("openfga")).isEmpty();
    // (the fake Job controller runs the hook Job, as a real one would; the operator writes nothing)
    Job after = cluster.job("openfga-migrate");
    assertThat(after.getMetadata().getUid()).isEqualTo(hookJob.getMetadata().getUid());
    assertThat(after.getMetadata().getLabels()).isEqualTo(hookJob.getMetadata().getLabels());
    assertThat(after.getMetadata().getAnnotations())
        .isEqualTo(hookJob.getMetadata().getAnnotations());
    assertThat(after.getMetadata().getOwnerReferences()).isNullOrEmpty();
    assertThat(after.getSpec()).isEqualTo(hookJob.getSpec());
    assertThat(cluster.jobs().createdByOperator())
        .extracting(j -> j.getMetadata().getName())
        .containsExactly("openfga-b-migrate");
  }

  private static Map<String, Object> read(Path file) throws IOException {
    return YAML.readValue(file.toFile(), new TypeReference<Map<String, Object>>() {});
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> section(Map<String, Object> values, String key) {
    Object value = values.get(key);
    assertThat(value).as(key).isInstanceOf(Map.class);
    return (Map<String, Object>) value;
  }
}
