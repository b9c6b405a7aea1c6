package dev.openfga.operator.migration.rules;

import java.time.Duration;
import java.util.List;

/** What the operator decided for one Deployment: writes in order, then what happens next. */
public record Plan(State state, String summary, List<Step> steps, Next next) {

  /** Where the Deployment stands, for logs, metrics and the status view. */
  public enum State {
    /** Not opted in (or not an OpenFGA Deployment): nothing is done. */
    IGNORED,
    /** The recorded version is the desired one. */
    UP_TO_DATE,
    /** The engine needs no Job (memory, sqlite). */
    SKIPPED,
    /** A migration Job is being created, runs, or is being replaced. */
    MIGRATING,
    /** The last migration failed; a retry is scheduled. */
    FAILED,
    /** Waiting for the retry cooldown before creating a Job. */
    COOLDOWN,
    /** Waiting for another Deployment's migration Job on the same database to finish. */
    WAITING,
    /**
     * The Deployment runs an older version than the recorded one (a rollback): no migration, the
     * schema stays at the newer version.
     */
    DOWNGRADED,
    /** Something the operator does not own, or bad input, is in the way. */
    BLOCKED
  }

  /** What the framework is told after the steps ran. */
  public sealed interface Next {
    /** Nothing to do until something changes. */
    record Done() implements Next {}

    /** Look again after this long (a safety net when an informer event is expected too). */
    record After(Duration delay) implements Next {}

    /** User error: reported through an Event; retried with backoff. */
    record Blocked(String problem) implements Next {}
  }

  public static Plan ignored(String summary) {
    return new Plan(State.IGNORED, summary, List.of(), new Next.Done());
  }

  static Next after(Duration delay) {
    return new Next.After(delay);
  }

  static Next done() {
    return new Next.Done();
  }
}
