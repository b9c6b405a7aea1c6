package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.kube.Timestamps;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** The migration Job built from a Deployment, and what the operator reads back from Jobs. */
public final class MigrationJob {
  private MigrationJob() {}

  /** Settings that come from the operator's flags. */
  public record Spec(int backoffLimit, long activeDeadlineSeconds) {}

  /**
   * Builds the Job from scratch: nothing of the Deployment is shared with the result. No TTL at
   * creation, so the Job cannot vanish before its result is recorded.
   */
  public static Job build(
      Deployment deployment,
      Container container,
      String version,
      DeploymentSettings settings,
      Optional<String> request,
      Spec spec) {
    Map<String, String> annotations = new LinkedHashMap<>();
    annotations.put(Keys.DESIRED_VERSION, version);
    request.ifPresent(r -> annotations.put(Keys.MIGRATE_REQUESTED_AT, r));
    Map<String, String> labels = labels(version);
    Map<String, String> podLabels = MigrationPod.labels();
    Map<String, String> podAnnotations = MigrationPod.annotations(deployment, settings.mesh());
    List<String> databases =
        Database.keys(
            deployment.getMetadata().getNamespace(), container, settings.migrationSecret());
    if (!databases.isEmpty()) {
      // on the pods too: a pod outlives a Job deleted by someone else, and holds the database
      labels.put(Keys.DATABASE_LABEL, databases.get(0));
      podLabels.put(Keys.DATABASE_LABEL, databases.get(0));
      if (databases.size() > 1) {
        annotations.put(Keys.DATABASES_ANNOTATION, String.join(",", databases));
        podAnnotations.put(Keys.DATABASES_ANNOTATION, String.join(",", databases));
      }
    }
    return new JobBuilder()
        .withNewMetadata()
        .withName(Names.job(deployment.getMetadata().getName()))
        .withNamespace(deployment.getMetadata().getNamespace())
        .withLabels(labels)
        .withAnnotations(annotations)
        .withOwnerReferences(ownerReference(deployment))
        .endMetadata()
        .withNewSpec()
        .withBackoffLimit(spec.backoffLimit())
        .withActiveDeadlineSeconds(spec.activeDeadlineSeconds())
        // a replacement pod only once the old one has failed, never while it terminates: two
        // openfga migrate at once fail each other
        .withPodReplacementPolicy("Failed")
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(podLabels)
        .withAnnotations(podAnnotations)
        .endMetadata()
        .withSpec(MigrationPod.spec(deployment, container, settings))
        .endTemplate()
        .endSpec()
        .build();
  }

  static Map<String, String> labels(String version) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(Keys.PART_OF, Keys.PART_OF_OPENFGA);
    labels.put(Keys.COMPONENT, Keys.COMPONENT_MIGRATION);
    labels.put(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR);
    String versionLabel = ImageVersion.labelValue(version);
    if (!versionLabel.isEmpty()) {
      labels.put(Keys.VERSION_LABEL, versionLabel);
    }
    return labels;
  }

  /**
   * Why the created Job lacks the {@code podReplacementPolicy} it was sent with, if it does: API
   * servers before Kubernetes 1.29 (or with the JobPodReplacementPolicy feature gate off) drop the
   * field, and a drained migration pod is then replaced while it still runs. Said once per process.
   */
  public static Optional<String> droppedPodReplacementPolicy(Job sent, Job created) {
    String asked = sent.getSpec() == null ? null : sent.getSpec().getPodReplacementPolicy();
    String kept = created.getSpec() == null ? null : created.getSpec().getPodReplacementPolicy();
    if (asked == null || asked.equals(kept)) {
      return Optional.empty();
    }
    return Optional.of(
        Messages.droppedPodReplacementPolicy(
            asked, created.getMetadata().getNamespace(), created.getMetadata().getName()));
  }

  /** Controller reference without blockOwnerDeletion (that needs extra RBAC on OpenShift). */
  public static OwnerReference ownerReference(Deployment deployment) {
    return new OwnerReferenceBuilder()
        .withApiVersion("apps/v1")
        .withKind("Deployment")
        .withName(deployment.getMetadata().getName())
        .withUid(deployment.getMetadata().getUid())
        .withController(true)
        .build();
  }

  /**
   * Rule 4: whether the container's datastore needs no migration Job — engine {@code memory} or
   * {@code sqlite}, spelled exactly as OpenFGA spells them (its engine names are case-sensitive:
   * "Memory" is an unknown engine, which migrate reports).
   */
  public static boolean needsNoJob(Container container) {
    String engine = literalEngine(container).orElse("");
    return engine.equals("memory") || engine.equals("sqlite");
  }

  /**
   * The literal value of the last {@code OPENFGA_DATASTORE_ENGINE}, if it has one: the last
   * definition of a name wins in a pod, as the kubelet resolves it (a chart's default {@code
   * memory} followed by a {@code postgres} added with extra variables runs postgres).
   */
  public static Optional<String> literalEngine(Container container) {
    return list(container.getEnv()).stream()
        .filter(e -> Keys.ENGINE_ENV.equals(e.getName()))
        .reduce((first, last) -> last)
        .map(EnvVar::getValue);
  }

  // ---- reading Jobs back ----

  /** The re-run request a Job serves ({@code openfga.dev/migrate-requested-at}), if any. */
  public static Optional<String> request(Job job) {
    return Optional.ofNullable(annotation(job, Keys.MIGRATE_REQUESTED_AT));
  }

  /** The version a Job migrates to: annotation, else the label; empty means never trusted. */
  public static Optional<String> recordedVersion(Job job) {
    String annotation = annotation(job, Keys.DESIRED_VERSION);
    if (annotation != null && !annotation.isEmpty()) {
      return Optional.of(annotation);
    }
    return Optional.empty();
  }

  public static boolean isFor(Job job, String version) {
    Optional<String> recorded = recordedVersion(job);
    if (recorded.isPresent()) {
      return recorded.get().equals(version);
    }
    return versionLabel(job).filter(l -> l.equals(ImageVersion.labelValue(version))).isPresent();
  }

  /** For messages: the annotation, else the label, else {@code unknown}. */
  public static String describedVersion(Job job) {
    return recordedVersion(job).or(() -> versionLabel(job)).orElse("unknown");
  }

  /** The sanitised version label (older operators' Jobs carry only this). */
  private static Optional<String> versionLabel(Job job) {
    Map<String, String> labels = job.getMetadata().getLabels();
    return Optional.ofNullable(labels == null ? null : labels.get(Keys.VERSION_LABEL))
        .filter(l -> !l.isEmpty());
  }

  public static boolean hasCondition(Job job, String type) {
    return condition(job, type).isPresent();
  }

  public static Optional<JobCondition> condition(Job job, String type) {
    if (job.getStatus() == null || job.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return job.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()) && "True".equals(c.getStatus()))
        .findFirst();
  }

  public static boolean isFailed(Job job) {
    return hasCondition(job, "Failed") || hasCondition(job, "FailureTarget");
  }

  public static boolean isComplete(Job job) {
    return hasCondition(job, "Complete");
  }

  /** The migration pod is up and running {@code openfga migrate}: never interrupt it. */
  public static boolean isRunning(Job job) {
    var status = job.getStatus();
    return status != null
        && status.getActive() != null
        && status.getActive() > 0
        && status.getReady() != null
        && status.getReady() > 0;
  }

  /** How long the Job ran: from its start to its completion, when both are known. */
  public static Optional<java.time.Duration> runTime(Job job) {
    if (job.getStatus() == null) {
      return Optional.empty();
    }
    Optional<java.time.Instant> start =
        Optional.ofNullable(job.getStatus().getStartTime()).flatMap(Timestamps::parse);
    Optional<java.time.Instant> end =
        Optional.ofNullable(job.getStatus().getCompletionTime()).flatMap(Timestamps::parse);
    if (start.isEmpty() || end.isEmpty() || end.get().isBefore(start.get())) {
      return Optional.empty();
    }
    return Optional.of(java.time.Duration.between(start.get(), end.get()));
  }

  public static boolean isTerminating(Job job) {
    return job.getMetadata().getDeletionTimestamp() != null;
  }

  /** Carries the managed-by label and a controller reference to this Deployment. */
  public static boolean isTrusted(Job job, Deployment deployment) {
    Map<String, String> labels = job.getMetadata().getLabels();
    return labels != null
        && Keys.MANAGED_BY_OPERATOR.equals(labels.get(Keys.MANAGED_BY))
        && Ownership.isControlledBy(job, deployment);
  }

  private static final Set<String> MIGRATION_HOOK_EVENTS =
      Set.of(
          "pre-install",
          "post-install",
          "pre-upgrade",
          "post-upgrade",
          "pre-rollback",
          "post-rollback",
          "post-delete");

  /**
   * A Job that has not finished and has no pod at all (none active, ready, terminating, succeeded
   * or failed): its pod may be refused (Pod Security, a quota, a missing ServiceAccount).
   */
  public static boolean hasNoPod(Job job) {
    if (isComplete(job) || isFailed(job)) {
      return false;
    }
    var status = job.getStatus();
    return status == null
        || (zero(status.getActive())
            && zero(status.getReady())
            && zero(status.getTerminating())
            && zero(status.getSucceeded())
            && zero(status.getFailed()));
  }

  /**
   * Whether the Job controller has looked at the Job and made no pod for it: the Job has a start
   * time (the Job controller writes the status at its first look, from Kubernetes 1.29 also when
   * the pod is refused: the start time with none active and none ready) and no pod ({@link
   * #hasNoPod}). A Job without a start time has not been looked at yet (or is suspended): no pod of
   * it was refused, so there is no {@code FailedCreate} Event to read.
   */
  public static boolean madeNoPod(Job job) {
    return hasNoPod(job) && job.getStatus() != null && job.getStatus().getStartTime() != null;
  }

  private static boolean zero(Integer count) {
    return count == null || count == 0;
  }

  /** The most of the API server's answer to a refused Job create that is kept. */
  static final int MAX_REJECTION = 1024;

  /**
   * The API server's answer to a refused create of {@code job} (SPEC section 10), as the
   * Deployment's condition and Event show it: its message with the credentials masked as in failure
   * evidence ({@link FailureLog#redact}, with the literal datastore URI and password of the Job's
   * containers: an invalid object's answer may quote their values), cut to {@value #MAX_REJECTION}
   * characters after masking, and the HTTP status code.
   */
  public static String rejection(Job job, int code, String message) {
    List<String> secrets = new ArrayList<>();
    PodSpec pod =
        job.getSpec() == null || job.getSpec().getTemplate() == null
            ? null
            : job.getSpec().getTemplate().getSpec();
    if (pod != null) {
      for (List<Container> containers :
          java.util.Arrays.asList(pod.getContainers(), pod.getInitContainers())) {
        if (containers != null) {
          containers.forEach(c -> secrets.addAll(FailureLog.literalSecrets(c)));
        }
      }
    }
    String text =
        message == null || message.isBlank()
            ? Messages.NO_ANSWER
            : FailureLog.redact(message.strip(), secrets);
    if (text.length() > MAX_REJECTION) {
      text = text.substring(0, MAX_REJECTION - 3) + "...";
    }
    return Messages.rejection(text, code);
  }

  /**
   * The message of the newest {@code FailedCreate} Event of this very Job (same UID) among {@code
   * events}: why the Job controller cannot create its pod.
   */
  public static Optional<String> podCreateFailure(
      Job job, java.util.Collection<io.fabric8.kubernetes.api.model.Event> events) {
    String uid = job.getMetadata().getUid();
    return events.stream()
        .filter(e -> "FailedCreate".equals(e.getReason()))
        .filter(e -> e.getInvolvedObject() != null && "Job".equals(e.getInvolvedObject().getKind()))
        .filter(e -> uid != null && uid.equals(e.getInvolvedObject().getUid()))
        .max(
            java.util.Comparator.comparing(
                e ->
                    String.valueOf(
                        e.getLastTimestamp() != null
                            ? e.getLastTimestamp()
                            : e.getMetadata().getCreationTimestamp())))
        .map(io.fabric8.kubernetes.api.model.Event::getMessage)
        .filter(m -> !m.isBlank());
  }

  /**
   * The upstream chart's own Helm hook migration Job for the same release: managed by Helm, same
   * instance/name/part-of/component labels as the Deployment (the chart version may differ) and a
   * {@code helm.sh/hook} whose every event is an install/upgrade/rollback hook (the legacy default
   * also lists {@code post-delete}).
   */
  public static boolean isLegacyHelmHook(Job job, Deployment deployment) {
    Map<String, String> jl = job.getMetadata().getLabels();
    Map<String, String> dl = deployment.getMetadata().getLabels();
    if (jl == null || dl == null || !Keys.MANAGED_BY_HELM.equals(jl.get(Keys.MANAGED_BY))) {
      return false;
    }
    for (String key : List.of(Keys.INSTANCE, Keys.NAME, Keys.PART_OF, Keys.COMPONENT)) {
      String value = dl.get(key);
      if (value == null || !value.equals(jl.get(key))) {
        return false;
      }
    }
    String hook = annotation(job, Keys.HELM_HOOK);
    if (hook == null || hook.isBlank()) {
      return false;
    }
    for (String event : hook.split(",")) {
      String e = event.strip();
      if (!MIGRATION_HOOK_EVENTS.contains(e)) {
        return false;
      }
    }
    return true;
  }

  /** The annotation's value, or {@code null}. */
  public static String annotation(Job job, String key) {
    Map<String, String> annotations = job.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }

  static <T> List<T> list(List<T> maybe) {
    return maybe == null ? List.of() : maybe;
  }
}
