package dev.openfga.operator.migration.rules;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The decision: a pure function of an {@link Observation} (and the operator's {@link Policy}) to a
 * {@link Plan} — SPEC section 4's rules, each a small function of the {@link Facts} that decides or
 * leaves it to the next, composed here in their order. No client, no clock, no I/O.
 */
public final class Planner {
  /** Rules 1–5 and the proxies: is the Deployment looked at, and can its Job be built? */
  private static final List<Rule> DEPLOYMENT =
      List.of(
          DiscoveryRule::decide,
          ContainerRule::decide,
          AnnotationRule::decide,
          ImageRule::decide,
          EngineRule::decide,
          SidecarRule::decide,
          RecordRule::decide);

  /** Rule 6 and rollbacks: is a migration needed at all? */
  private static final List<Rule> NEEDED = List.of(DowngradeRule::decide, UpToDateRule::decide);

  private static final Rule COOLDOWN = CooldownRule::decide;
  private static final Rule DATABASE = DatabaseRule::decide;
  private static final Rule CREATE = CreateRule::decide;

  /** Rule 7 without a Job: when one is created. */
  private static final List<Rule> NEW_JOB =
      List.of(COOLDOWN, DATABASE, RejectedRule::decide, CREATE);

  /** Rules 7 and 10 with the Job there: what it needs next. */
  private static final List<Rule> JOB =
      List.of(
          TerminatingJobRule::decide,
          ForeignJobRule::decide,
          FailedJobRule::decide,
          OtherVersionRule::decide,
          CompleteJobRule::decide,
          RunningJobRule::decide);

  private final Policy policy;

  public Planner(Policy policy) {
    this.policy = Objects.requireNonNull(policy);
  }

  /**
   * The plan to carry out: {@link #decide} without the Events about a lasting state that the
   * Deployment lists as sent, and with the write that keeps that list true ({@link Reported}).
   */
  public Plan plan(Observation o) {
    Plan plan = decide(o);
    return plan.state() == Plan.State.IGNORED ? plan : Reported.settle(o.deployment(), plan);
  }

  /**
   * The decision with every Event it stands for, as if none had been sent before: what the status
   * view reads (a blocked Deployment's reason is its Event's).
   */
  public Plan decide(Observation o) {
    Facts f = Facts.of(o, policy);
    return first(f, DEPLOYMENT)
        .or(() -> migration(afterRecord(f)))
        .orElseThrow(() -> new IllegalStateException("no rule decided"));
  }

  /**
   * The databases of the Job the Deployment wants created, before its database is looked at (SPEC
   * section 9): the reconcile then observes the Jobs and migration pods on them. Empty: no rule
   * leads to a create (not needed, blocked, waiting for the cooldown, or a Job is there).
   */
  public Optional<List<String>> wantedJobDatabases(Observation o) {
    Facts f = Facts.of(o, policy);
    return reaches(f, DATABASE) ? Optional.of(f.databases()) : Optional.empty();
  }

  /**
   * Whether the decision creates the Job, with what was observed so far: the reconcile then reads
   * what the caches cannot know before a create (a record they do not hold, a name taken by a Job
   * they do not hold; SPEC rules 5 and 7).
   */
  public boolean createsJob(Observation o) {
    return reaches(Facts.of(o, policy), CREATE);
  }

  /** The version the Deployment runs (rules 2 and 3), when it can be told. */
  public static Optional<String> desiredVersion(Deployment d) {
    String name = DeploymentSettings.of(d).containerName();
    return Facts.containers(d).stream()
        .filter(c -> c.getName() != null && c.getName().equals(name))
        .findFirst()
        .flatMap(c -> ImageVersion.of(c.getImage()));
  }

  /** The rules after the record's start from its notes: the record re-owned, a request later. */
  private static Facts afterRecord(Facts f) {
    return f.withNotes(RecordRule.notes(f)).withNotes(Rerun.notes(f));
  }

  private static Optional<Plan> migration(Facts f) {
    return first(f, NEEDED).or(() -> first(f, f.job().isEmpty() ? NEW_JOB : JOB));
  }

  /** Whether, without a Job, no rule before {@code rule} decides. */
  private static boolean reaches(Facts f, Rule rule) {
    if (f.job().isPresent() || first(f, DEPLOYMENT).isPresent()) {
      return false;
    }
    Facts g = afterRecord(f);
    if (first(g, NEEDED).isPresent()) {
      return false;
    }
    return first(g, NEW_JOB.subList(0, NEW_JOB.indexOf(rule))).isEmpty();
  }

  private static Optional<Plan> first(Facts f, List<Rule> rules) {
    for (Rule rule : rules) {
      Optional<Plan> plan = rule.decide(f);
      if (plan.isPresent()) {
        return plan;
      }
    }
    return Optional.empty();
  }
}
