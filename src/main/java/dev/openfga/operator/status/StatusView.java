package dev.openfga.operator.status;

import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.DeploymentSettings;
import dev.openfga.operator.migration.rules.EventReason;
import dev.openfga.operator.migration.rules.FailedCondition;
import dev.openfga.operator.migration.rules.FailureLog;
import dev.openfga.operator.migration.rules.ImageVersion;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.MigrationJob;
import dev.openfga.operator.migration.rules.Observation;
import dev.openfga.operator.migration.rules.Plan;
import dev.openfga.operator.migration.rules.Planner;
import dev.openfga.operator.migration.rules.Policy;
import dev.openfga.operator.migration.rules.StatusRecord;
import dev.openfga.operator.migration.rules.Step;
import dev.openfga.operator.status.StatusRow.EventInfo;
import dev.openfga.operator.status.StatusRow.JobInfo;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The status view, pure: from the objects read from the cluster and the time to one {@link
 * StatusRow} per opted-in Deployment. The state is the one the operator's own {@link Planner}
 * computes from the same objects; nothing here decides anything the planner does not.
 */
public final class StatusView {
  private StatusView() {}

  /**
   * The planner's decision does not depend on the policy (the flags change the steps and the waits,
   * never the state), so the defaults give the operator's state whatever its flags are. The times
   * do depend on it ({@code --retry-cooldown}, {@code --ttl-seconds-after-finished}): they are read
   * from what the operator recorded ({@link #nextJob}), never planned with the defaults.
   */
  private static final Planner PLANNER = new Planner(Policy.DEFAULTS);

  /**
   * When the operator creates the next Job after a failure, as far as it recorded it.
   *
   * @param at the time: exact, or (with {@code atTheEarliest}) a lower bound
   * @param atTheEarliest the failed Job's retention is not recorded in full yet (the operator has
   *     not written it, or the Job has only {@code FailureTarget}: its retention counts from {@code
   *     Failed}): the next Job comes at {@code at} or later
   */
  record NextJob(Optional<Instant> at, boolean atTheEarliest) {
    static final NextJob UNKNOWN = new NextJob(Optional.empty(), false);
  }

  /**
   * From the objects, never from the default timings: COOLDOWN waits for exactly the Deployment's
   * {@code migration-retry-after}; FAILED replaces the failed Job at the later of its recorded
   * {@code migration-retry-after} and {@code migration-retain-until} (and of the Deployment's
   * {@code migration-retry-after}, which wins when later: a person holding the retries). Before the
   * Job has {@code Failed} and both annotations, only a lower bound is known (the later of whatever
   * is recorded), or nothing.
   */
  static NextJob nextJob(Plan.State state, Deployment d, Optional<Job> job) {
    Optional<Instant> onDeployment = DeploymentSettings.of(d).retryAfter();
    if (state == Plan.State.COOLDOWN) {
      return new NextJob(onDeployment, false);
    }
    if (state != Plan.State.FAILED) {
      return NextJob.UNKNOWN;
    }
    Optional<Instant> retry =
        job.map(j -> annotation(j, Keys.RETRY_AFTER)).flatMap(StatusView::parse);
    Optional<Instant> retain =
        job.map(j -> annotation(j, Keys.RETAIN_UNTIL)).flatMap(StatusView::parse);
    Optional<Instant> latest =
        java.util.stream.Stream.of(retry, retain, onDeployment)
            .flatMap(Optional::stream)
            .max(Comparator.naturalOrder());
    boolean complete =
        retry.isPresent()
            && retain.isPresent()
            && job.filter(j -> MigrationJob.hasCondition(j, "Failed")).isPresent();
    return latest.isEmpty() ? NextJob.UNKNOWN : new NextJob(latest, !complete);
  }

  /**
   * What was read for one Deployment.
   *
   * @param statusConfigMap the object named like its status ConfigMap, whoever made it
   * @param job the object named like its migration Job, whoever made it
   * @param events Events of its namespace (any object; only the Deployment's are used)
   * @param jobs the operator's Jobs that were read (for the one-migration-per-database rule)
   * @param pods the migration pods that were read (the same rule: a pod can outlive its Job)
   */
  public record Observed(
      Deployment deployment,
      Optional<ConfigMap> statusConfigMap,
      Optional<Job> job,
      List<Event> events,
      List<Job> jobs,
      List<Pod> pods) {
    public Observed(
        Deployment deployment,
        Optional<ConfigMap> statusConfigMap,
        Optional<Job> job,
        List<Event> events) {
      this(deployment, statusConfigMap, job, events, List.of(), List.of());
    }
  }

  /** One row per opted-in Deployment, by namespace then name; the others are left out. */
  public static List<StatusRow> rows(List<Observed> observed, Instant now) {
    return observed.stream()
        .map(o -> row(o, now))
        .flatMap(Optional::stream)
        .sorted(
            Comparator.comparing(StatusRow::namespace, Comparator.nullsFirst(String::compareTo))
                .thenComparing(StatusRow::deployment))
        .toList();
  }

  /** The literal datastore credentials of the Deployment's containers. */
  private static List<String> literalSecrets(Deployment d) {
    var pod =
        d.getSpec() == null || d.getSpec().getTemplate() == null
            ? null
            : d.getSpec().getTemplate().getSpec();
    return pod == null || pod.getContainers() == null
        ? List.of()
        : pod.getContainers().stream().flatMap(c -> FailureLog.literalSecrets(c).stream()).toList();
  }

  /** The row of one Deployment, or empty when the operator ignores it (not opted in). */
  public static Optional<StatusRow> row(Observed o, Instant now) {
    Instant second = now.truncatedTo(ChronoUnit.SECONDS);
    Deployment d = o.deployment();
    // every Event the state stands for, also those the Deployment lists as sent
    Plan plan =
        PLANNER.decide(
            new Observation(d, o.statusConfigMap(), o.job(), second)
                .withPodCreateFailure(
                    o.job()
                        .filter(MigrationJob::hasNoPod)
                        .flatMap(j -> MigrationJob.podCreateFailure(j, o.events()))
                        // masked as the operator masks it: the Job's literal credentials are
                        // copies of the Deployment's
                        .map(m -> FailureLog.redact(m, literalSecrets(d))))
                .withDatabaseJobs(o.jobs())
                .withDatabasePods(o.pods())
                // the last create's refusal, as the operator recorded it: its next try is not
                // known here
                .withJobRejection(FailedCondition.rejection(d)));
    if (plan.state() == Plan.State.IGNORED) {
      return Optional.empty();
    }
    NextJob next = nextJob(plan.state(), d, o.job());
    // only a time the operator will keep to is given as such; a lower bound is in the words
    Optional<Instant> retryAt = next.atTheEarliest() ? Optional.empty() : next.at();
    Optional<Duration> retryIn = retryAt.map(at -> nonNegative(Duration.between(second, at)));
    return Optional.of(
        new StatusRow(
            d.getMetadata().getNamespace(),
            d.getMetadata().getName(),
            desiredVersion(d),
            o.statusConfigMap().flatMap(cm -> migratedVersion(cm, d)),
            plan.state(),
            stateText(plan, next, second),
            summary(plan, next),
            retryAt,
            retryIn,
            o.job().map(j -> job(j, d)),
            DeploymentEvents.last(o.events(), d).map(e -> event(e, second))));
  }

  /** The version the image of the migrated container stands for, as the planner reads it. */
  static Optional<String> desiredVersion(Deployment d) {
    String container = DeploymentSettings.of(d).containerName();
    if (container == null
        || d.getSpec() == null
        || d.getSpec().getTemplate() == null
        || d.getSpec().getTemplate().getSpec() == null
        || d.getSpec().getTemplate().getSpec().getContainers() == null) {
      return Optional.empty();
    }
    return d.getSpec().getTemplate().getSpec().getContainers().stream()
        .filter(c -> container.equals(c.getName()))
        .findFirst()
        .flatMap(c -> ImageVersion.of(c.getImage()));
  }

  /** The recorded version, only from a record that is this Deployment's. */
  private static Optional<String> migratedVersion(ConfigMap configMap, Deployment d) {
    return StatusRecord.read(configMap, d) instanceof StatusRecord.Reading.Recorded r
        ? r.version()
        : Optional.empty();
  }

  /**
   * The planner's summary, but a failure's retry time as the operator recorded it: the planner here
   * plans with the default timings, not the running operator's.
   */
  static String summary(Plan plan, NextJob next) {
    String cut = "; retrying after ";
    int at = plan.summary().indexOf(cut);
    if (plan.state() != Plan.State.FAILED || at < 0) {
      return plan.summary();
    }
    return plan.summary().substring(0, at)
        + next.at()
            .map(t -> cut + Timestamps.format(t) + (next.atTheEarliest() ? " at the earliest" : ""))
            .orElse("; the retry time is not recorded yet");
  }

  static String stateText(Plan plan, NextJob next, Instant now) {
    return switch (plan.state()) {
      case UP_TO_DATE -> "up to date";
      case MIGRATING -> "migrating";
      case SKIPPED -> "skipped: " + plan.summary().replace(": no migration", "");
      case FAILED, COOLDOWN -> failedText(next, now);
      case BLOCKED -> blockedText(plan);
      case WAITING -> before(before(plan.summary(), " (Job"), " on the same database");
      case DOWNGRADED ->
          "rolled back, schema stays at " + between(plan.summary(), "stays at ", " (");
      case IGNORED -> "ignored";
    };
  }

  private static String failedText(NextJob next, Instant now) {
    String unknown = "failed, retry time not recorded yet";
    Optional<Duration> in = next.at().map(at -> nonNegative(Duration.between(now, at)));
    if (next.atTheEarliest()) {
      // a lower bound already passed says nothing
      return in.filter(d -> !d.isZero())
          .map(d -> "failed, retrying in " + human(d) + " at the earliest")
          .orElse(unknown);
    }
    return in.map(d -> d.isZero() ? "failed, retrying now" : "failed, retrying in " + human(d))
        .orElse(unknown);
  }

  private static String before(String text, String end) {
    int at = text.indexOf(end);
    return at < 0 ? text : text.substring(0, at);
  }

  private static String between(String text, String start, String end) {
    int from = text.indexOf(start);
    return from < 0 ? text : before(text.substring(from + start.length()), end);
  }

  /** What blocks the Deployment, from the Event the planner sends about it (sent last). */
  private static String blockedText(Plan plan) {
    EventReason reason = null;
    for (Step step : plan.steps()) {
      if (step instanceof Step.Emit emit) {
        reason = emit.reason();
      }
    }
    if (reason == null) {
      return "blocked: invalid configuration";
    }
    return switch (reason) {
      case MigrationJobConflict -> "blocked by a Job collision";
      case MigrationStatusConflict -> "blocked by a ConfigMap collision";
      case ContainerNotFound -> "blocked: container not found";
      case MigrationPodNotCreated -> "blocked: migration pod not created";
      case JobRejected -> "blocked: Job rejected";
      case SqliteMigrationMissing -> "blocked: sqlite needs an openfga migrate initContainer";
      default -> "blocked: invalid configuration";
    };
  }

  private static JobInfo job(Job job, Deployment d) {
    String status;
    if (MigrationJob.isTerminating(job)) {
      status = "terminating";
    } else if (MigrationJob.hasCondition(job, "Failed")) {
      status = "failed";
    } else if (MigrationJob.hasCondition(job, "FailureTarget")) {
      status = "failing";
    } else if (MigrationJob.isComplete(job)) {
      status = "complete";
    } else if (MigrationJob.isRunning(job)) {
      status = "running";
    } else {
      status = "pending";
    }
    String version = MigrationJob.describedVersion(job);
    return new JobInfo(
        job.getMetadata().getName(),
        status,
        "unknown".equals(version) ? Optional.empty() : Optional.of(version),
        MigrationJob.isTrusted(job, d));
  }

  private static EventInfo event(Event e, Instant now) {
    Optional<Instant> time = DeploymentEvents.time(e);
    return new EventInfo(
        e.getType() == null ? "" : e.getType(),
        e.getReason() == null ? "" : e.getReason(),
        e.getMessage() == null ? "" : e.getMessage(),
        time,
        time.map(t -> nonNegative(Duration.between(t, now))));
  }

  private static Optional<Instant> parse(String time) {
    return time == null || time.isBlank() ? Optional.empty() : Timestamps.parse(time);
  }

  private static String annotation(Job job, String key) {
    var annotations = job.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }

  private static Duration nonNegative(Duration d) {
    return d.isNegative() ? Duration.ZERO : d;
  }

  /**
   * A duration as {@code kubectl} shows ages: {@code 42s}, {@code 4m10s}, {@code 42m}, {@code
   * 3h20m}, {@code 20h}, {@code 3d4h}, {@code 42d}, {@code 3y}.
   */
  public static String human(Duration d) {
    long s = Math.max(0, d.getSeconds());
    long m = s / 60;
    long h = m / 60;
    long days = h / 24;
    if (s < 120) {
      return s + "s";
    }
    if (m < 10) {
      return s % 60 == 0 ? m + "m" : m + "m" + (s % 60) + "s";
    }
    if (m < 180) {
      return m + "m";
    }
    if (h < 8) {
      return m % 60 == 0 ? h + "h" : h + "h" + (m % 60) + "m";
    }
    if (h < 48) {
      return h + "h";
    }
    if (h < 24 * 8) {
      return h % 24 == 0 ? days + "d" : days + "d" + (h % 24) + "h";
    }
    if (days < 365 * 2) {
      return days + "d";
    }
    return days / 365 + "y";
  }
}
