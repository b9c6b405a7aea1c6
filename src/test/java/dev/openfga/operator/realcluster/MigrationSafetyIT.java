package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.migration.rules.Keys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC section 9 on the real cluster, with the real {@code openfga migrate} and PostgreSQL: split
 * credentials, one migration per database (across an operator restart, and while a pod whose Job
 * was deleted by someone else, or by the garbage collector, still runs), a database proxy as a
 * native sidecar, a rollback (its Warning not sent again by a restarted operator), and re-runs on
 * demand; and a sqlite first install scaled once its migrate initContainer is added (ADR 0004). One
 * operator under the chart's RBAC.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MigrationSafetyIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  private static final String VALUES =
      """
      leaderElection: {enabled: false}
      retryCooldown: 5s
      migrationJob: {backoffLimit: 0, ttlSecondsAfterFinished: 5}
      """;

  private static final Duration MIGRATED = Duration.ofMinutes(2);

  private static OperatorInstall install;
  private static OperatorInstall.OperatorProcess operator;

  @BeforeAll
  static void installOperator() {
    install = cluster.installOperator(cluster.namespace(), VALUES);
    operator = cluster.startOperator(install, "operator-0");
  }

  private static String ns() {
    return cluster.namespace();
  }

  /** The data of the status record, read once (empty while there is none). */
  private static Map<String, String> data(OpenFgaView view) {
    ConfigMap record = view.statusConfigMap();
    return record == null || record.getData() == null ? Map.of() : record.getData();
  }

  private static List<TestKubelet.Run> runs(OpenFgaView... views) {
    List<TestKubelet.Run> runs = new ArrayList<>();
    for (OpenFgaView view : views) {
      runs.addAll(cluster.kubelet().migrateRuns(ns(), view.jobName()));
    }
    runs.sort(Comparator.comparing(TestKubelet.Run::started));
    return runs;
  }

  /**
   * Two Deployments of {@code OLD_OPENFGA} on the one database (the same literal URI), once both
   * have migrated it.
   */
  private static List<OpenFgaView> installedOnOneDatabase(
      Postgres.Database db, String first, String second) {
    List<OpenFgaView> views = new ArrayList<>();
    for (String name : List.of(first, second)) {
      views.add(
          cluster.deploy(
              UpstreamOpenFga.fixture(ns(), name, Binaries.OLD_OPENFGA, 0, 1)
                  .envVar(Keys.URI_ENV, db.ownerUri()),
              db.ownerUri()));
    }
    await()
        .atMost(MIGRATED)
        .untilAsserted(
            () ->
                assertThat(views)
                    .allSatisfy(
                        v -> assertThat(v.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA)));
    return views;
  }

  /**
   * Every view records {@code NEW_OPENFGA}, the schema is at its revision, and the {@code runs}
   * migrate processes of their Jobs ran one at a time.
   */
  private static void assertAllMigratedOneAtATime(
      Postgres.Database db, int runs, OpenFgaView... views) {
    await()
        .atMost(MIGRATED)
        .untilAsserted(
            () ->
                assertThat(views)
                    .allSatisfy(
                        v -> assertThat(v.recordedVersion()).isEqualTo(Binaries.NEW_OPENFGA)));
    assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(6);
    List<TestKubelet.Run> all = runs(views);
    assertThat(all).hasSize(runs);
    assertOneAtATime(all);
  }

  /** No two migrate processes overlapped: each ended before the next one started. */
  private static void assertOneAtATime(List<TestKubelet.Run> runs) {
    for (int i = 1; i < runs.size(); i++) {
      TestKubelet.Run before = runs.get(i - 1);
      assertThat(before.ended()).as("%s ended before %s started", before, runs.get(i)).isNotNull();
      assertThat(before.ended()).as("%s", runs).isBeforeOrEqualTo(runs.get(i).started());
    }
  }

  @Test
  @Order(1)
  void theRuntimeUserCannotMigrateTheMigrationSecretsOwnerCanAndTheServerKeepsItsOwn() {
    Postgres postgres = cluster.postgres();
    // without a migration Secret the Job uses the runtime user, who has no DDL rights
    Postgres.Database plainDb = postgres.createDatabase("creds_plain");
    OpenFgaView plain =
        cluster.deploy(
            UpstreamOpenFga.fixture(ns(), "creds-plain", Binaries.OLD_OPENFGA, 0, 1),
            plainDb.uri(plainDb.runtimeUser()));
    await()
        .atMost(MIGRATED)
        .untilAsserted(
            () ->
                assertThat(plain.condition("MigrationFailed"))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getStatus()).isEqualTo("True");
                          assertThat(c.getMessage()).contains("permission denied");
                        }));
    assertThat(postgres.schemaRevision(plainDb)).isZero();
    cluster.client().apps().deployments().inNamespace(ns()).withName("creds-plain").delete();

    // with one, the Job takes the owner's URI from it; the server keeps the runtime user
    Postgres.Database db = postgres.createDatabase("creds_split");
    cluster
        .client()
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("creds-split-migration")
                .withNamespace(ns())
                .endMetadata()
                .withStringData(Map.of("uri", db.ownerUri()))
                .build())
        .create();
    OpenFgaView split =
        cluster.deploy(
            UpstreamOpenFga.fixture(ns(), "creds-split", Binaries.OLD_OPENFGA, 0, 1)
                .annotation(Keys.MIGRATION_SECRET, "creds-split-migration"),
            db.uri(db.runtimeUser()));
    // the Job, read as soon as its run is recorded: its 5 s TTL may delete it soon after
    Job job =
        await()
            .atMost(MIGRATED)
            .until(() -> split.jobOnceRecorded(Binaries.OLD_OPENFGA), Objects::nonNull);
    assertThat(postgres.schemaRevision(db)).isEqualTo(5);
    Deployment deployment = split.deployment();
    assertThat(OpenFgaView.condition(deployment, "MigrationFailed")).isEmpty();

    List<EnvVar> env = job.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv();
    assertThat(env)
        .filteredOn(e -> e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null)
        .filteredOn(
            e -> "creds-split-migration".equals(e.getValueFrom().getSecretKeyRef().getName()))
        .extracting(EnvVar::getName)
        .containsExactly(Keys.URI_ENV, Keys.USERNAME_ENV, Keys.PASSWORD_ENV);
    // nothing of the Secret was copied: the Job only points at it
    assertThat(Serialization.asJson(job)).doesNotContain(db.ownerUri(), db.owner());
    // the server pods keep their own credentials (the runtime user's Secret)
    List<EnvVar> serverEnv =
        deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv();
    assertThat(serverEnv)
        .filteredOn(e -> Keys.URI_ENV.equals(e.getName()))
        .singleElement()
        .satisfies(
            e ->
                assertThat(e.getValueFrom().getSecretKeyRef().getName())
                    .isEqualTo("creds-split-datastore"));
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(split.replicas()).isEqualTo(1));
  }

  @Test
  @Order(2)
  void twoDeploymentsOnOneDatabaseMigrateOneAfterTheOtherAlsoAcrossAnOperatorRestart() {
    Postgres postgres = cluster.postgres();
    Postgres.Database db = postgres.createDatabase("shared");
    // both take the same literal URI: the same database
    List<OpenFgaView> installed = installedOnOneDatabase(db, "shared-a", "shared-b");
    OpenFgaView a = installed.get(0);
    OpenFgaView b = installed.get(1);
    List<TestKubelet.Run> installs = runs(a, b);
    assertThat(installs).hasSize(2);
    assertOneAtATime(installs);

    // migration 006 of v1.10.0 changes the indexes of "tuple": the first Job waits for the lock
    OpenFgaView first;
    OpenFgaView second;
    try (Postgres.Lock lock = postgres.lockTable(db, "tuple")) {
      a.setVersion(Binaries.NEW_OPENFGA);
      b.setVersion(Binaries.NEW_OPENFGA);
      // the one whose Job runs, as the wait saw it (each Job read once per look)
      first =
          await()
              .atMost(Duration.ofMinutes(1))
              .until(
                  () ->
                      a.migrating(Binaries.NEW_OPENFGA)
                          ? a
                          : b.migrating(Binaries.NEW_OPENFGA) ? b : null,
                  Objects::nonNull);
      second = first == a ? b : a;
      OpenFgaView waiting = second;
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  // (the first install may have waited too)
                  assertThat(waiting.events("MigrationWaiting"))
                      .filteredOn(
                          e ->
                              e.getMessage()
                                  .contains("the migration to " + Binaries.NEW_OPENFGA + " "))
                      .singleElement()
                      .satisfies(
                          e -> {
                            assertThat(e.getType()).isEqualTo("Normal");
                            assertThat(e.getMessage())
                                .contains(
                                    "Deployment " + ns() + "/" + first.name(), "same database");
                          }));
      assertThat(OperatorInstall.status(cluster.plane(), "-n", ns()))
          .contains("waiting for Deployment " + ns() + "/" + first.name());

      // a restart in the middle: the new operator reads the rule from the Jobs themselves
      operator.kill();
      operator = cluster.startOperator(install, "operator-1");
      // a negative assertion: time enough to do something wrong
      ControlPlane.sleep(Duration.ofSeconds(4));
      assertThat(waiting.job()).isNull();
      assertThat(runs(a, b)).filteredOn(r -> r.ended() == null).hasSize(1);
    }
    assertAllMigratedOneAtATime(db, 4, a, b);
    assertThat(second.events("MigrationSucceeded")).hasSize(2);
  }

  @Test
  @Order(3)
  void aDatabaseProxyRunsAsANativeSidecarAndTheJobCompletesWhenMigrateExits() {
    Postgres postgres = cluster.postgres();
    Postgres.Database db = postgres.createDatabase("proxy");
    int proxyPort = ControlPlane.freePort();
    Container proxy =
        new ContainerBuilder()
            .withName("db-proxy")
            .withImage("openfga-operator-test/tcp-proxy:1")
            .withArgs("--listen=127.0.0.1:" + proxyPort, "--target=127.0.0.1:" + postgres.port())
            .build();
    // OpenFGA reaches PostgreSQL only through the proxy
    String throughProxy = db.ownerUri().replace(":" + postgres.port() + "/", ":" + proxyPort + "/");
    OpenFgaView openfga =
        cluster.deploy(
            UpstreamOpenFga.fixture(ns(), "proxied", Binaries.OLD_OPENFGA, 0, 1)
                .container(proxy)
                .annotation(Keys.MIGRATION_SIDECARS, "db-proxy"),
            throughProxy);
    // the Job, read as soon as its run is recorded: its 5 s TTL may delete it soon after
    Job job =
        await()
            .atMost(MIGRATED)
            .until(() -> openfga.jobOnceRecorded(Binaries.OLD_OPENFGA), Objects::nonNull);
    assertThat(postgres.schemaRevision(db)).isEqualTo(5);

    var pod = job.getSpec().getTemplate();
    assertThat(pod.getSpec().getInitContainers())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getName()).isEqualTo("db-proxy");
              assertThat(c.getRestartPolicy()).isEqualTo("Always");
            });
    // the real Job controller completed the Job: the sidecar does not hold it open
    assertThat(job.getStatus().getConditions())
        .anySatisfy(
            c -> {
              assertThat(c.getType()).isEqualTo("Complete");
              assertThat(c.getStatus()).isEqualTo("True");
            });
    assertThat(cluster.kubelet().sidecarLogs(ns(), openfga.jobName()))
        .contains("accepted connection 1");
    assertThat(pod.getMetadata().getAnnotations())
        .containsEntry("sidecar.istio.io/inject", "false")
        .containsEntry("linkerd.io/inject", "disabled");
  }

  @Test
  @Order(4)
  void aRollbackRunsNoJobKeepsTheNewerRecordAndSaysSo() {
    Postgres.Database db = cluster.postgres().createDatabase("rollback");
    OpenFgaView openfga =
        cluster.deploy(
            UpstreamOpenFga.fixture(ns(), "rollback", Binaries.NEW_OPENFGA, 0, 1), db.ownerUri());
    await()
        .atMost(MIGRATED)
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.NEW_OPENFGA));

    openfga.setVersion(Binaries.OLD_OPENFGA);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(openfga.events("MigrationDowngrade"))
                    .singleElement()
                    .satisfies(
                        e -> {
                          assertThat(e.getType()).isEqualTo("Warning");
                          assertThat(e.getMessage())
                              .contains(Binaries.OLD_OPENFGA, "stays at " + Binaries.NEW_OPENFGA);
                        }));
    // a negative assertion: time enough to run a Job or change the record
    ControlPlane.sleep(Duration.ofSeconds(3));
    assertThat(openfga.recordedVersion()).isEqualTo(Binaries.NEW_OPENFGA);
    assertThat(cluster.kubelet().migrateRuns(ns(), openfga.jobName())).hasSize(1);
    assertThat(openfga.condition("MigrationFailed")).isEmpty();
    assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(6);
    assertThat(OperatorInstall.status(cluster.plane(), "-n", ns()))
        .contains("rolled back, schema stays at " + Binaries.NEW_OPENFGA);

    // SPEC sections 5 and 8: the Warning is listed on the Deployment, so a restarted operator
    // does not send it again (deleted here, as the Event's TTL would)
    Event downgrade = openfga.events("MigrationDowngrade").get(0);
    assertThat(downgrade.getMetadata().getName())
        .isEqualTo(openfga.name() + "." + openfga.annotation(Keys.REPORTED_EVENTS));
    operator.kill();
    cluster.client().resource(downgrade).delete();
    operator = cluster.startOperator(install, "operator-rollback");
    // a new problem: the restarted operator's look at the Deployment shows in the list
    openfga.annotate(Keys.DESIRED_REPLICAS, "lots");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(openfga.annotation(Keys.REPORTED_EVENTS)).contains(","));
    assertThat(openfga.events("InvalidConfiguration")).hasSize(1);
    assertThat(openfga.events("MigrationDowngrade")).isEmpty();
  }

  @Test
  @Order(5)
  void aReRunRequestRunsExactlyOneMoreMigrationAndOneMadeDuringAMigrationWaitsForIt() {
    Postgres postgres = cluster.postgres();
    Postgres.Database db = postgres.createDatabase("rerun");
    OpenFgaView openfga =
        cluster.deploy(
            UpstreamOpenFga.fixture(ns(), "rerun", Binaries.OLD_OPENFGA, 0, 1), db.ownerUri());
    await()
        .atMost(MIGRATED)
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA));

    String first = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    openfga.annotate(Keys.MIGRATE_REQUESTED_AT, first);
    await()
        .atMost(MIGRATED)
        .untilAsserted(
            () -> assertThat(data(openfga)).containsEntry(Keys.DATA_HANDLED_REQUEST, first));
    // a negative assertion: no further run
    ControlPlane.sleep(Duration.ofSeconds(3));
    assertThat(cluster.kubelet().migrateRuns(ns(), openfga.jobName())).hasSize(2);

    String second;
    try (Postgres.Lock lock = postgres.lockTable(db, "tuple")) {
      openfga.setVersion(Binaries.NEW_OPENFGA);
      await().atMost(Duration.ofMinutes(1)).until(() -> openfga.migrating(Binaries.NEW_OPENFGA));
      second = Instant.parse(first).plusSeconds(1).toString();
      openfga.annotate(Keys.MIGRATE_REQUESTED_AT, second);
      // a negative assertion: time enough to interrupt the run or start another beside it
      ControlPlane.sleep(Duration.ofSeconds(3));
      // the running migration is not interrupted, and nothing runs beside it
      assertThat(cluster.kubelet().migrateRuns(ns(), openfga.jobName())).hasSize(3);
    }
    await()
        .atMost(MIGRATED)
        .untilAsserted(
            () ->
                assertThat(data(openfga))
                    .containsEntry(Keys.DATA_VERSION, Binaries.NEW_OPENFGA)
                    .containsEntry(Keys.DATA_HANDLED_REQUEST, second));
    // a negative assertion: no further run
    ControlPlane.sleep(Duration.ofSeconds(3));
    List<TestKubelet.Run> runs = cluster.kubelet().migrateRuns(ns(), openfga.jobName());
    assertThat(runs).hasSize(4);
    assertOneAtATime(runs);
    List<Event> started = openfga.events("MigrationStarted");
    assertThat(started).extracting(Event::getMessage).anyMatch(m -> m.contains(second));
  }

  @Test
  @Order(6)
  void aMigrationPodWhoseJobWasDeletedHoldsItsDatabaseUntilItHasStopped() {
    Postgres postgres = cluster.postgres();
    Postgres.Database db = postgres.createDatabase("orphaned");
    List<OpenFgaView> installed = installedOnOneDatabase(db, "orphan-a", "orphan-b");
    OpenFgaView a = installed.get(0);
    OpenFgaView b = installed.get(1);

    try (Postgres.Lock lock = postgres.lockTable(db, "tuple")) {
      a.setVersion(Binaries.NEW_OPENFGA);
      String deletedUid =
          await()
              .atMost(Duration.ofMinutes(1))
              .until(a::job, j -> OpenFgaView.migrating(j, Binaries.NEW_OPENFGA))
              .getMetadata()
              .getUid();
      String pod =
          cluster.kubelet().migrateRuns(ns(), a.jobName()).stream()
              .filter(r -> r.ended() == null)
              .map(TestKubelet.Run::pod)
              .findFirst()
              .orElseThrow();
      // `kubectl delete job --cascade=orphan`: the Job is gone, its pod runs openfga migrate on
      cluster
          .client()
          .batch()
          .v1()
          .jobs()
          .inNamespace(ns())
          .withName(a.jobName())
          .withPropagationPolicy(DeletionPropagation.ORPHAN)
          .delete();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                // one read; a Job gone is what this waits for (until(supplier, predicate) never
                // hands the predicate a null)
                Job j = a.job();
                return j == null || !deletedUid.equals(j.getMetadata().getUid());
              });
      b.setVersion(Binaries.NEW_OPENFGA);

      for (OpenFgaView waiting : List.of(a, b)) {
        await()
            .atMost(Duration.ofSeconds(30))
            .untilAsserted(
                () ->
                    assertThat(waiting.events("MigrationWaiting"))
                        .extracting(Event::getMessage)
                        .anyMatch(
                            m ->
                                m.contains("migration pod " + ns() + "/" + pod)
                                    && m.contains("has not stopped")));
      }
      // a negative assertion: time enough to do something wrong
      ControlPlane.sleep(Duration.ofSeconds(4));
      assertThat(a.job()).isNull();
      assertThat(b.job()).isNull();
      assertThat(runs(a, b)).filteredOn(r -> r.ended() == null).hasSize(1);
      assertThat(OperatorInstall.status(cluster.plane(), "-n", ns()))
          .contains("waiting for migration pod " + ns() + "/" + pod);
    }
    // the lock is gone: the orphaned migrate finishes, then a (again: nothing recorded its run)
    // and b migrate, one after the other
    assertAllMigratedOneAtATime(db, 5, a, b);
  }

  @Test
  @Order(7)
  void aDeploymentDeletedWhileItMigratesHoldsTheDatabaseUntilTheGarbageCollectorsPodHasStopped() {
    Postgres postgres = cluster.postgres();
    Postgres.Database db = postgres.createDatabase("collected");
    List<OpenFgaView> installed = installedOnOneDatabase(db, "collected-c", "collected-d");
    OpenFgaView c = installed.get(0);
    OpenFgaView d = installed.get(1);

    // a pod being deleted keeps running for a while (a long grace period, a proxy that drains)
    cluster.kubelet().slowTermination(ns(), Duration.ofSeconds(15));
    try (Postgres.Lock lock = postgres.lockTable(db, "tuple")) {
      c.setVersion(Binaries.NEW_OPENFGA);
      await().atMost(Duration.ofMinutes(1)).until(() -> c.migrating(Binaries.NEW_OPENFGA));
      d.setVersion(Binaries.NEW_OPENFGA);
      await().atMost(Duration.ofSeconds(30)).until(() -> d.events("MigrationWaiting").size() >= 1);
      // kubectl delete deployment (background cascade): the garbage collector deletes the Job,
      // then its pod, which stops only after its grace period
      cluster
          .client()
          .apps()
          .deployments()
          .inNamespace(ns())
          .withName(c.name())
          .withPropagationPolicy(DeletionPropagation.BACKGROUND)
          .delete();
      await().atMost(Duration.ofSeconds(30)).until(() -> c.job() == null);
      String pod =
          cluster.kubelet().migrateRuns(ns(), c.jobName()).stream()
              .filter(r -> r.ended() == null)
              .map(TestKubelet.Run::pod)
              .findFirst()
              .orElseThrow();
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  assertThat(d.events("MigrationWaiting"))
                      .extracting(Event::getMessage)
                      .anyMatch(m -> m.contains("migration pod " + ns() + "/" + pod)));
      // a negative assertion: time enough to do something wrong
      ControlPlane.sleep(Duration.ofSeconds(4));
      assertThat(d.job()).isNull();
      assertThat(runs(c, d)).filteredOn(r -> r.ended() == null).hasSize(1);
      // once the pod has stopped, d's Job is created (and waits for the lock in the database)
      await().atMost(Duration.ofSeconds(60)).until(() -> d.job() != null && runs(c, d).size() == 4);
    } finally {
      cluster.kubelet().slowTermination(ns(), Duration.ZERO);
    }
    await()
        .atMost(MIGRATED)
        .untilAsserted(() -> assertThat(d.recordedVersion()).isEqualTo(Binaries.NEW_OPENFGA));
    assertThat(postgres.schemaRevision(db)).isEqualTo(6);
    assertOneAtATime(runs(c, d));
  }

  @Test
  @Order(8)
  void aSqliteFirstInstallBlockedForItsInitContainerIsScaledOnceFixed() {
    OpenFgaView lite =
        cluster.deploy(
            UpstreamOpenFga.fixture(ns(), "lite", Binaries.NEW_OPENFGA, 0, 2).engine("sqlite"),
            "file:/var/lib/openfga/openfga.db");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> assertThat(data(lite)).containsEntry(Keys.DATA_RESTORE_REPLICAS, "true"));
    assertThat(lite.events("SqliteMigrationMissing"))
        .singleElement()
        .satisfies(e -> assertThat(e.getMessage()).contains("then scaled to 2 replicas"));

    // the fix, a new pod template: the real Deployment controller makes it revision 2
    cluster
        .client()
        .apps()
        .deployments()
        .inNamespace(ns())
        .withName(lite.name())
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON),
            Serialization.asJson(
                List.of(
                    Map.of(
                        "op",
                        "add",
                        "path",
                        "/spec/template/spec/initContainers",
                        "value",
                        List.of(dev.openfga.operator.testing.Fixtures.sqliteMigrate())))));

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(lite.replicas()).isEqualTo(2));
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(data(lite))
                    .doesNotContainKeys(Keys.DATA_RESTORE_REPLICAS, Keys.DATA_VERSION));
    // the list, written last (after the scale), names the one Event of the state now
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(lite.events("MigrationSkipped"))
                    .singleElement()
                    .satisfies(
                        e ->
                            assertThat(e.getMetadata().getName())
                                .isEqualTo(
                                    lite.name() + "." + lite.annotation(Keys.REPORTED_EVENTS))));
    assertThat(cluster.kubelet().migrateRuns(ns(), lite.jobName())).isEmpty();
  }
}
