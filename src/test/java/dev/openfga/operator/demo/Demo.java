package dev.openfga.operator.demo;

import static dev.openfga.operator.testing.Fixtures.openfga;

import dev.openfga.operator.config.LoggingConfig;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.ops.Logging;
import dev.openfga.operator.status.StatusReader;
import dev.openfga.operator.status.StatusRow;
import dev.openfga.operator.status.StatusTable;
import dev.openfga.operator.status.StatusView;
import dev.openfga.operator.testing.FakeJobController;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.logging.LogManager;

/**
 * The README's first command. Runs the real operator in this process against an embedded mock
 * Kubernetes API server, with a simulated Job runner, and tells a short story: install OpenFGA
 * v1.8.0, migrate, upgrade to v1.9.0, the migration fails, cooldown, retry, success. Every line of
 * the timeline is something the operator did, read back from the API server.
 */
public final class Demo {
  private static final Duration COOLDOWN = Duration.ofSeconds(5);
  private static final Instant START = Instant.now();
  private static final String DEPLOYMENT = "openfga";

  private Demo() {}

  public static void main(String[] args) throws Exception {
    quietLogs();
    int code;
    try (MockCluster cluster = new MockCluster()) {
      code = play(cluster);
    }
    System.exit(code);
  }

  private static int play(MockCluster cluster) throws InterruptedException {
    AtomicInteger v190attempts = new AtomicInteger();
    cluster
        .jobs()
        .runFor(1500)
        .script(
            job ->
                "v1.9.0".equals(FakeJobController.version(job))
                        && v190attempts.incrementAndGet() == 1
                    ? Script.FAIL
                    : Script.SUCCEED);
    watch(cluster);

    say("");
    say("openfga-operator demo: the real operator against an embedded mock Kubernetes API server.");
    say("A simulated Job runner plays the cluster: each migration Job runs for 1.5 s; the first");
    say(
        "attempt at v1.9.0 fails. Retry cooldown: "
            + COOLDOWN.toSeconds()
            + " s (60 s by default).");
    say(
        "Each line is read back from the API server: job = the migration Job, event = a Kubernetes");
    say(
        "Event on the Deployment, record = the status ConfigMap, condition = MigrationFailed on the");
    say("Deployment, annotate = the retry deadline, replicas = the Deployment's spec.replicas.");
    say("");
    cluster.startOperator(MockCluster.config(COOLDOWN, 3), "demo-operator");
    chapter("1. Install OpenFGA v1.8.0 on Postgres (0 replicas until migrated, desired 3)");
    cluster.create(openfga().name(DEPLOYMENT).version("v1.8.0").build());
    if (!waitFor(() -> recorded(cluster, "v1.8.0") && replicas(cluster) == 3)) {
      return fail("the first install did not finish");
    }

    chapter("2. Upgrade to v1.9.0 (its first migration attempt fails)");
    // a JSON patch of the image alone: the operator writes the Deployment at the same time
    cluster.setImage(DEPLOYMENT, "openfga/openfga:v1.9.0");
    if (!waitFor(() -> recorded(cluster, "v1.9.0"))) {
      return fail("the upgrade did not finish");
    }
    waitFor(() -> false, Duration.ofSeconds(1));

    chapter("3. Where things stand");
    Deployment d = cluster.deployment(DEPLOYMENT);
    ConfigMap status = cluster.configMap(DEPLOYMENT + "-migration-status");
    say("  status ConfigMap " + status.getMetadata().getName() + ": " + status.getData());
    say("  condition MigrationFailed: " + condition(d));
    say("  replicas: " + d.getSpec().getReplicas());
    say(
        "  Jobs created: "
            + cluster.jobs().createdByOperator().size()
            + " (v1.8.0, v1.9.0 failed, v1.9.0 retried once)");
    say("");
    say("  $ openfga-operator status -n " + MockCluster.NS);
    List<StatusRow> rows =
        StatusView.rows(
            StatusReader.read(cluster.client(), Optional.of(MockCluster.NS)), Instant.now());
    StatusTable.table(rows, false).lines().forEach(line -> say("  " + line));
    say("");
    say("Try it on a cluster: see the README, section \"Quick start on a cluster\".");
    return 0;
  }

  private static void watch(MockCluster cluster) {
    var client = cluster.client();
    Map<String, String> jobState = new ConcurrentHashMap<>();
    client
        .v1()
        .events()
        .inNamespace(MockCluster.NS)
        .inform(
            added(
                e -> {
                  if (e.getInvolvedObject() != null
                      && DEPLOYMENT.equals(e.getInvolvedObject().getName())) {
                    say(
                        String.format(
                            "  event     %-7s %-22s %s",
                            e.getType(),
                            e.getReason(),
                            e.getMessage().replace("\n", "\n" + " ".repeat(50))));
                  }
                }));
    client
        .batch()
        .v1()
        .jobs()
        .inNamespace(MockCluster.NS)
        .inform(
            new ResourceEventHandler<>() {
              @Override
              public void onAdd(Job job) {
                say(
                    "  job       created "
                        + job.getMetadata().getName()
                        + " (version "
                        + FakeJobController.version(job)
                        + ", no TTL until the result is recorded)");
              }

              @Override
              public void onUpdate(Job oldJob, Job job) {
                String state = jobState(job);
                if (!state.equals(jobState.put(job.getMetadata().getUid(), state))
                    && !state.isEmpty()) {
                  say("  job       " + job.getMetadata().getName() + " " + state);
                }
              }

              @Override
              public void onDelete(Job job, boolean unknown) {
                say(
                    "  job       deleted "
                        + job.getMetadata().getName()
                        + " (version "
                        + FakeJobController.version(job)
                        + ")");
              }
            });
    client
        .configMaps()
        .inNamespace(MockCluster.NS)
        .inform(
            new ResourceEventHandler<>() {
              @Override
              public void onAdd(ConfigMap cm) {
                say(
                    "  record    "
                        + cm.getMetadata().getName()
                        + " version="
                        + cm.getData().get(Keys.DATA_VERSION));
              }

              @Override
              public void onUpdate(ConfigMap o, ConfigMap cm) {
                if (!Objects.equals(
                    o.getData().get(Keys.DATA_VERSION), cm.getData().get(Keys.DATA_VERSION))) {
                  say(
                      "  record    "
                          + cm.getMetadata().getName()
                          + " version="
                          + cm.getData().get(Keys.DATA_VERSION));
                } else if (o.getData().containsKey(Keys.DATA_RESTORE_REPLICAS)
                    && !cm.getData().containsKey(Keys.DATA_RESTORE_REPLICAS)) {
                  say("  record    " + cm.getMetadata().getName() + " first install done");
                }
              }

              @Override
              public void onDelete(ConfigMap cm, boolean unknown) {}
            });
    client
        .apps()
        .deployments()
        .inNamespace(MockCluster.NS)
        .inform(
            new ResourceEventHandler<>() {
              @Override
              public void onAdd(Deployment d) {}

              @Override
              public void onUpdate(Deployment o, Deployment d) {
                if (!Objects.equals(o.getSpec().getReplicas(), d.getSpec().getReplicas())) {
                  say(
                      "  replicas  "
                          + o.getSpec().getReplicas()
                          + " -> "
                          + d.getSpec().getReplicas());
                }
                if (!condition(o).equals(condition(d))) {
                  say("  condition MigrationFailed=" + condition(d));
                }
                String before = retryAfter(o);
                String after = retryAfter(d);
                if (!Objects.equals(before, after)) {
                  say(
                      after == null
                          ? "  annotate  removed " + Keys.RETRY_AFTER
                          : "  annotate  "
                              + Keys.RETRY_AFTER
                              + "="
                              + after
                              + " (no new Job before then)");
                }
              }

              @Override
              public void onDelete(Deployment d, boolean unknown) {}
            });
  }

  private static String jobState(Job job) {
    if (job.getStatus() == null) {
      return "";
    }
    if (job.getStatus().getConditions() != null) {
      for (var c : job.getStatus().getConditions()) {
        if ("True".equals(c.getStatus())
            && (c.getType().equals("Complete") || c.getType().equals("Failed"))) {
          return c.getType().toLowerCase(java.util.Locale.ROOT)
              + (c.getReason() == null ? "" : " (" + c.getReason() + ")");
        }
      }
    }
    Integer ready = job.getStatus().getReady();
    return ready != null && ready > 0 ? "running openfga migrate" : "";
  }

  private static <T> ResourceEventHandler<T> added(java.util.function.Consumer<T> onAdd) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T item) {
        onAdd.accept(item);
      }

      @Override
      public void onUpdate(T oldItem, T newItem) {}

      @Override
      public void onDelete(T item, boolean unknown) {}
    };
  }

  private static String condition(Deployment d) {
    if (d.getStatus() == null || d.getStatus().getConditions() == null) {
      return "(none)";
    }
    return d.getStatus().getConditions().stream()
        .filter(c -> Keys.CONDITION_TYPE.equals(c.getType()))
        .map(
            c ->
                c.getStatus()
                    + " ("
                    + c.getReason()
                    + ": "
                    + c.getMessage().replace("\n", "\n" + " ".repeat(20))
                    + ")")
        .findFirst()
        .orElse("(none)");
  }

  private static String retryAfter(Deployment d) {
    var a = d.getMetadata().getAnnotations();
    return a == null ? null : a.get(Keys.RETRY_AFTER);
  }

  private static boolean recorded(MockCluster cluster, String version) {
    return cluster.recordedVersion(DEPLOYMENT).map(version::equals).orElse(false);
  }

  private static int replicas(MockCluster cluster) {
    return cluster.deployment(DEPLOYMENT).getSpec().getReplicas();
  }

  private static boolean waitFor(BooleanSupplier done) throws InterruptedException {
    return waitFor(done, Duration.ofSeconds(40));
  }

  private static boolean waitFor(BooleanSupplier done, Duration limit) throws InterruptedException {
    Instant deadline = Instant.now().plus(limit);
    while (Instant.now().isBefore(deadline)) {
      if (done.getAsBoolean()) {
        return true;
      }
      Thread.sleep(100);
    }
    return false;
  }

  private static void chapter(String title) {
    say("");
    say(title);
  }

  private static int fail(String why) {
    say("DEMO FAILED: " + why);
    return 1;
  }

  private static synchronized void say(String line) {
    if (line.isEmpty()) {
      System.out.println();
      return;
    }
    double elapsed = Duration.between(START, Instant.now()).toMillis() / 1000.0;
    System.out.println(String.format("[%5.1fs] %s", elapsed, line));
  }

  private static void quietLogs() {
    LogManager.getLogManager().reset(); // the mock API server logs every request through JUL
    Logging.configure(new LoggingConfig(LoggingConfig.Format.TEXT, LoggingConfig.Level.ERROR));
  }
}
