package dev.openfga.operator.migration.rules;

import static dev.openfga.operator.testing.Fixtures.NOW;
import static dev.openfga.operator.testing.Fixtures.env;
import static dev.openfga.operator.testing.Fixtures.observe;
import static dev.openfga.operator.testing.Fixtures.secretEnv;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.CreateJob;
import dev.openfga.operator.migration.rules.Step.DeleteJob;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.WriteStatus;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** SPEC section 9, decision by decision: what no peer does yet. */
class MigrationSafetyTest {

  private final Planner planner = new Planner(Policy.DEFAULTS);

  private static <T extends Step> List<T> all(Plan plan, Class<T> type) {
    return plan.steps().stream().filter(type::isInstance).map(type::cast).toList();
  }

  private static Job created(Plan plan) {
    List<CreateJob> creates = all(plan, CreateJob.class);
    assertThat(creates).as("creates in %s", plan).hasSize(1);
    return creates.get(0).job();
  }

  private static String label(Job job) {
    return job.getMetadata().getLabels().get(Keys.DATABASE_LABEL);
  }

  private static PodSpec pod(Job job) {
    return job.getSpec().getTemplate().getSpec();
  }

  private static Container migrate(Job job) {
    return pod(job).getContainers().get(0);
  }

  private static ConfigMap record(Deployment d, String version, String handled) {
    var builder = Fixtures.statusConfigMap(d, version);
    if (handled != null) {
      builder.addToData(Keys.DATA_HANDLED_REQUEST, handled);
    }
    return builder.build();
  }

  @Nested
  class MigrationCredentials {

    @Test
    void takesUriUsernameAndPasswordFromTheSecretAfterTheDeploymentsOwn() {
      Deployment d =
          Fixtures.deployment()
              .env(
                  env("OPENFGA_DATASTORE_ENGINE", "postgres"),
                  secretEnv("OPENFGA_DATASTORE_URI", "openfga-runtime", "uri"),
                  env("OPENFGA_DATASTORE_USERNAME", "runtime"))
              .annotation(Keys.MIGRATION_SECRET, "openfga-migration")
              .build();

      List<EnvVar> env = migrate(created(planner.plan(observe(d)))).getEnv();

      assertThat(env)
          .extracting(EnvVar::getName)
          .containsExactly(
              "OPENFGA_DATASTORE_ENGINE",
              "OPENFGA_DATASTORE_URI",
              "OPENFGA_DATASTORE_USERNAME",
              "OPENFGA_DATASTORE_URI",
              "OPENFGA_DATASTORE_USERNAME",
              "OPENFGA_DATASTORE_PASSWORD");
      // the last definition of a name wins in a pod; optional keys the Secret lacks leave the
      // Deployment's value in place
      assertThat(env.subList(3, 6))
          .allSatisfy(
              e -> {
                assertThat(e.getValue()).isNull();
                assertThat(e.getValueFrom().getSecretKeyRef().getName())
                    .isEqualTo("openfga-migration");
                assertThat(e.getValueFrom().getSecretKeyRef().getOptional()).isTrue();
              })
          .extracting(e -> e.getValueFrom().getSecretKeyRef().getKey())
          .containsExactly("uri", "username", "password");
    }

    @Test
    void leavesTheServerPodsAndTheJobWithoutTheAnnotationAlone() {
      Deployment d = Fixtures.deployment().build();

      List<EnvVar> env = migrate(created(planner.plan(observe(d)))).getEnv();

      assertThat(env).noneMatch(e -> e.getValueFrom() != null);
      assertThat(d.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv())
          .noneMatch(e -> e.getValueFrom() != null);
    }

    @Test
    void blocksOnAnInvalidSecretNameInsteadOfMigratingWithTheRuntimeCredentials() {
      Deployment d = Fixtures.deployment().annotation(Keys.MIGRATION_SECRET, "Not_A_Name").build();

      Plan plan = planner.plan(observe(d));

      assertThat(plan.state()).isEqualTo(State.BLOCKED);
      assertThat(all(plan, CreateJob.class)).isEmpty();
      assertThat(all(plan, Emit.class))
          .anySatisfy(
              e -> {
                assertThat(e.reason()).isEqualTo(EventReason.InvalidConfiguration);
                assertThat(e.message())
                    .contains(Keys.MIGRATION_SECRET, "Not_A_Name", "not a valid Secret name");
              });
    }
  }

  @Nested
  class OneMigrationPerDatabase {

    private Deployment named(String name, String uri) {
      return Fixtures.deployment()
          .name(name)
          .uid(name + "-uid")
          .env(env("OPENFGA_DATASTORE_ENGINE", "postgres"), env("OPENFGA_DATASTORE_URI", uri))
          .build();
    }

    /** A Deployment of {@code namespace} on the one database every namespace reaches. */
    private Deployment inNamespace(String name, String namespace) {
      return Fixtures.deployment()
          .name(name)
          .namespace(namespace)
          .env(env("OPENFGA_DATASTORE_URI", "postgres://u:p@db:5432/fga"))
          .build();
    }

    private Job runningJob(Deployment d) {
      return Fixtures.job(d, "v1.14.0").running().build();
    }

    @Test
    void labelsTheJobWithTheDatabaseWithoutItsCredentials() {
      Deployment a = named("a", "postgres://alice:secret@db:5432/fga?sslmode=disable");
      Deployment b = named("b", "postgres://bob:other@db:5432/fga");

      String labelA = label(created(planner.plan(observe(a))));
      String labelB = label(created(planner.plan(observe(b))));

      assertThat(labelA).matches("[0-9a-f]{16}").isEqualTo(labelB);
      assertThat(label(created(planner.plan(observe(named("c", "postgres://db/other"))))))
          .isNotEqualTo(labelA);
    }

    @Test
    void waitsForAnotherDeploymentsUnfinishedJobOnTheSameDatabaseAndSaysWhose() {
      Deployment a = named("a", "postgres://u:p@db:5432/fga");
      Deployment b = named("b", "postgres://u:p@db:5432/fga");
      Job jobOfA = runningJob(a);

      Plan plan = planner.plan(observe(b).withDatabaseJobs(List.of(jobOfA)));

      assertThat(plan.state()).isEqualTo(State.WAITING);
      assertThat(all(plan, CreateJob.class)).isEmpty();
      assertThat(plan.summary()).contains("Deployment default/a", "a-migrate");
      assertThat(all(plan, Emit.class))
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.reason()).isEqualTo(EventReason.MigrationWaiting);
                assertThat(e.reason().warning()).isFalse();
                assertThat(e.message()).contains("Deployment default/a", "same database");
              });
      assertThat(plan.next()).isEqualTo(new Plan.Next.After(Timing.WHILE_WAITING));
    }

    @Test
    void createsOnceTheOtherJobHasFinished() {
      Deployment a = named("a", "postgres://u:p@db:5432/fga");
      Deployment b = named("b", "postgres://u:p@db:5432/fga");

      for (Job finished :
          List.of(
              Fixtures.job(a, "v1.14.0").complete(NOW.minusSeconds(1)).build(),
              Fixtures.job(a, "v1.14.0").failed(NOW.minusSeconds(1)).build())) {
        Plan plan = planner.plan(observe(b).withDatabaseJobs(List.of(finished)));
        assertThat(plan.state()).isEqualTo(State.MIGRATING);
        assertThat(all(plan, CreateJob.class)).hasSize(1);
      }
    }

    @Test
    void aJobWithOnlyFailureTargetStillHoldsTheDatabase() {
      // its pod may still be ending: Failed comes only once it is gone
      Deployment a = named("a", "postgres://u:p@db:5432/fga");
      Deployment b = named("b", "postgres://u:p@db:5432/fga");
      Job ending = Fixtures.job(a, "v1.14.0").failureTarget(NOW.minusSeconds(1)).build();

      assertThat(planner.plan(observe(b).withDatabaseJobs(List.of(ending))).state())
          .isEqualTo(State.WAITING);
    }

    @Test
    void otherDatabasesAndItsOwnJobNameDoNotCount() {
      Deployment a = named("a", "postgres://u:p@db:5432/fga");
      Deployment other = named("other", "postgres://u:p@elsewhere:5432/fga");
      Job own = runningJob(a);

      Plan plan = planner.plan(observe(a).withDatabaseJobs(List.of(runningJob(other), own)));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
    }

    @Test
    void sharesTheDatabaseThroughTheMigrationSecretWhateverTheRuntimeUris() {
      // blue and green: runtime URIs from their own Secrets, one migration Secret
      Deployment blue =
          Fixtures.deployment()
              .name("blue")
              .env(secretEnv("OPENFGA_DATASTORE_URI", "blue-db", "uri"))
              .annotation(Keys.MIGRATION_SECRET, "openfga-migration")
              .build();
      Deployment green =
          Fixtures.deployment()
              .name("green")
              .env(secretEnv("OPENFGA_DATASTORE_URI", "green-db", "uri"))
              .annotation(Keys.MIGRATION_SECRET, "openfga-migration")
              .build();
      Job blueJob = runningJob(blue);

      assertThat(Database.keysOf(blueJob)).hasSize(2).first().isEqualTo(label(blueJob));
      assertThat(planner.plan(observe(green).withDatabaseJobs(List.of(blueJob))).state())
          .isEqualTo(State.WAITING);
    }

    @Test
    void aFailedJobWhosePodStillEndsHoldsTheDatabase() {
      // before Kubernetes 1.31 Failed (DeadlineExceeded) can come while the pod terminates
      Deployment a = named("a", "postgres://u:p@db:5432/fga");
      Deployment b = named("b", "postgres://u:p@db:5432/fga");
      Job ending = Fixtures.job(a, "v1.14.0").failed(NOW.minusSeconds(1)).build();
      ending.getStatus().setTerminating(1);

      assertThat(planner.plan(observe(b).withDatabaseJobs(List.of(ending))).state())
          .isEqualTo(State.WAITING);
    }

    @Test
    void aFinishedJobsPodThatHasNotStoppedHoldsTheDatabase() {
      // Failed at its deadline, no terminating count (before Kubernetes 1.29, or without the
      // JobPodReplacementPolicy gate): only the pod cache tells that the pod still ends
      Deployment a = named("a", "postgres://u:p@db:5432/fga");
      Deployment b = named("b", "postgres://u:p@db:5432/fga");
      Job failed = Fixtures.job(a, "v1.14.0").failed(NOW.minusSeconds(1)).build();
      failed.getStatus().setActive(0);
      failed.getStatus().setTerminating(null);
      Pod ending = Fixtures.migrationPod(failed, "Running");

      Plan plan =
          planner.plan(
              observe(b).withDatabaseJobs(List.of(failed)).withDatabasePods(List.of(ending)));

      assertThat(plan.state()).isEqualTo(State.WAITING);
      assertThat(plan.summary()).contains(ending.getMetadata().getName());
    }

    @Test
    void anotherNamespacesDeploymentIsNotNamedInTheEvent() {
      Deployment a = inNamespace("a", "team-a");
      Deployment b = inNamespace("b", "team-b");

      Plan plan = planner.plan(observe(b).withDatabaseJobs(List.of(runningJob(a))));

      assertThat(plan.state()).isEqualTo(State.WAITING);
      assertThat(all(plan, Emit.class))
          .singleElement()
          .satisfies(
              e ->
                  assertThat(e.message())
                      .contains("a migration in another namespace")
                      .doesNotContain("team-a"));
    }

    /** The pod of a Job whose Job the operator no longer sees (deleted), in {@code phase}. */
    private Pod podOf(Job job, String phase) {
      Pod pod = Fixtures.migrationPod(job, phase);
      pod.getMetadata().setOwnerReferences(List.of()); // orphaned, or its Job gone
      return pod;
    }

    @Test
    void theMigrationPodCarriesTheJobsDatabaseKeys() {
      Deployment a = named("a", "postgres://u:p@db:5432/fga");
      Job job = runningJob(a);
      Job withSecret =
          runningJob(
              Fixtures.deployment()
                  .name("blue")
                  .env(secretEnv("OPENFGA_DATASTORE_URI", "blue-db", "uri"))
                  .annotation(Keys.MIGRATION_SECRET, "openfga-migration")
                  .build());

      assertThat(job.getSpec().getTemplate().getMetadata().getLabels())
          .containsEntry(Keys.DATABASE_LABEL, label(job));
      assertThat(Database.keysOf(podOf(job, "Running"))).isEqualTo(Database.keysOf(job));
      assertThat(Database.keysOf(podOf(withSecret, "Running")))
          .hasSize(2)
          .isEqualTo(Database.keysOf(withSecret));
    }

    @Test
    void aPodWhoseJobWasDeletedHoldsTheDatabaseUntilItHasStopped() {
      // kubectl delete job (background or orphan cascade), or the garbage collector after its
      // Deployment: the Job is gone at once, its pod still runs openfga migrate
      Deployment a = named("a", "postgres://u:p@db:5432/fga");
      Deployment b = named("b", "postgres://u:p@db:5432/fga");
      Job gone = runningJob(a);

      for (String phase : new String[] {"Pending", "Running", "Unknown", null}) {
        Plan plan = planner.plan(observe(b).withDatabasePods(List.of(podOf(gone, phase))));
        assertThat(plan.state()).as("pod %s", phase).isEqualTo(State.WAITING);
        assertThat(all(plan, CreateJob.class)).isEmpty();
        assertThat(plan.summary())
            .contains("migration pod default/a-migrate-x7k2p (Job a-migrate)", "to stop");
        assertThat(all(plan, Emit.class))
            .singleElement()
            .satisfies(
                e -> {
                  assertThat(e.reason()).isEqualTo(EventReason.MigrationWaiting);
                  assertThat(e.message())
                      .contains("default/a-migrate-x7k2p", "same database", "has not stopped");
                });
        assertThat(plan.next()).isEqualTo(new Plan.Next.After(Timing.WHILE_WAITING));
      }
      for (String phase : List.of("Succeeded", "Failed")) {
        Plan plan = planner.plan(observe(b).withDatabasePods(List.of(podOf(gone, phase))));
        assertThat(plan.state()).as("pod %s", phase).isEqualTo(State.MIGRATING);
        assertThat(all(plan, CreateJob.class)).hasSize(1);
      }
    }

    @Test
    void itsOwnOldPodHoldsTheDatabaseToo() {
      // its own Job deleted while it ran: the new Job (same name) waits for the old pod
      Deployment a = named("a", "postgres://u:p@db:5432/fga");
      Pod old = podOf(runningJob(a), "Running");

      assertThat(planner.plan(observe(a).withDatabasePods(List.of(old))).state())
          .isEqualTo(State.WAITING);
    }

    @Test
    void aPodOfAJobItSeesIsLeftToThatJobsStatus() {
      // this process's own new Job, not cached yet, whose pod the pod cache already shows: the
      // Job is remembered, and its pod is not mistaken for one left behind
      Deployment a = named("a", "postgres://u:p@db:5432/fga");
      Job created = runningJob(a);
      Pod itsPod = Fixtures.migrationPod(created, "Running");

      Plan plan =
          planner.plan(
              observe(a).withDatabaseJobs(List.of(created)).withDatabasePods(List.of(itsPod)));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      assertThat(all(plan, Emit.class)).noneMatch(e -> e.reason() == EventReason.MigrationWaiting);
      // another Deployment waits for the Job, not for its pod
      Plan other =
          planner.plan(
              observe(named("b", "postgres://u:p@db:5432/fga"))
                  .withDatabaseJobs(List.of(created))
                  .withDatabasePods(List.of(itsPod)));
      assertThat(other.summary()).contains("Deployment default/a");
    }

    @Test
    void aPodOnAnotherDatabaseDoesNotCountAndAJobOutranksAPodInTheMessage() {
      Deployment a = named("a", "postgres://u:p@db:5432/fga");
      Deployment b = named("b", "postgres://u:p@db:5432/fga");
      Deployment other = named("other", "postgres://u:p@elsewhere:5432/fga");

      assertThat(
              planner
                  .plan(observe(b).withDatabasePods(List.of(podOf(runningJob(other), "Running"))))
                  .state())
          .isEqualTo(State.MIGRATING);
      Plan both =
          planner.plan(
              observe(b)
                  .withDatabaseJobs(List.of(runningJob(a)))
                  .withDatabasePods(List.of(podOf(runningJob(a), "Running"))));
      assertThat(both.summary()).contains("Deployment default/a");
    }

    @Test
    void anotherNamespacesPodIsNotNamedInTheEvent() {
      Deployment a = inNamespace("a", "team-a");
      Deployment b = inNamespace("b", "team-b");

      Plan plan =
          planner.plan(observe(b).withDatabasePods(List.of(podOf(runningJob(a), "Running"))));

      assertThat(plan.state()).isEqualTo(State.WAITING);
      assertThat(all(plan, Emit.class))
          .singleElement()
          .satisfies(
              e ->
                  assertThat(e.message())
                      .contains("a migration pod in another namespace")
                      .doesNotContain("team-a"));
    }

    @Test
    void sharesTheDatabaseWhenTheUriComesFromTheSameSecretKey() {
      Deployment a =
          Fixtures.deployment()
              .name("a")
              .env(secretEnv("OPENFGA_DATASTORE_URI", "shared-db", "uri"))
              .build();
      Deployment b =
          Fixtures.deployment()
              .name("b")
              .env(secretEnv("OPENFGA_DATASTORE_URI", "shared-db", "uri"))
              .build();

      Plan plan = planner.plan(observe(b).withDatabaseJobs(List.of(runningJob(a))));

      assertThat(plan.state()).isEqualTo(State.WAITING);
    }
  }

  @Nested
  class DatabaseKey {

    @ParameterizedTest
    @CsvSource(
        delimiter = '|',
        value = {
          "postgres://user:p%40ss@db:5432/fga?sslmode=disable | postgres://db:5432/fga",
          "postgres://db:5432/fga                            | postgres://db:5432/fga",
          "user:password@tcp(db:3306)/fga?parseTime=true     | tcp(db:3306)/fga",
          "host=db dbname=fga user=u password='a b'          | host=db dbname=fga",
          "u:p?x@tcp(db:3306)/fga                            | tcp(db:3306)/fga",
          "postgres://u:p@db?sslmode=require                 | postgres://db",
          "postgres://u:Xk9v/Q2+abc@db:5432/fga              | postgres://db:5432/fga",
          "postgres://u:a#b?c@db:5432/fga                    | postgres://db:5432/fga",
          "postgres://u:p@db/fga?user=sa@proj.iam            | postgres://db/fga",
          "postgres://db:5432/fga?application_name=a@b       | postgres://db:5432/fga",
          "postgres://u:2024#Summer!@db:5432/fga             | postgres://db:5432/fga",
          "postgres://u:1234/abc@db:5432/fga                 | postgres://db:5432/fga",
          "postgres://u:?abc@db:5432/fga                     | postgres://db:5432/fga",
          "postgres://a:5432,b:5432/fga?user=sa@proj.iam     | postgres://a:5432,b:5432/fga",
          "postgres://[::1]:5432/fga?user=sa@proj.iam        | postgres://[::1]:5432/fga",
          "postgres://u:P@ss:w0rd#1@host:5432/db             | postgres://host:5432/db",
          "postgres://u:ab@cd#ef@host:5432/db                | postgres://host:5432/db",
          "postgres://u:pa/ss@host:5432/db?user=sa@proj.iam  | postgres://host:5432/db",
          "postgres://openfga@srv:Pa/ss@srv.example:5432/fga | postgres://srv.example:5432/fga",
        })
    void dropsCredentialsAndTheQuery(String uri, String kept) {
      assertThat(Database.withoutCredentials(uri)).isEqualTo(kept);
    }

    @Test
    void hasNoKeyWithoutAUri() {
      Container c = new ContainerBuilder().withName("openfga").withEnv(env("X", "y")).build();

      assertThat(Database.key("default", c)).isEmpty();
    }

    @Test
    void theSameSecretNameInAnotherNamespaceIsAnotherDatabase() {
      Container c =
          new ContainerBuilder()
              .withName("openfga")
              .withEnv(secretEnv("OPENFGA_DATASTORE_URI", "db", "uri"))
              .build();

      assertThat(Database.key("a", c)).isNotEqualTo(Database.key("b", c));
    }
  }

  @Nested
  class ProxiesAndMeshes {

    private final Container proxy =
        new ContainerBuilder()
            .withName("cloud-sql-proxy")
            .withImage("gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.0")
            .withArgs("--port=5432", "project:region:instance")
            .withVolumeMounts(
                new VolumeMountBuilder().withName("sa-key").withMountPath("/secrets").build())
            .withNewStartupProbe()
            .withNewTcpSocket()
            .withNewPort(5432)
            .endTcpSocket()
            .endStartupProbe()
            .withNewReadinessProbe()
            .withNewHttpGet()
            .withPath("/readiness")
            .withNewPort(9090)
            .endHttpGet()
            .endReadinessProbe()
            .build();

    private Deployment withProxy(String annotation) {
      Deployment d =
          Fixtures.deployment()
              .containers(
                  Fixtures.deployment()
                      .build()
                      .getSpec()
                      .getTemplate()
                      .getSpec()
                      .getContainers()
                      .get(0),
                  proxy)
              .annotation(Keys.MIGRATION_SIDECARS, annotation)
              .build();
      d.getSpec()
          .getTemplate()
          .getSpec()
          .setVolumes(
              List.of(
                  new VolumeBuilder()
                      .withName("sa-key")
                      .withNewSecret()
                      .withSecretName("sa")
                      .endSecret()
                      .build(),
                  new VolumeBuilder().withName("unused").withNewEmptyDir().endEmptyDir().build()));
      return d;
    }

    @Test
    void copiesTheProxyAsANativeSidecarWithItsVolumes() {
      Job job = created(planner.plan(observe(withProxy("cloud-sql-proxy"))));

      assertThat(pod(job).getInitContainers())
          .singleElement()
          .satisfies(
              c -> {
                assertThat(c.getName()).isEqualTo("cloud-sql-proxy");
                assertThat(c.getRestartPolicy()).isEqualTo("Always");
                assertThat(c.getArgs()).containsExactly("--port=5432", "project:region:instance");
                assertThat(c.getImage()).isEqualTo(proxy.getImage());
                // migrate starts once the proxy has started; the proxy's readiness would only
                // hold the pod's Ready, by which a running migration is told from one that is
                // not (and never interrupted)
                assertThat(c.getStartupProbe()).isEqualTo(proxy.getStartupProbe());
                assertThat(c.getReadinessProbe()).isNull();
              });
      assertThat(pod(job).getVolumes()).extracting(v -> v.getName()).containsExactly("sa-key");
      assertThat(pod(job).getContainers()).singleElement();
      assertThat(proxy.getRestartPolicy()).as("the Deployment's container is untouched").isNull();
    }

    @Test
    void blocksWhenANamedSidecarIsMissing() {
      Plan plan = planner.plan(observe(withProxy("cloud-sql-proxy, pgbouncer")));

      assertThat(plan.state()).isEqualTo(State.BLOCKED);
      assertThat(all(plan, CreateJob.class)).isEmpty();
      assertThat(all(plan, Emit.class))
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.reason()).isEqualTo(EventReason.ContainerNotFound);
                assertThat(e.message()).contains("pgbouncer", Keys.MIGRATION_SIDECARS);
              });
    }

    @ParameterizedTest
    @ValueSource(strings = {"cloud-sql-proxy,,pgbouncer", "Cloud-SQL-Proxy", "cloud-sql-proxy,"})
    void aMalformedListBlocksTheJobInsteadOfRunningItWithoutTheProxies(String value) {
      Plan plan = planner.plan(observe(withProxy(value)));

      // SPEC section 10: never a Job without the proxies it was asked for
      assertThat(all(plan, CreateJob.class)).isEmpty();
      assertThat(plan.state()).isEqualTo(Plan.State.BLOCKED);
      assertThat(plan.next()).isInstanceOf(Plan.Next.Blocked.class);
      assertThat(plan.summary())
          .contains("default/openfga", Keys.MIGRATION_SIDECARS + "=\"" + value + "\"");
      assertThat(all(plan, Emit.class))
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.reason()).isEqualTo(EventReason.InvalidConfiguration);
                assertThat(e.message())
                    .contains(Keys.MIGRATION_SIDECARS + "=\"" + value + "\"")
                    .contains("comma-separated list of container names");
              });
    }

    @Test
    void optsTheJobPodOutOfMeshInjectionByDefault() {
      Job job = created(planner.plan(observe(Fixtures.deployment().build())));

      assertThat(job.getSpec().getTemplate().getMetadata().getAnnotations())
          .isEqualTo(Map.of(Keys.ISTIO_INJECT, "false", Keys.LINKERD_INJECT, "disabled"));
    }

    @Test
    void aRunningMigrationWhosePodAMeshProxyKeepsFromReadyIsNotInterrupted() {
      // migration-mesh "true": the injected proxy keeps its readiness probe, and while it is not
      // ready the Job counts no ready pod although migrate runs
      Deployment d = Fixtures.deployment().annotation(Keys.MIGRATION_MESH, "true").build();
      Job older = Fixtures.job(d, "v1.13.0").podNeverStarted().build();
      Observation seen = observe(d, record(d, "v1.12.0", null), older, NOW);

      Plan running =
          planner.plan(seen.withDatabasePods(List.of(Fixtures.migrationPod(older, "Running"))));
      Plan pending =
          planner.plan(seen.withDatabasePods(List.of(Fixtures.migrationPod(older, "Pending"))));

      assertThat(running.summary()).contains("letting the running migration to v1.13.0 finish");
      assertThat(all(running, DeleteJob.class)).isEmpty();
      // a pod not started yet is replaced as before
      assertThat(all(pending, DeleteJob.class)).hasSize(1);
      // and a Complete Job's migrate has exited, whatever its pod on a lost node still shows
      Job complete = Fixtures.job(d, "v1.13.0").complete(NOW.minusSeconds(5)).build();
      Plan done =
          planner.plan(
              observe(d, record(d, "v1.12.0", null), complete, NOW)
                  .withDatabasePods(List.of(Fixtures.migrationPod(complete, "Running"))));
      assertThat(done.summary()).doesNotContain("letting the running migration");
    }

    @Test
    void withMeshTrueKeepsOnlyThePodTemplatesMeshAnnotations() {
      Deployment d = Fixtures.deployment().annotation(Keys.MIGRATION_MESH, "true").build();
      d.getSpec()
          .getTemplate()
          .getMetadata()
          .setAnnotations(
              Map.of(
                  "proxy.istio.io/config",
                  "{ holdApplicationUntilProxyStarts: true }",
                  "prometheus.io/scrape",
                  "true"));

      Job job = created(planner.plan(observe(d)));

      assertThat(job.getSpec().getTemplate().getMetadata().getAnnotations())
          .containsOnlyKeys("proxy.istio.io/config");
    }
  }

  @Nested
  class ReRunOnDemand {

    private static final String REQUEST = "2026-01-01T00:00:00Z";

    private Deployment requested(String at) {
      return Fixtures.deployment().annotation(Keys.MIGRATE_REQUESTED_AT, at).build();
    }

    @Test
    void aNewRequestRunsOneJobForTheCurrentVersionCarryingTheRequest() {
      Deployment d = requested(REQUEST);

      Plan plan = planner.plan(observe(d, record(d, "v1.14.0", null), null, NOW));

      assertThat(plan.state()).isEqualTo(State.MIGRATING);
      Job job = created(plan);
      assertThat(job.getMetadata().getAnnotations())
          .containsEntry(Keys.MIGRATE_REQUESTED_AT, REQUEST)
          .containsEntry(Keys.DESIRED_VERSION, "v1.14.0");
      assertThat(all(plan, Emit.class).get(0).message()).contains("re-run requested at " + REQUEST);
    }

    @Test
    void itsCompletionRecordsTheRequestAsHandled() {
      Deployment d = requested(REQUEST);
      Job done =
          Fixtures.job(d, "v1.14.0")
              .annotation(Keys.MIGRATE_REQUESTED_AT, REQUEST)
              .complete(NOW.minusSeconds(2))
              .build();

      Plan plan = planner.plan(observe(d, record(d, "v1.14.0", null), done, NOW));

      assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
      assertThat(all(plan, WriteStatus.class))
          .singleElement()
          .satisfies(w -> assertThat(w.data()).containsEntry(Keys.DATA_HANDLED_REQUEST, REQUEST));
    }

    @Test
    void aHandledRequestRunsNothing() {
      Deployment d = requested(REQUEST);

      Plan plan = planner.plan(observe(d, record(d, "v1.14.0", REQUEST), null, NOW));

      assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
      assertThat(plan.steps()).isEmpty();
    }

    @Test
    void anOlderRequestThanTheHandledOneRunsNothing() {
      Deployment d = requested("2025-06-01T00:00:00Z");

      assertThat(planner.plan(observe(d, record(d, "v1.14.0", REQUEST), null, NOW)).state())
          .isEqualTo(State.UP_TO_DATE);
    }

    @Test
    void aRequestDuringARunningMigrationWaitsForItThenRunsOnce() {
      Deployment d = requested(REQUEST);
      Job running = Fixtures.job(d, "v1.14.0").running().build();

      Plan whileRunning = planner.plan(observe(d, record(d, "v1.13.0", null), running, NOW));

      assertThat(whileRunning.state()).isEqualTo(State.MIGRATING);
      assertThat(whileRunning.steps()).isEmpty();

      // the running Job (no request) completes: its upgrade is recorded, the request is not
      Job complete = Fixtures.job(d, "v1.14.0").complete(NOW).build();
      Plan recorded = planner.plan(observe(d, record(d, "v1.13.0", null), complete, NOW));
      WriteStatus write = all(recorded, WriteStatus.class).get(0);
      assertThat(write.data())
          .containsEntry(Keys.DATA_VERSION, "v1.14.0")
          .doesNotContainKey(Keys.DATA_HANDLED_REQUEST);

      // then that Job is replaced by exactly one for the request
      Plan replace = planner.plan(observe(d, record(d, "v1.14.0", null), complete, NOW));
      assertThat(replace.steps()).singleElement().isInstanceOf(DeleteJob.class);
      Plan create = planner.plan(observe(d, record(d, "v1.14.0", null), null, NOW));
      assertThat(created(create).getMetadata().getAnnotations())
          .containsEntry(Keys.MIGRATE_REQUESTED_AT, REQUEST);
    }

    @Test
    void anUpgradeKeepsTheHandledRequestInTheRecord() {
      Deployment d = Fixtures.deployment().version("v1.15.0").build();
      Job complete = Fixtures.job(d, "v1.15.0").complete(NOW).build();

      Plan plan = planner.plan(observe(d, record(d, "v1.14.0", REQUEST), complete, NOW));

      assertThat(all(plan, WriteStatus.class).get(0).data())
          .containsEntry(Keys.DATA_VERSION, "v1.15.0")
          .containsEntry(Keys.DATA_HANDLED_REQUEST, REQUEST);
    }

    @Test
    void aRequestDoesNotBypassTheRetryCooldown() {
      Deployment d =
          Fixtures.deployment()
              .annotation(Keys.MIGRATE_REQUESTED_AT, REQUEST)
              .retryAfter(NOW.plus(Duration.ofSeconds(30)))
              .build();

      Plan plan = planner.plan(observe(d, record(d, "v1.14.0", null), null, NOW));

      assertThat(plan.state()).isEqualTo(State.COOLDOWN);
    }

    @Test
    void aRequestInTheFutureWaitsForItsTimeAndSaysSo() {
      Deployment d = requested("2026-01-01T01:00:00Z");

      Plan early = planner.plan(observe(d, record(d, "v1.14.0", null), null, NOW));
      Plan onTime =
          planner.plan(
              observe(d, record(d, "v1.14.0", null), null, NOW.plus(Duration.ofMinutes(58))));

      assertThat(early.state()).isEqualTo(State.UP_TO_DATE);
      // looked at again when its time has come (minus the clock skew)
      assertThat(early.next()).isEqualTo(new Plan.Next.After(Duration.ofMinutes(55)));
      assertThat(all(early, Emit.class))
          .singleElement()
          .satisfies(e -> assertThat(e.message()).contains(Keys.MIGRATE_REQUESTED_AT, "future"));
      assertThat(onTime.state()).isEqualTo(State.MIGRATING);
    }

    @Test
    void anUnparseableRequestIsReportedAndIgnored() {
      Deployment d = requested("yesterday");

      Plan plan = planner.plan(observe(d, record(d, "v1.14.0", null), null, NOW));

      assertThat(plan.state()).isEqualTo(State.UP_TO_DATE);
      assertThat(all(plan, Emit.class))
          .singleElement()
          .satisfies(e -> assertThat(e.message()).contains(Keys.MIGRATE_REQUESTED_AT));
    }

    @Test
    void aRequestDuringARollbackWaitsForAVersionThatIsNotOne() {
      Deployment d =
          Fixtures.deployment()
              .version("v1.8.16")
              .annotation(Keys.MIGRATE_REQUESTED_AT, REQUEST)
              .build();

      Plan plan = planner.plan(observe(d, record(d, "v1.10.0", null), null, NOW));

      assertThat(plan.state()).isEqualTo(State.DOWNGRADED);
      assertThat(all(plan, CreateJob.class)).isEmpty();
    }
  }

  @Test
  void theJobBuilderTakesTheRequestItIsGiven() {
    Deployment d = Fixtures.deployment().build();
    Container c = d.getSpec().getTemplate().getSpec().getContainers().get(0);

    Job job =
        MigrationJob.build(
            d, c, "v1.14.0", DeploymentSettings.of(d), Optional.of("x"), Policy.DEFAULTS.jobSpec());

    assertThat(MigrationJob.request(job)).contains("x");
    assertThat(
            MigrationJob.request(
                new JobBuilder(job).editMetadata().withAnnotations(Map.of()).endMetadata().build()))
        .isEmpty();
  }
}
