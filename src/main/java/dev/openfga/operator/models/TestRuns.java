package dev.openfga.operator.models;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The FGAModels' tests between reconciles, by FGAModel uid: a suite that yielded its slot, or waits
 * to run again after an I/O error, with where it stands. In memory only: after a restart a suite
 * runs again from its start (deleting the scratch store the earlier run left).
 */
final class TestRuns {
  /** A run of tests not looked at for this long is forgotten (its FGAModel was deleted). */
  static final Duration FORGOTTEN = Duration.ofMinutes(15);

  private final Map<String, Run> runs = new ConcurrentHashMap<>();

  /** One FGAModel's tests for one key (model and tests): where they stand, and when to go on. */
  static final class Run {
    final String key;
    AssertionRunner.Progress progress = new AssertionRunner.Progress();
    int errors;
    Instant notBefore = Instant.MIN;
    Instant touched;

    Run(String key, Instant now) {
      this.key = key;
      this.touched = now;
    }
  }

  /**
   * Until when the tests of {@code key} (null: none) of the FGAModel {@code uid} wait, if they
   * wait. Runs not looked at for {@link #FORGOTTEN} are forgotten, and so is a run of other tests:
   * the model or the tests changed, and they run anew (a run starts by deleting the scratch store
   * an earlier one left).
   */
  Optional<Instant> look(String uid, String key, Instant now) {
    runs.values().removeIf(r -> r.touched.isBefore(now.minus(FORGOTTEN)));
    Run run = runs.get(uid);
    if (run == null) {
      return Optional.empty();
    }
    if (!run.key.equals(key)) {
      runs.remove(uid);
      return Optional.empty();
    }
    if (!now.isBefore(run.notBefore)) {
      return Optional.empty();
    }
    run.touched = now;
    return Optional.of(run.notBefore);
  }

  /** The run of {@code key} for {@code uid}: the one under way, or a new one. */
  Run start(String uid, String key, Instant now) {
    return runs.compute(
        uid, (u, run) -> run != null && run.key.equals(key) ? run : new Run(key, now));
  }

  /** The run ended on an I/O error at {@code at}: it starts over; the errors in a row. */
  int erred(String uid, Instant at) {
    Run run = runs.get(uid);
    run.errors++;
    run.progress = new AssertionRunner.Progress();
    run.touched = at;
    return run.errors;
  }

  /** The run gave its slot up at {@code at}. */
  void yielded(String uid, Instant at) {
    runs.get(uid).touched = at;
  }

  /** The run waits until {@code until} before it goes on. */
  void holdUntil(String uid, Instant until) {
    Run run = runs.get(uid);
    if (run != null) {
      run.notBefore = until;
    }
  }

  /** The run came to its end. */
  void done(String uid) {
    runs.remove(uid);
  }
}
