package dev.openfga.operator.models;

import dev.openfga.operator.config.GoDuration;
import dev.openfga.operator.models.ModelChoice.Entry;
import dev.openfga.operator.models.ModelChoice.Known;
import dev.openfga.operator.models.ModelObservation.Desired;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import java.time.Duration;
import java.util.Optional;

/**
 * The tests gate of an FGAModel, pure: its tests run before the model becomes current, once per
 * pair of model and tests ({@code status.testedKey}); a failure keeps the id published as it was
 * ({@code TestsFailed}); an error that is not OpenFGA's answer runs them again later and later.
 */
final class TestsGate {
  private TestsGate() {}

  /**
   * An I/O error during the tests: they run again after this, doubled at each such error in a row,
   * at most {@link #TESTS_RETRY_MAX} apart (a suite that fails half way through is not run again
   * every 10 s).
   */
  static final Duration TESTS_RETRY_FIRST = Duration.ofSeconds(10);

  static final Duration TESTS_RETRY_MAX = Duration.ofMinutes(5);

  /**
   * A suite that yielded its slot goes on after this: longer than {@link
   * OpenFgaCallLimit#BUSY_AGAIN}, so that the reconcile it yielded to finds the slot free.
   */
  static final Duration YIELD_PAUSE = OpenFgaCallLimit.BUSY_AGAIN.multipliedBy(2);

  /**
   * The tests gate, once per pair of model and tests (a failing pair is not run again at every
   * look, as each run is a scratch store; a change to the tests alone runs them against the model):
   * empty when the model may become current, else the call that runs them or the end they lead to.
   */
  static Optional<ModelPlan> of(
      ModelDraft d, Desired.Valid desired, Known known, String storeId, String url) {
    if (desired.tests().isEmpty()) {
      d.next.setTestedKey(null);
      d.next.setTestsFailure(null);
      return Optional.empty();
    }
    String key = desired.testsKey().orElseThrow();
    FGAModel.Status old = d.o.model().getStatus();
    Optional<String> failed;
    if (old != null && key.equals(old.getTestedKey())) {
      failed = Optional.ofNullable(old.getTestsFailure()).filter(f -> !f.isBlank());
    } else {
      Optional<ModelPlan> running = testsRunning(d, desired, key);
      if (running.isPresent()) {
        return running;
      }
      failed = d.o.answer(ModelAnswer.TestsRan.class).orElseThrow().failure();
      d.next.setTestedKey(key);
      d.next.setTestsFailure(failed.orElse(null));
    }
    return failed.map(f -> testsFailed(d, known, f, storeId, url));
  }

  /**
   * The tests of {@code key} not run to their end in this reconcile yet: the call that runs them,
   * or the wait after they gave their slot up, or after an error (from the start again, not at
   * once: a server that fails half way through a long suite is not sent it every 10 s).
   */
  private static Optional<ModelPlan> testsRunning(ModelDraft d, Desired.Valid desired, String key) {
    Optional<ModelAnswer.TestsErred> erred = d.o.answer(ModelAnswer.TestsErred.class);
    if (erred.isPresent()) {
      Duration after = retryAfter(erred.get().errorsInARow());
      d.testsNotBefore = Optional.of(erred.get().at().plus(after));
      return Optional.of(
          d.blocked(
              ModelReason.OpenFGARequestFailed,
              erred.get().message() + "; the tests run again in " + GoDuration.format(after),
              after));
    }
    Optional<ModelAnswer.TestsYielded> yielded = d.o.answer(ModelAnswer.TestsYielded.class);
    if (yielded.isPresent()) {
      d.testsNotBefore = Optional.of(yielded.get().at().plus(YIELD_PAUSE));
      return Optional.of(
          d.waitOnly(
              YIELD_PAUSE,
              "the model's tests yield their slot to a reconcile waiting for one after "
                  + yielded.get().requestsMade()
                  + " requests; they go on in "
                  + GoDuration.format(YIELD_PAUSE)));
    }
    if (d.o.answer(ModelAnswer.TestsRan.class).isEmpty()) {
      return Optional.of(
          ModelPlanner.call(
              new ModelStep.RunTests(key, desired.model().json(), desired.tests().get())));
    }
    return Optional.empty();
  }

  /**
   * The tests failed: the id this FGAModel stands for in this store stays published (after a new
   * store: none yet, and the ConfigMap keeps its earlier, matching pair of ids).
   */
  private static ModelPlan testsFailed(
      ModelDraft d, Known known, String failure, String storeId, String url) {
    Optional<String> current = known.current().map(Entry::modelId);
    String publishing = "";
    if (current.isPresent()) {
      Optional<ModelAnswer> published = ModelPublication.answer(d.o);
      if (published.isEmpty()) {
        return ModelPlanner.call(ModelPublication.step(d.o, current.get(), storeId, url));
      }
      publishing =
          ModelPublication.unpublished(d.o, published.get(), current.get())
              .map(u -> "; " + u.message())
              .orElse("");
    }
    return d.blocked(
        ModelReason.TestsFailed,
        failure
            + current
                .map(id -> "; model " + id + " stays published")
                .orElse("; nothing is published")
            + publishing,
        d.again);
  }

  /**
   * How long after the {@code errors}-th I/O error in a row the tests run again: {@link
   * #TESTS_RETRY_FIRST}, doubled at each further one, at most {@link #TESTS_RETRY_MAX}.
   */
  static Duration retryAfter(int errors) {
    int doublings = Math.min(Math.max(errors, 1) - 1, 30);
    Duration after = TESTS_RETRY_FIRST.multipliedBy(1L << doublings);
    return after.compareTo(TESTS_RETRY_MAX) > 0 ? TESTS_RETRY_MAX : after;
  }
}
