package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.kube.OperatorClient;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator killed at the worst moments, then started again: while {@code openfga migrate} runs
 * ({@code kill -9}), and right after each write of the success and the failure sequences (the
 * test-only switch {@code -Dopenfga.operator.test.haltAfterWrites=k} halts the process as {@code
 * kill -9} would, right after the API server accepted its k-th write). Whatever the moment, the
 * restarted operator completes the sequence: never a second Job at once, never a lost record or
 * cooldown, never a Deployment left at 0 replicas.
 */
class CrashIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  private static final Duration COOLDOWN = Duration.ofSeconds(3);
  private static OperatorInstall install;

  @BeforeAll
  static void installOperator() {
    install =
        cluster.installOperator(
            cluster.namespace(),
            """
            leaderElection: {enabled: false}
            retryCooldown: 3s
            migrationJob: {backoffLimit: 0, ttlSecondsAfterFinished: 1}
            """);
  }

  @Test
  void aRestartedOperatorAdoptsTheRunningMigrationInsteadOfStartingASecondOne() {
    Postgres postgres = cluster.postgres();
    Postgres.Database db = postgres.createDatabase("killed");
    OpenFgaView openfga = install("killed", db.ownerUri());
    OperatorInstall.OperatorProcess first = cluster.startOperator(install, "operator-0");
    OperatorInstall.OperatorProcess restarted;
    await()
        .atMost(Duration.ofMinutes(2))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.OLD_OPENFGA));

    // migration 006 of v1.10.0 changes the indexes of "tuple": it waits while the table is locked
    try (Postgres.Lock lock = postgres.lockTable(db, "tuple")) {
      openfga.setVersion(Binaries.NEW_OPENFGA);
      String running =
          await()
              .atMost(Duration.ofMinutes(1))
              .until(openfga::job, j -> OpenFgaView.migrating(j, Binaries.NEW_OPENFGA))
              .getMetadata()
              .getUid();
      first.kill();
      restarted = cluster.startOperator(install, "operator-1");
      // a negative assertion: time enough to do something wrong
      ControlPlane.sleep(Duration.ofSeconds(3));
      Job job = openfga.job();
      assertThat(job).as("the running migration's Job after the restart").isNotNull();
      assertThat(job.getMetadata().getUid()).isEqualTo(running);
      // v1.8.16's run, and the one v1.10.0 run that still waits for the lock: no second one
      List<TestKubelet.Run> runs =
          cluster.kubelet().migrateRuns(cluster.namespace(), openfga.jobName());
      assertThat(runs).as("%s", runs).hasSize(2).filteredOn(r -> r.ended() == null).hasSize(1);
    }
    await()
        .atMost(Duration.ofMinutes(1))
        .untilAsserted(() -> assertThat(openfga.recordedVersion()).isEqualTo(Binaries.NEW_OPENFGA));
    restarted.kill();
    assertThat(postgres.schemaRevision(db)).isEqualTo(6);
    assertThat(cluster.kubelet().migrateRuns(cluster.namespace(), openfga.jobName())).hasSize(2);
    assertThat(cluster.kubelet().maxConcurrentMigrations(cluster.namespace(), openfga.jobName()))
        .isEqualTo(1);
  }

  @Test
  void aCrashAfterAnyWriteOfAFirstInstallIsCompletedByTheRestartedOperator() {
    for (int k = 1; ; k++) {
      Postgres.Database db = cluster.postgres().createDatabase("crash_s" + k);
      OpenFgaView openfga = install("crash-s" + k, db.ownerUri());
      if (!crashAfterWrite(k, openfga, () -> converged(openfga))) {
        assertThat(k).as("write points of a first install").isGreaterThan(4);
        return;
      }
      OperatorInstall.OperatorProcess restarted = cluster.startOperator(install, "restarted-" + k);
      await()
          .atMost(Duration.ofMinutes(1))
          .alias("after a crash right after write " + k)
          .until(() -> converged(openfga));
      assertThat(cluster.kubelet().migrateRuns(cluster.namespace(), openfga.jobName()))
          .as("migrate runs after a crash right after write %d", k)
          .hasSize(1);
      assertThat(cluster.postgres().schemaRevision(db)).isEqualTo(5);
      restarted.kill();
    }
  }

  @Test
  void aCrashAfterAnyWriteOfAFailureKeepsTheEvidenceAndTheCooldown() {
    for (int k = 1; ; k++) {
      Postgres.Database db = cluster.postgres().createDatabase("crash_f" + k);
      String name = "crash-f" + k;
      OpenFgaView openfga =
          install(name, db.ownerUri().replace(db.password(), "wrong-" + db.password()));
      boolean crashed = crashAfterWrite(k, openfga, () -> convergedAfterTheFix(openfga, name, db));
      if (!crashed) {
        assertThat(k).as("write points of a failure and its retry").isGreaterThan(8);
        return;
      }
      OperatorInstall.OperatorProcess restarted = cluster.startOperator(install, "restarted-f" + k);
      await()
          .atMost(Duration.ofMinutes(1))
          .alias("after a crash right after write " + k)
          .until(() -> convergedAfterTheFix(openfga, name, db));
      List<TestKubelet.Run> runs =
          cluster.kubelet().migrateRuns(cluster.namespace(), openfga.jobName());
      assertThat(runs).as("migrate runs after a crash right after write %d", k).hasSize(2);
      // the cooldown held across the crash: the retry started no earlier than the failed run's
      // end plus the cooldown (1 s for timestamps in whole seconds)
      assertThat(Duration.between(runs.get(0).ended(), runs.get(1).started()))
          .as("time between the failed run and the retry, crash after write %d", k)
          .isGreaterThanOrEqualTo(COOLDOWN.minusSeconds(1));
      assertThat(openfga.events("MigrationFailed"))
          .as("Warning Events, crash after write %d", k)
          .isNotEmpty();
      restarted.kill();
    }
  }

  /**
   * Runs an operator that halts right after its k-th write until it has halted (true) or {@code
   * done} holds with the operator still running (false: fewer than k writes were needed).
   */
  private static boolean crashAfterWrite(
      int k, OpenFgaView openfga, java.util.concurrent.Callable<Boolean> done) {
    OperatorInstall.OperatorProcess operator =
        cluster.closeAfterClass(
            install.start(
                "halt-" + openfga.name(), "-D" + OperatorClient.HALT_AFTER_WRITES + "=" + k));
    Instant deadline = Instant.now().plus(Duration.ofMinutes(2));
    try {
      while (Instant.now().isBefore(deadline)) {
        if (!operator.isAlive()) {
          assertThat(operator.log()).contains("halting after write " + k);
          return true;
        }
        if (done.call()) {
          // converged; a last write (the closing Event) may still be under way: up to 1 s for
          // the halt after it
          if (operator.waitForExit(Duration.ofSeconds(1)) != -1) {
            return true;
          }
          operator.kill();
          return false;
        }
        ControlPlane.sleep(Duration.ofMillis(200));
      }
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    throw new AssertionError("neither halted nor converged, write " + k + ":\n" + operator.log());
  }

  private static boolean converged(OpenFgaView openfga) {
    return Binaries.OLD_OPENFGA.equals(openfga.recordedVersion())
        && Integer.valueOf(2).equals(openfga.replicas());
  }

  /**
   * {@link #converged} for a failure and its retry: once the failure is on record, the database is
   * made reachable, and the retry (after the cooldown) succeeds. One read of the Deployment serves
   * both looks.
   */
  private static boolean convergedAfterTheFix(
      OpenFgaView openfga, String name, Postgres.Database db) {
    Deployment d = openfga.deployment();
    boolean failed =
        OpenFgaView.condition(d, "MigrationFailed")
            .map(c -> "True".equals(c.getStatus()))
            .orElse(false);
    if (failed) {
      fixPassword(name, db);
    }
    return Binaries.OLD_OPENFGA.equals(openfga.recordedVersion())
        && d != null
        && Integer.valueOf(2).equals(d.getSpec().getReplicas());
  }

  private static final java.util.Set<String> FIXED =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  private static void fixPassword(String name, Postgres.Database db) {
    if (FIXED.add(name)) {
      cluster
          .client()
          .resource(UpstreamOpenFga.datastoreSecret(cluster.namespace(), name, db.ownerUri()))
          .update();
    }
  }

  private static OpenFgaView install(String name, String uri) {
    return cluster.deploy(
        UpstreamOpenFga.fixture(cluster.namespace(), name, Binaries.OLD_OPENFGA, 0, 2)
            .envVar("OPENFGA_TIMEOUT", "2s"),
        uri);
  }
}
