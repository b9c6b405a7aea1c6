package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.env;
import static dev.openfga.operator.testing.Fixtures.secretEnv;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.SharedObjects;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class MigrationJobTest {

  private static final MigrationJob.Spec SPEC = new MigrationJob.Spec(3, 300);

  /** A Deployment that uses every pod-level field the Job copies or must not copy. */
  private static final String RICH_DEPLOYMENT =
      """
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: openfga
        namespace: auth
        uid: dep-uid
        labels:
          app.kubernetes.io/part-of: openfga
          app.kubernetes.io/component: authorization-controller
      spec:
        replicas: 2
        selector:
          matchLabels: {app.kubernetes.io/name: openfga, app.kubernetes.io/instance: prod}
        template:
          metadata:
            labels: {app.kubernetes.io/name: openfga, app.kubernetes.io/instance: prod}
            annotations: {sidecar.istio.io/inject: "true"}
          spec:
            serviceAccountName: openfga
            imagePullSecrets: [{name: registry-credentials}]
            nodeSelector: {disktype: ssd}
            priorityClassName: high
            runtimeClassName: gvisor
            hostAliases: [{ip: 10.0.0.1, hostnames: [db.local]}]
            dnsConfig: {nameservers: [10.0.0.53]}
            topologySpreadConstraints:
            - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
            securityContext:
              runAsNonRoot: true
              fsGroup: 1000
              seccompProfile: {type: RuntimeDefault}
              sysctls: [{name: net.core.somaxconn, value: "1024"}]
            tolerations:
            - {key: dedicated, operator: Equal, value: openfga, effect: NoSchedule}
            - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 30}
            affinity:
              nodeAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                  - matchExpressions: [{key: zone, operator: In, values: [a, b]}]
              podAntiAffinity:
                preferredDuringSchedulingIgnoredDuringExecution:
                - weight: 100
                  podAffinityTerm:
                    topologyKey: kubernetes.io/hostname
                    labelSelector: {matchLabels: {app.kubernetes.io/name: openfga}}
            initContainers:
            - {name: wait-for-db, image: busybox}
            volumes:
            - name: tls
              secret: {secretName: db-tls, defaultMode: 256, items: [{key: ca.crt, path: ca.crt}]}
            - name: pgpass
              projected: {sources: [{secret: {name: pgpass}}, {serviceAccountToken: {path: token, expirationSeconds: 600}}]}
            - name: scratch
              ephemeral:
                volumeClaimTemplate:
                  spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
            - name: cpu-info
              downwardAPI: {items: [{path: cpu, resourceFieldRef: {containerName: openfga, resource: limits.cpu, divisor: 1m}}]}
            - name: cache
              emptyDir: {sizeLimit: 1Gi}
            - name: unrelated-secret
              secret: {secretName: api-keys}
            containers:
            - name: proxy
              image: envoyproxy/envoy:v1.30
              volumeMounts: [{name: unrelated-secret, mountPath: /keys}]
            - name: openfga
              image: openfga/openfga:v1.14.0
              imagePullPolicy: IfNotPresent
              command: [/openfga]
              args: [run]
              ports: [{name: grpc, containerPort: 8081}]
              readinessProbe: {grpc: {port: 8081}}
              envFrom: [{secretRef: {name: all-the-secrets}}]
              env:
              - {name: OPENFGA_DATASTORE_ENGINE, value: postgres}
              - {name: OPENFGA_DATASTORE_URI, valueFrom: {secretKeyRef: {name: db, key: uri}}}
              - {name: OPENFGA_DATASTORE_MAX_OPEN_CONNS, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1m}}}
              - {name: OPENFGA_PRESHARED_KEYS, valueFrom: {secretKeyRef: {name: api, key: keys}}}
              - {name: OPENFGA_LOG_LEVEL, value: info}
              resources:
                limits: {cpu: "1", memory: 512Mi}
                requests: {cpu: 100m, memory: 128Mi}
              securityContext:
                allowPrivilegeEscalation: false
                readOnlyRootFilesystem: true
                runAsUser: 65532
                capabilities: {drop: [ALL]}
              volumeMounts:
              - {name: tls, mountPath: /etc/tls, readOnly: true}
              - {name: pgpass, mountPath: /etc/pgpass}
              - {name: scratch, mountPath: /scratch}
              - {name: cpu-info, mountPath: /etc/cpu}
              - {name: cache, mountPath: /cache}
      """;

  private static Deployment rich() {
    return new KubernetesSerialization().unmarshal(RICH_DEPLOYMENT, Deployment.class);
  }

  private static Container openfga(Deployment d) {
    return d.getSpec().getTemplate().getSpec().getContainers().stream()
        .filter(c -> c.getName().equals("openfga"))
        .findFirst()
        .orElseThrow();
  }

  private static Job build(Deployment d) {
    return MigrationJob.build(
        d, openfga(d), "v1.14.0", DeploymentSettings.of(d), Optional.empty(), SPEC);
  }

  private static PodSpec pod(Job job) {
    return job.getSpec().getTemplate().getSpec();
  }

  private static Container migrate(Job job) {
    return pod(job).getContainers().get(0);
  }

  private static List<String> names(List<EnvVar> env) {
    return env.stream().map(EnvVar::getName).toList();
  }

  @Nested
  class Environment {

    @Test
    void keepsOnlyDatastoreVariablesAndTheOnesMigrateReads() {
      List<EnvVar> env =
          List.of(
              env("OPENFGA_DATASTORE_ENGINE", "postgres"),
              secretEnv("OPENFGA_DATASTORE_URI", "db", "uri"),
              env("OPENFGA_DATASTORE_USERNAME", "openfga"),
              secretEnv("OPENFGA_DATASTORE_PASSWORD", "db", "password"),
              env("OPENFGA_DATASTORE_MAX_OPEN_CONNS", "30"),
              env("OPENFGA_TIMEOUT", "5m"),
              env("OPENFGA_VERBOSE", "true"),
              env("OPENFGA_LOG_FORMAT", "json"),
              env("OPENFGA_LOG_LEVEL", "info"),
              env("OPENFGA_LOG_TIMESTAMP_FORMAT", "ISO8601"),
              secretEnv("OPENFGA_PRESHARED_KEYS", "api", "keys"),
              env("OPENFGA_HTTP_ADDR", "0.0.0.0:8080"),
              env("OPENFGA_MIGRATE_TIMEOUT", "1m"),
              env("OPENFGA_DATASTORE", "not-a-prefix-match"),
              secretEnv("AWS_SECRET_ACCESS_KEY", "aws", "secret"),
              env("openfga_datastore_engine", "lower case is another variable"));

      List<EnvVar> kept = MigrationEnv.filterEnv(env);

      assertThat(names(kept))
          .containsExactly(
              "OPENFGA_DATASTORE_ENGINE",
              "OPENFGA_DATASTORE_URI",
              "OPENFGA_DATASTORE_USERNAME",
              "OPENFGA_DATASTORE_PASSWORD",
              "OPENFGA_DATASTORE_MAX_OPEN_CONNS",
              "OPENFGA_TIMEOUT",
              "OPENFGA_VERBOSE",
              "OPENFGA_LOG_FORMAT",
              "OPENFGA_LOG_LEVEL",
              "OPENFGA_LOG_TIMESTAMP_FORMAT");
      assertThat(kept.get(1)).isEqualTo(env.get(1));
    }

    @Test
    void keepsVariablesAKeptValueReferencesTransitivelyInTheirOriginalOrder() {
      List<EnvVar> env =
          List.of(
              secretEnv("DB_PASSWORD", "db", "password"),
              env("DB_USER_PREFIX", "app"),
              env("DB_USER", "$(DB_USER_PREFIX)-migrator"),
              env("UNRELATED", "$(DB_PASSWORD)"),
              env(
                  "OPENFGA_DATASTORE_URI",
                  "postgres://$(DB_USER):$(DB_PASSWORD)@$(DB_HOST.NAME):5432/openfga"),
              env("DB_HOST.NAME", "postgres"),
              env("OPENFGA_LOG_LEVEL", "$(LOG_LEVEL)"),
              env("LOG_LEVEL", "debug"));

      assertThat(names(MigrationEnv.filterEnv(env)))
          .containsExactly(
              "DB_PASSWORD",
              "DB_USER_PREFIX",
              "DB_USER",
              "OPENFGA_DATASTORE_URI",
              "DB_HOST.NAME",
              "OPENFGA_LOG_LEVEL",
              "LOG_LEVEL");
    }

    @Test
    void doesNotFollowEscapedReferences() {
      List<EnvVar> env =
          List.of(
              secretEnv("SECRET", "s", "k"),
              env("OTHER", "x"),
              env("OPENFGA_DATASTORE_URI", "postgres://u:$$(SECRET)@db/$$$(OTHER)"));

      assertThat(names(MigrationEnv.filterEnv(env)))
          .containsExactly("OTHER", "OPENFGA_DATASTORE_URI");
    }

    @Test
    void keepsNothingFromAnEmptyEnvironment() {
      assertThat(MigrationEnv.filterEnv(List.of())).isEmpty();
    }

    @Test
    void copiesTheFilteredEnvironmentIntoTheJobButNotEnvFrom() {
      Job job = build(rich());

      assertThat(names(migrate(job).getEnv()))
          .containsExactly(
              "OPENFGA_DATASTORE_ENGINE",
              "OPENFGA_DATASTORE_URI",
              "OPENFGA_DATASTORE_MAX_OPEN_CONNS",
              "OPENFGA_LOG_LEVEL");
      assertThat(migrate(job).getEnvFrom()).isEmpty();
    }
  }

  @Nested
  class Spec {

    @Test
    void replacesAPodOnlyOnceItHasFailedNeverWhileItTerminates() {
      assertThat(build(rich()).getSpec().getPodReplacementPolicy()).isEqualTo("Failed");
    }

    @Test
    void saysWhenTheApiServerDroppedThePodReplacementPolicy() {
      // API servers before Kubernetes 1.29 drop the field they do not know from the created Job
      Job sent = build(rich());
      Job kept = new JobBuilder(sent).build();
      Job dropped =
          new JobBuilder(sent).editSpec().withPodReplacementPolicy(null).endSpec().build();

      assertThat(MigrationJob.droppedPodReplacementPolicy(sent, kept)).isEmpty();
      assertThat(MigrationJob.droppedPodReplacementPolicy(sent, dropped))
          .hasValueSatisfying(
              w ->
                  assertThat(w)
                      .contains("dropped podReplacementPolicy: Failed")
                      .contains(
                          sent.getMetadata().getNamespace() + "/" + sent.getMetadata().getName())
                      .contains("Kubernetes 1.29"));
    }

    @Test
    void copiesAutomountServiceAccountTokenOfThePod() {
      Deployment off = rich();
      off.getSpec().getTemplate().getSpec().setAutomountServiceAccountToken(false);

      assertThat(build(off).getSpec().getTemplate().getSpec().getAutomountServiceAccountToken())
          .isFalse();
      assertThat(build(rich()).getSpec().getTemplate().getSpec().getAutomountServiceAccountToken())
          .isNull();
    }

    @Test
    void hasTheIdentityOfTheMigrationJob() {
      Job job = build(rich());

      assertThat(job.getMetadata().getName()).isEqualTo("openfga-migrate");
      assertThat(job.getMetadata().getNamespace()).isEqualTo("auth");
      assertThat(job.getMetadata().getLabels())
          .isEqualTo(
              Map.of(
                  Keys.PART_OF, "openfga",
                  Keys.COMPONENT, "migration",
                  Keys.MANAGED_BY, "openfga-operator",
                  Keys.VERSION_LABEL, "v1.14.0",
                  // the database: the engine and the Secret key of the URI, hashed
                  Keys.DATABASE_LABEL, Database.key("auth", openfga(rich())).orElseThrow()));
      assertThat(job.getMetadata().getAnnotations())
          .isEqualTo(Map.of(Keys.DESIRED_VERSION, "v1.14.0"));
    }

    @Test
    void putsTheFullDigestInTheAnnotationAndAValidLabel() {
      String digest = "sha256:" + "0123456789abcdef".repeat(4);
      Deployment d = rich();

      Job job =
          MigrationJob.build(
              d, openfga(d), digest, DeploymentSettings.of(d), Optional.empty(), SPEC);

      assertThat(job.getMetadata().getAnnotations()).containsEntry(Keys.DESIRED_VERSION, digest);
      assertThat(job.getMetadata().getLabels().get(Keys.VERSION_LABEL))
          .hasSize(63)
          .startsWith("sha256_")
          .matches("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
      assertThat(MigrationJob.isFor(job, digest)).isTrue();
    }

    @Test
    void isControlledByTheDeploymentWithoutBlockingOwnerDeletion() {
      Job job = build(rich());

      assertThat(job.getMetadata().getOwnerReferences())
          .singleElement()
          .satisfies(
              ref -> {
                assertThat(ref.getApiVersion()).isEqualTo("apps/v1");
                assertThat(ref.getKind()).isEqualTo("Deployment");
                assertThat(ref.getName()).isEqualTo("openfga");
                assertThat(ref.getUid()).isEqualTo("dep-uid");
                assertThat(ref.getController()).isTrue();
                assertThat(ref.getBlockOwnerDeletion()).isNull();
              });
    }

    @Test
    void takesBackoffAndDeadlineFromTheFlagsAndHasNoTtl() {
      Deployment d = rich();

      Job job =
          MigrationJob.build(
              d,
              openfga(d),
              "v1.14.0",
              DeploymentSettings.of(d),
              Optional.empty(),
              new MigrationJob.Spec(0, 1));

      assertThat(job.getSpec().getBackoffLimit()).isZero();
      assertThat(job.getSpec().getActiveDeadlineSeconds()).isEqualTo(1L);
      assertThat(job.getSpec().getTtlSecondsAfterFinished()).isNull();
    }

    @Test
    void runsOneMigrateContainerThatNeverRestarts() {
      Job job = build(rich());

      assertThat(pod(job).getRestartPolicy()).isEqualTo("Never");
      assertThat(pod(job).getContainers()).hasSize(1);
      Container c = migrate(job);
      assertThat(c.getName()).isEqualTo("migrate-database");
      assertThat(c.getImage()).isEqualTo("openfga/openfga:v1.14.0");
      assertThat(c.getArgs()).containsExactly("migrate");
      assertThat(c.getCommand()).isEmpty();
      assertThat(c.getPorts()).isEmpty();
      assertThat(c.getReadinessProbe()).isNull();
      assertThat(c.getLivenessProbe()).isNull();
    }

    @ParameterizedTest(name = "imagePullPolicy {0}")
    @NullSource
    @ValueSource(strings = {"Never", "Always", "IfNotPresent"})
    void copiesTheImagePullPolicy(String policy) {
      Deployment d = rich();
      Container c = new ContainerBuilder(openfga(d)).withImagePullPolicy(policy).build();

      Job job =
          MigrationJob.build(d, c, "v1.14.0", DeploymentSettings.of(d), Optional.empty(), SPEC);

      assertThat(migrate(job).getImagePullPolicy()).isEqualTo(policy);
      assertThat(job.getSpec().getTtlSecondsAfterFinished()).isNull();
    }

    @Test
    void labelsThePodAsAMigrationAndNeverWithTheDeploymentSelector() {
      Job job = build(rich());

      // and the database: a pod outlives a Job deleted by someone else, and holds the database
      assertThat(job.getSpec().getTemplate().getMetadata().getLabels())
          .isEqualTo(
              Map.of(
                  Keys.PART_OF,
                  "openfga",
                  Keys.COMPONENT,
                  "migration",
                  Keys.DATABASE_LABEL,
                  job.getMetadata().getLabels().get(Keys.DATABASE_LABEL)));
      // nothing of the pod template's (its sidecar.istio.io/inject "true" included): the pod opts
      // out of mesh injection, whose proxy would never exit
      assertThat(job.getSpec().getTemplate().getMetadata().getAnnotations())
          .isEqualTo(Map.of(Keys.ISTIO_INJECT, "false", Keys.LINKERD_INJECT, "disabled"));
    }

    @Test
    void usesThePodServiceAccountByDefault() {
      assertThat(pod(build(rich())).getServiceAccountName()).isEqualTo("openfga");
    }

    @Test
    void usesTheMigrationServiceAccountWhenGiven() {
      Deployment d = rich();
      d.getMetadata().setAnnotations(Map.of(Keys.MIGRATION_SERVICE_ACCOUNT, "migrator"));

      Job job =
          MigrationJob.build(
              d, openfga(d), "v1.14.0", DeploymentSettings.of(d), Optional.empty(), SPEC);

      assertThat(pod(job).getServiceAccountName()).isEqualTo("migrator");
    }

    @Test
    void copiesSchedulingAndSecurityOfThePod() {
      Deployment d = rich();
      PodSpec source = d.getSpec().getTemplate().getSpec();

      PodSpec pod = pod(build(d));

      assertThat(pod.getImagePullSecrets()).isEqualTo(source.getImagePullSecrets());
      assertThat(pod.getSecurityContext()).isEqualTo(source.getSecurityContext());
      assertThat(pod.getNodeSelector()).isEqualTo(Map.of("disktype", "ssd"));
      assertThat(pod.getTolerations()).isEqualTo(source.getTolerations()).hasSize(2);
      assertThat(pod.getAffinity()).isEqualTo(source.getAffinity()).isNotNull();
    }

    @Test
    void copiesResourcesAndTheContainerSecurityContext() {
      Deployment d = rich();

      Container c = migrate(build(d));

      assertThat(c.getResources()).isEqualTo(openfga(d).getResources());
      assertThat(c.getResources().getLimits()).containsEntry("memory", new Quantity("512Mi"));
      assertThat(c.getSecurityContext()).isEqualTo(openfga(d).getSecurityContext());
    }

    @Test
    void leavesOutEverythingElseOfThePod() {
      PodSpec pod = pod(build(rich()));

      assertThat(pod.getInitContainers()).isEmpty();
      assertThat(pod.getPriorityClassName()).isNull();
      assertThat(pod.getRuntimeClassName()).isNull();
      assertThat(pod.getHostAliases()).isEmpty();
      assertThat(pod.getDnsConfig()).isNull();
      assertThat(pod.getTopologySpreadConstraints()).isEmpty();
    }

    @Test
    void mountsOnlyTheVolumesTheContainerUses() {
      Deployment d = rich();

      Job job = build(d);

      assertThat(pod(job).getVolumes())
          .extracting(v -> v.getName())
          .containsExactly("tls", "pgpass", "scratch", "cpu-info", "cache");
      assertThat(pod(job).getVolumes().get(0))
          .isEqualTo(d.getSpec().getTemplate().getSpec().getVolumes().get(0));
      assertThat(migrate(job).getVolumeMounts()).isEqualTo(openfga(d).getVolumeMounts());
    }

    @Test
    void hasNoVolumesWhenTheContainerMountsNone() {
      Deployment d = Fixtures.deployment().build();
      Container c = openfga(d);

      Job job =
          MigrationJob.build(d, c, "v1.14.0", DeploymentSettings.of(d), Optional.empty(), SPEC);

      assertThat(pod(job).getVolumes()).isEmpty();
      assertThat(migrate(job).getVolumeMounts()).isEmpty();
    }
  }

  @Nested
  class Independence {

    @Test
    void sharesNoMutableObjectWithTheDeployment() {
      Deployment d = rich();

      Job job = build(d);

      assertThat(SharedObjects.between(job, d)).isEmpty();
    }

    @Test
    void staysUnchangedWhenTheDeploymentIsMutatedAfterBuilding() {
      Deployment d = rich();
      Job job = build(d);
      String yamlBefore = new KubernetesSerialization().asYaml(job);

      PodSpec pod = d.getSpec().getTemplate().getSpec();
      Container c = openfga(d);
      c.getEnv().get(0).setValue("mysql");
      c.getEnv().get(1).getValueFrom().getSecretKeyRef().setKey("other");
      c.getResources().getLimits().get("memory").setAmount("1");
      c.getResources().getRequests().put("ephemeral-storage", new Quantity("1Gi"));
      c.getSecurityContext().getCapabilities().getDrop().add("NET_RAW");
      c.getVolumeMounts().get(0).setMountPath("/elsewhere");
      c.setImagePullPolicy("Always");
      pod.getImagePullSecrets().get(0).setName("changed");
      pod.getSecurityContext().setFsGroup(0L);
      pod.getSecurityContext().getSysctls().clear();
      pod.getNodeSelector().put("zone", "b");
      pod.getTolerations().get(0).setValue("changed");
      pod.getAffinity()
          .getNodeAffinity()
          .getRequiredDuringSchedulingIgnoredDuringExecution()
          .getNodeSelectorTerms()
          .get(0)
          .getMatchExpressions()
          .get(0)
          .getValues()
          .add("c");
      pod.getVolumes().get(0).getSecret().setSecretName("changed");
      pod.getVolumes()
          .get(2)
          .getEphemeral()
          .getVolumeClaimTemplate()
          .getSpec()
          .getResources()
          .getRequests()
          .get("storage")
          .setAmount("5");
      pod.getVolumes()
          .get(3)
          .getDownwardAPI()
          .getItems()
          .get(0)
          .getResourceFieldRef()
          .getDivisor()
          .setAmount("2");
      pod.setServiceAccountName("changed");
      d.getMetadata().setName("renamed");

      assertThat(new KubernetesSerialization().asYaml(job)).isEqualTo(yamlBefore);
    }
  }

  @Nested
  class Golden {

    @Test
    void buildsTheExpectedJobFromTheUpstreamChartDeployment() throws IOException {
      Deployment d =
          new DeploymentBuilder(Fixtures.upstreamChart("operator-mode.yaml", Deployment.class))
              .editMetadata()
              .withNamespace("openfga")
              .withUid("0b7a3c1e-5d2f-4a8b-9c6d-1e2f3a4b5c6d")
              .endMetadata()
              .build();
      Container c = openfga(d);
      String version = ImageVersion.of(c.getImage()).orElseThrow();

      Job job =
          MigrationJob.build(
              d, c, version, DeploymentSettings.of(d), Optional.empty(), Policy.DEFAULTS.jobSpec());

      assertThat(new KubernetesSerialization().asYaml(job)).isEqualTo(golden("migration-job.yaml"));
    }

    private static String golden(String name) throws IOException {
      try (InputStream in = MigrationJobTest.class.getResourceAsStream("/golden/" + name)) {
        assertThat(in).as("golden file src/test/resources/golden/" + name).isNotNull();
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    }
  }

  @Nested
  class LegacyHelmHook {

    private static Deployment chartDeployment() {
      return Fixtures.upstreamChart("hook-mode.yaml", Deployment.class);
    }

    private static JobBuilder chartHookJob() {
      return new JobBuilder(Fixtures.upstreamChart("hook-mode.yaml", Job.class));
    }

    @Test
    void recognisesTheHookJobOfTheUpstreamChart() {
      assertThat(MigrationJob.isLegacyHelmHook(chartHookJob().build(), chartDeployment())).isTrue();
    }

    @ParameterizedTest(name = "helm.sh/hook \"{0}\" is a migration hook")
    @ValueSource(
        strings = {
          "post-install,post-upgrade",
          "pre-upgrade",
          "post-upgrade",
          "pre-install,pre-upgrade",
          "post-install, post-upgrade, post-rollback, post-delete",
        })
    void acceptsMigrationHookEvents(String hook) {
      Job job =
          chartHookJob()
              .editMetadata()
              .addToAnnotations(Keys.HELM_HOOK, hook)
              .endMetadata()
              .build();

      assertThat(MigrationJob.isLegacyHelmHook(job, chartDeployment())).isTrue();
    }

    @ParameterizedTest(name = "helm.sh/hook \"{0}\" is not a migration hook")
    @ValueSource(strings = {"", " ", "test", "backup,cleanup", "pre-upgrade,test", "pre-delete"})
    void rejectsOtherHookEvents(String hook) {
      Job job =
          chartHookJob()
              .editMetadata()
              .addToAnnotations(Keys.HELM_HOOK, hook)
              .endMetadata()
              .build();

      assertThat(MigrationJob.isLegacyHelmHook(job, chartDeployment())).isFalse();
    }

    @Test
    void rejectsAHelmJobWithoutHookAnnotation() {
      Job job = chartHookJob().editMetadata().withAnnotations(Map.of()).endMetadata().build();

      assertThat(MigrationJob.isLegacyHelmHook(job, chartDeployment())).isFalse();
    }

    @ParameterizedTest(name = "{0}={1} on the Job")
    @CsvSource({
      "app.kubernetes.io/instance, other-release",
      "app.kubernetes.io/name, other-name",
      "app.kubernetes.io/part-of, other",
      "app.kubernetes.io/component, migration",
      "app.kubernetes.io/managed-by, openfga-operator",
      "app.kubernetes.io/managed-by, Tiller",
    })
    void rejectsAJobOfAnotherReleaseOrManager(String label, String value) {
      Job job = chartHookJob().editMetadata().addToLabels(label, value).endMetadata().build();

      assertThat(MigrationJob.isLegacyHelmHook(job, chartDeployment())).isFalse();
    }

    @ParameterizedTest(name = "without {0} on the Job")
    @ValueSource(
        strings = {
          "app.kubernetes.io/instance",
          "app.kubernetes.io/name",
          "app.kubernetes.io/managed-by"
        })
    void rejectsAJobMissingAnIdentityLabel(String label) {
      Job job = chartHookJob().editMetadata().removeFromLabels(label).endMetadata().build();

      assertThat(MigrationJob.isLegacyHelmHook(job, chartDeployment())).isFalse();
    }

    @Test
    void rejectsWhenTheDeploymentLacksTheReleaseLabels() {
      Deployment d =
          new DeploymentBuilder(chartDeployment())
              .editMetadata()
              .removeFromLabels(Keys.INSTANCE)
              .endMetadata()
              .build();
      Job job = chartHookJob().editMetadata().removeFromLabels(Keys.INSTANCE).endMetadata().build();

      assertThat(MigrationJob.isLegacyHelmHook(job, d)).isFalse();
    }

    @Test
    void acceptsAHookJobOfAnotherChartVersion() {
      Job job =
          chartHookJob()
              .editMetadata()
              .addToLabels("helm.sh/chart", "openfga-0.4.0")
              .addToLabels(Keys.VERSION_LABEL, "v1.19.0")
              .endMetadata()
              .build();

      assertThat(MigrationJob.isLegacyHelmHook(job, chartDeployment())).isTrue();
    }
  }

  @Nested
  class Reading {

    private final Deployment deployment = Fixtures.deployment().build();

    @Test
    void trustsTheAnnotationOverTheLabel() {
      Job job = Fixtures.job(deployment, "v1.14.0").label(Keys.VERSION_LABEL, "v1.15.0").build();

      assertThat(MigrationJob.recordedVersion(job)).contains("v1.14.0");
      assertThat(MigrationJob.isFor(job, "v1.14.0")).isTrue();
      assertThat(MigrationJob.isFor(job, "v1.15.0")).isFalse();
      assertThat(MigrationJob.describedVersion(job)).isEqualTo("v1.14.0");
    }

    @Test
    void fallsBackToTheSanitisedLabel() {
      String digest = "sha256:abcdef1234567890";
      Job job = Fixtures.job(deployment, digest).withoutAnnotation(Keys.DESIRED_VERSION).build();

      assertThat(MigrationJob.recordedVersion(job)).isEmpty();
      assertThat(MigrationJob.isFor(job, digest)).isTrue();
      assertThat(MigrationJob.isFor(job, "sha256:other")).isFalse();
      assertThat(MigrationJob.describedVersion(job)).isEqualTo("sha256_abcdef1234567890");
    }

    @ParameterizedTest(name = "annotation \"{0}\"")
    @ValueSource(strings = {""})
    @NullSource
    void neverTrustsAJobWithoutVersion(String annotation) {
      var fixture =
          Fixtures.job(deployment, "v1.14.0")
              .withoutLabel(Keys.VERSION_LABEL)
              .withoutAnnotation(Keys.DESIRED_VERSION);
      if (annotation != null) {
        fixture.annotation(Keys.DESIRED_VERSION, annotation);
      }
      Job job = fixture.build();

      assertThat(MigrationJob.isFor(job, "v1.14.0")).isFalse();
      assertThat(MigrationJob.isFor(job, "")).isFalse();
      assertThat(MigrationJob.describedVersion(job)).isEqualTo("unknown");
    }

    @Test
    void readsTheOutcomeOnlyFromTrueConditions() {
      Job created = Fixtures.job(deployment, "v1.14.0").build();
      Job complete = Fixtures.job(deployment, "v1.14.0").complete(NOW).build();
      Job failed = Fixtures.job(deployment, "v1.14.0").failed(NOW).build();
      Job failureTarget = Fixtures.job(deployment, "v1.14.0").failureTarget(NOW).build();
      Job falseFailed = Fixtures.job(deployment, "v1.14.0").failed(NOW).build();
      falseFailed.getStatus().getConditions().get(0).setStatus("False");
      Job countersOnly = Fixtures.job(deployment, "v1.14.0").build();
      countersOnly.setStatus(
          new io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder()
              .withFailed(10)
              .withSucceeded(1)
              .build());

      assertThat(MigrationJob.isComplete(created)).isFalse();
      assertThat(MigrationJob.isFailed(created)).isFalse();
      assertThat(MigrationJob.isComplete(complete)).isTrue();
      assertThat(MigrationJob.isFailed(complete)).isFalse();
      assertThat(MigrationJob.isFailed(failed)).isTrue();
      assertThat(MigrationJob.isFailed(failureTarget)).isTrue();
      assertThat(MigrationJob.hasCondition(failureTarget, "Failed")).isFalse();
      assertThat(MigrationJob.isFailed(falseFailed)).isFalse();
      assertThat(MigrationJob.isFailed(countersOnly)).isFalse();
      assertThat(MigrationJob.isComplete(countersOnly)).isFalse();
    }

    @ParameterizedTest(name = "active={0}, ready={1} -> running {2}")
    @CsvSource(
        nullValues = "null",
        value = {
          "1, 1, true",
          "1, 0, false",
          "0, 0, false",
          "1, null, false",
          "null, null, false",
          "0, 1, false"
        })
    void countsAsRunningOnlyWithAnActiveReadyPod(Integer active, Integer ready, boolean running) {
      Job job = Fixtures.job(deployment, "v1.14.0").build();
      job.setStatus(
          new io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder()
              .withActive(active)
              .withReady(ready)
              .build());

      assertThat(MigrationJob.isRunning(job)).isEqualTo(running);
    }

    @ParameterizedTest(name = "startTime={0}, active={1}, ready={2}, failed={3} -> {4}")
    @CsvSource(
        nullValues = "null",
        value = {
          // the Job controller's first look, the pod refused (Kubernetes 1.29 and later)
          "2026-01-01T00:00:00Z, 0, 0, null, true",
          "2026-01-01T00:00:00Z, null, null, null, true",
          // not looked at yet (or suspended): no pod refused
          "null, null, null, null, false",
          "null, 0, 0, null, false",
          // a pod made
          "2026-01-01T00:00:00Z, 1, 0, null, false",
          "2026-01-01T00:00:00Z, 0, 0, 1, false"
        })
    void seesNoPodMadeOnlyOnceTheJobControllerHasLookedAtTheJob(
        String startTime, Integer active, Integer ready, Integer failed, boolean madeNoPod) {
      Job job = Fixtures.job(deployment, "v1.14.0").build();
      job.setStatus(
          new io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder()
              .withStartTime(startTime)
              .withActive(active)
              .withReady(ready)
              .withFailed(failed)
              .build());

      assertThat(MigrationJob.madeNoPod(job)).isEqualTo(madeNoPod);
    }

    @Test
    void seesNoPodMadeInNoJobWithoutAStatus() {
      assertThat(MigrationJob.madeNoPod(Fixtures.job(deployment, "v1.14.0").build())).isFalse();
    }

    @Test
    void seesADeletionTimestampAsTerminating() {
      assertThat(MigrationJob.isTerminating(Fixtures.job(deployment, "v1").terminating().build()))
          .isTrue();
      assertThat(MigrationJob.isTerminating(Fixtures.job(deployment, "v1").build())).isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ownership")
    void trustsOnlyAManagedJobControlledByThisDeployment(
        String description, boolean managed, List<OwnerReference> refs, boolean trusted) {
      var fixture =
          Fixtures.job(deployment, "v1.14.0").ownerReferences(refs.toArray(new OwnerReference[0]));
      if (!managed) {
        fixture.withoutLabel(Keys.MANAGED_BY);
      }

      assertThat(MigrationJob.isTrusted(fixture.build(), deployment)).isEqualTo(trusted);
    }

    static Stream<Arguments> ownership() {
      OwnerReference ours = Fixtures.controllerRef("openfga", "test-uid-123");
      OwnerReference notController =
          new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder(ours)
              .withController(false)
              .build();
      OwnerReference foreignController =
          new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder()
              .withApiVersion("batch/v1")
              .withKind("CronJob")
              .withName("backup")
              .withUid("cron-uid")
              .withController(true)
              .build();
      OwnerReference oldIncarnation = Fixtures.controllerRef("openfga", "old-uid");
      OwnerReference otherDeployment = Fixtures.controllerRef("another-deployment", "test-uid-123");
      OwnerReference wrongKind =
          new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder(ours)
              .withKind("StatefulSet")
              .build();
      return Stream.of(
          Arguments.of("label and controller reference", true, List.of(ours), true),
          Arguments.of("label only", true, List.of(), false),
          Arguments.of("controller reference only", false, List.of(ours), false),
          Arguments.of("neither", false, List.of(), false),
          Arguments.of(
              "non-controller reference, another controller",
              true,
              List.of(notController, foreignController),
              false),
          Arguments.of("reference to an older incarnation", true, List.of(oldIncarnation), false),
          Arguments.of("reference to another Deployment", true, List.of(otherDeployment), false),
          Arguments.of("reference of another kind", true, List.of(wrongKind), false));
    }

    @Test
    void readsTheEngineFromTheLastEngineVariableAsThePodDoes() {
      Container literal =
          new ContainerBuilder()
              .withEnv(
                  env("OPENFGA_DATASTORE_ENGINE", "memory"),
                  env("OPENFGA_DATASTORE_ENGINE", "postgres"))
              .build();
      Container fromSecret =
          new ContainerBuilder()
              .withEnv(secretEnv("OPENFGA_DATASTORE_ENGINE", "db", "engine"))
              .build();
      Container none = new ContainerBuilder().build();

      // a chart's default memory, then postgres added with extra variables: the pod runs postgres
      assertThat(MigrationJob.literalEngine(literal)).contains("postgres");
      assertThat(MigrationJob.needsNoJob(literal)).isFalse();
      assertThat(MigrationJob.literalEngine(fromSecret)).isEmpty();
      assertThat(MigrationJob.literalEngine(none)).isEmpty();
    }
  }

  /** SPEC section 10: the API server's answer to a refused create, as the Deployment shows it. */
  @Nested
  class Rejection {
    private final Job job =
        build(
            Fixtures.deployment()
                .env(
                    env("OPENFGA_DATASTORE_ENGINE", "postgres"),
                    env("OPENFGA_DATASTORE_URI", "postgres://openfga:Xk9-pa55@db:5432/fga"),
                    env("OPENFGA_DATASTORE_PASSWORD", "n0t-in-the-uri"))
                .build());

    @Test
    void masksTheDatastoreCredentialsAnInvalidObjectsAnswerQuotes() {
      String answer =
          "Job.batch \"openfga-migrate\" is invalid: [spec.template.spec.containers[0].env[1].value:"
              + " Invalid value: \"postgres://openfga:Xk9-pa55@db:5432/fga\": too long,"
              + " spec.template.spec.containers[0].env[2].value: Invalid value:"
              + " \"n0t-in-the-uri\": too long]";

      String shown = MigrationJob.rejection(job, 422, answer);

      assertThat(shown)
          .startsWith("Job.batch \"openfga-migrate\" is invalid: ")
          .endsWith(" (HTTP 422)")
          .doesNotContain("Xk9-pa55")
          .doesNotContain("n0t-in-the-uri")
          .contains(FailureLog.MASK);
    }

    @Test
    void masksAUriOfAnyContainerWithTheUsualRules() {
      // a webhook's own text: a URI the Job does not hold literally is masked by its shape
      String shown =
          MigrationJob.rejection(
              job, 403, "denied: postgres://admin:0ther-Secret@other-db/fga is not allowed");

      assertThat(shown).doesNotContain("0ther-Secret").contains("postgres://admin:***@other-db");
    }

    @Test
    void keepsABoundedPartOfALongAnswer() {
      String shown = MigrationJob.rejection(job, 403, "x".repeat(10_000));

      assertThat(shown).hasSize(MigrationJob.MAX_REJECTION + " (HTTP 403)".length());
      assertThat(shown).endsWith("... (HTTP 403)");
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(strings = {"", "  "})
    void saysSoWhenTheAnswerHasNoMessage(String message) {
      assertThat(MigrationJob.rejection(job, 403, message)).isEqualTo("no message (HTTP 403)");
    }
  }
}
