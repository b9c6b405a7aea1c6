package dev.openfga.operator.testing;

import dev.openfga.operator.migration.rules.Keys;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatus;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Plays the Kubernetes Job controller on the mock API server: a new Job's pod starts, runs for a
 * moment and then the Job completes or fails — as the test's script says for that Job. Explicit
 * transitions ({@link #complete}, {@link #fail}, {@link #run}) are there for tests that drive every
 * step themselves.
 */
public final class FakeJobController implements AutoCloseable {

  /** What happens to a new Job. */
  public enum Script {
    /** Pod starts, the migration succeeds. */
    SUCCEED,
    /** Pod starts, the migration fails (BackoffLimitExceeded). */
    FAIL,
    /** Pod starts and keeps running until told otherwise. */
    RUN,
    /** Pod never starts (image pull error, unschedulable): active, never ready. */
    NEVER_START,
    /** Pod refused (Pod Security admission, a quota): see {@link #refusePod}. */
    REFUSE_POD,
    /** Nothing happens until the test says so. */
    MANUAL
  }

  private final KubernetesClient client;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final SharedIndexInformer<Job> informer;
  private final List<Job> created = new CopyOnWriteArrayList<>();
  private final Map<String, Boolean> seen = new ConcurrentHashMap<>();
  private volatile Function<Job, Script> script = j -> Script.MANUAL;
  private volatile long runMillis = 300;

  /** What the migration pod of a failed Job printed last (its log, as the mock serves it). */
  public static final String FAILURE_LOG =
      "2026/01/01 00:00:00 running all migrations\n"
          + "2026/01/01 00:00:01 failed to run migrations: failed to connect to `host=postgres"
          + " user=openfga database=openfga`: server error (FATAL: password authentication failed"
          + " for user \"openfga\" (SQLSTATE 28P01))";

  public static final String SUCCESS_LOG =
      "2026/01/01 00:00:00 running all migrations\n2026/01/01 00:00:02 migration done";

  private final Map<String, String> podLogs;

  FakeJobController(KubernetesClient client, Map<String, String> podLogs) {
    this.client = client;
    this.podLogs = podLogs;
    this.informer =
        client
            .batch()
            .v1()
            .jobs()
            .inAnyNamespace()
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(Job job) {
                    if (seen.putIfAbsent(job.getMetadata().getUid(), true) == null) {
                      created.add(job);
                      timer.execute(() -> play(job));
                    }
                  }

                  @Override
                  public void onUpdate(Job oldJob, Job newJob) {}

                  /** The garbage collector's part: the Job's pods go with it. */
                  @Override
                  public void onDelete(Job job, boolean unknown) {
                    timer.execute(
                        () ->
                            client
                                .pods()
                                .inNamespace(job.getMetadata().getNamespace())
                                .withLabel(Keys.JOB_UID_LABEL, job.getMetadata().getUid())
                                .delete());
                  }
                });
  }

  /** Decides what happens to each new Job (by default nothing: {@link Script#MANUAL}). */
  public FakeJobController script(Function<Job, Script> script) {
    this.script = script;
    return this;
  }

  public FakeJobController runFor(long millis) {
    this.runMillis = millis;
    return this;
  }

  /** Every Job ever created (each UID once), oldest first. */
  public List<Job> created() {
    return new ArrayList<>(created);
  }

  /** Jobs created by the operator (the managed-by label), oldest first. */
  public List<Job> createdByOperator() {
    return created.stream()
        .filter(
            j -> Keys.MANAGED_BY_OPERATOR.equals(j.getMetadata().getLabels().get(Keys.MANAGED_BY)))
        .toList();
  }

  public static String version(Job job) {
    return job.getMetadata().getAnnotations() == null
        ? null
        : job.getMetadata().getAnnotations().get(Keys.DESIRED_VERSION);
  }

  private void play(Job job) {
    Script s = script.apply(job);
    switch (s) {
      case SUCCEED -> {
        run(job);
        timer.schedule(() -> complete(job), runMillis, TimeUnit.MILLISECONDS);
      }
      case FAIL -> {
        run(job);
        timer.schedule(() -> fail(job), runMillis, TimeUnit.MILLISECONDS);
      }
      case RUN -> run(job);
      case NEVER_START ->
          setStatus(
              job, new JobStatusBuilder().withActive(1).withReady(0).withStartTime(now()).build());
      case REFUSE_POD -> refusePod(job);
      case MANUAL -> {}
    }
  }

  /**
   * The Job's pod, as the Job controller would make it (the template's labels and annotations, the
   * Job's name and UID as labels, the Job as its controller), ending as given: exit code 0 or 1,
   * with the log the mock API server serves for it; the pod of {@link #run} if there is one.
   */
  private void pod(Job job, int exitCode, String log) {
    String name = podName(job);
    podLogs.put(name, log);
    Pod running = client.pods().inNamespace(job.getMetadata().getNamespace()).withName(name).get();
    Pod pod = running != null ? running : newPod(job);
    pod.setStatus(
        new PodBuilder()
            .withNewStatus()
            .withPhase(exitCode == 0 ? "Succeeded" : "Failed")
            .addNewContainerStatus()
            .withName(Keys.MIGRATION_CONTAINER)
            .withNewState()
            .withNewTerminated()
            .withExitCode(exitCode)
            .withReason(exitCode == 0 ? "Completed" : "Error")
            .endTerminated()
            .endState()
            .endContainerStatus()
            .endStatus()
            .build()
            .getStatus());
    var resource = client.pods().inNamespace(job.getMetadata().getNamespace()).resource(pod);
    if (running != null) {
      resource.updateStatus();
    } else {
      resource.create();
    }
  }

  private static String podName(Job job) {
    return job.getMetadata().getName()
        + "-"
        + dev.openfga.operator.kube.Names.shortHash(job.getMetadata().getUid()).substring(0, 5);
  }

  /** The Job's pod as the Job controller makes it, with the template's spec, no status yet. */
  private static Pod newPod(Job job) {
    return new PodBuilder(Fixtures.migrationPod(job, null))
        .editMetadata()
        .withName(podName(job))
        .withUid(null)
        .withCreationTimestamp(null)
        .addToLabels(Keys.JOB_UID_LABEL, job.getMetadata().getUid())
        .endMetadata()
        // the pod template's spec, as the Job controller copies it (containers, env, volumes)
        .withSpec(job.getSpec().getTemplate().getSpec())
        .withStatus(null)
        .build();
  }

  /** The reason in the {@code FailedCreate} Event of {@link #refusePod}. */
  public static final String POD_REFUSAL =
      "violates PodSecurity \"restricted:latest\": runAsNonRoot != true (pod or container"
          + " \"openfga\" must set securityContext.runAsNonRoot=true)";

  /**
   * The Job's pod is refused (Pod Security admission, a quota, a missing ServiceAccount): the Job
   * controller sends a {@code FailedCreate} Event on the Job saying why, and writes the Job's
   * status as at its first look (from Kubernetes 1.29 also without a pod): the start time, none
   * active, none ready.
   */
  public void refusePod(Job job) {
    String now = now();
    client
        .v1()
        .events()
        .inNamespace(job.getMetadata().getNamespace())
        .resource(
            new EventBuilder()
                .withNewMetadata()
                .withName(
                    job.getMetadata().getName()
                        + "."
                        + dev.openfga.operator.kube.Names.shortHash(job.getMetadata().getUid()))
                .endMetadata()
                .withNewInvolvedObject()
                .withApiVersion("batch/v1")
                .withKind("Job")
                .withName(job.getMetadata().getName())
                .withNamespace(job.getMetadata().getNamespace())
                .withUid(job.getMetadata().getUid())
                .endInvolvedObject()
                .withReason("FailedCreate")
                .withType("Warning")
                .withMessage(
                    "Error creating: pods \"" + podName(job) + "\" is forbidden: " + POD_REFUSAL)
                .withFirstTimestamp(now)
                .withLastTimestamp(now)
                .withCount(1)
                .withNewSource()
                .withComponent("job-controller")
                .endSource()
                .build())
        .create();
    setStatus(job, new JobStatusBuilder().withStartTime(now).withActive(0).withReady(0).build());
  }

  /** The pod is up and running {@code openfga migrate} (its pod Running). */
  public void run(Job job) {
    Pod pod = newPod(job);
    pod.setStatus(
        new PodBuilder().withNewStatus().withPhase("Running").endStatus().build().getStatus());
    try {
      client.pods().inNamespace(job.getMetadata().getNamespace()).resource(pod).create();
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
    }
    setStatus(job, new JobStatusBuilder().withActive(1).withReady(1).withStartTime(now()).build());
  }

  public void complete(Job job) {
    pod(job, 0, SUCCESS_LOG);
    String t = now();
    setStatus(
        job,
        new JobStatusBuilder()
            .withActive(0)
            .withReady(0)
            .withSucceeded(1)
            .withStartTime(t)
            .withCompletionTime(t)
            .withConditions(
                new JobConditionBuilder()
                    .withType("SuccessCriteriaMet")
                    .withStatus("True")
                    .withLastTransitionTime(t)
                    .build(),
                new JobConditionBuilder()
                    .withType("Complete")
                    .withStatus("True")
                    .withLastTransitionTime(t)
                    .build())
            .build());
  }

  public void fail(Job job) {
    fail(job, FAILURE_LOG);
  }

  /** The Job fails; its pod leaves this log. */
  public void fail(Job job, String log) {
    pod(job, 1, log);
    String t = now();
    setStatus(
        job,
        new JobStatusBuilder()
            .withActive(0)
            .withReady(0)
            .withFailed(1)
            .withStartTime(t)
            .withConditions(
                new JobConditionBuilder()
                    .withType("FailureTarget")
                    .withStatus("True")
                    .withReason("BackoffLimitExceeded")
                    .withMessage("Job has reached the specified backoff limit")
                    .withLastTransitionTime(t)
                    .build(),
                new JobConditionBuilder()
                    .withType("Failed")
                    .withStatus("True")
                    .withReason("BackoffLimitExceeded")
                    .withMessage("Job has reached the specified backoff limit")
                    .withLastTransitionTime(t)
                    .build())
            .build());
  }

  private void setStatus(Job job, JobStatus status) {
    Job current =
        client
            .batch()
            .v1()
            .jobs()
            .inNamespace(job.getMetadata().getNamespace())
            .withName(job.getMetadata().getName())
            .get();
    if (current == null || !current.getMetadata().getUid().equals(job.getMetadata().getUid())) {
      return;
    }
    current.setStatus(status);
    client
        .batch()
        .v1()
        .jobs()
        .inNamespace(job.getMetadata().getNamespace())
        .resource(current)
        .updateStatus();
  }

  private static String now() {
    return Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
  }

  @Override
  public void close() {
    informer.close();
    timer.shutdownNow();
  }
}
