package dev.openfga.operator.models;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.openfga.ApiException;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.Store;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a model's tests ({@link ModelAssertions}) against the real OpenFGA server before the model
 * becomes current: each test in a scratch store of its own ({@link ModelAssertions#scratchName}),
 * deleted afterwards (ADR 0019), in slices that yield the shared slot when someone waits for one.
 */
public final class AssertionRunner {
  private static final Logger LOG = LoggerFactory.getLogger(AssertionRunner.class);

  private AssertionRunner() {}

  /**
   * Where a run of the tests stands between two slices ({@link #resume}): the test under way, the
   * requests of it already made, and its scratch store and model once made. A new one starts the
   * run from the beginning.
   */
  public static final class Progress {
    private boolean started;
    private int test;
    private int call;
    private String scratchId;
    private String modelId;
    private long made;

    /** Checks and list_objects made so far in this run (for the log). */
    public long requestsMade() {
      return made;
    }
  }

  /** How a slice of a run ended. */
  public enum State {
    /** Every test passed. */
    PASSED,
    /** A test failed; the message says which. */
    FAILED,
    /** Asked to stop: the progress holds where to go on from (its scratch store is kept). */
    YIELDED
  }

  /** The end of a slice: its state, and for {@link State#FAILED} the failed assertion. */
  public record Outcome(State state, String failure) {
    static final Outcome PASSED = new Outcome(State.PASSED, null);
    static final Outcome YIELDED = new Outcome(State.YIELDED, null);
  }

  /**
   * Runs the tests from where {@code progress} stands until they are all done, one fails, or {@code
   * yield} (asked before each test and between its requests) says to stop: then the scratch store
   * of the test under way is kept, and a later call with the same progress goes on from there.
   * Stores named {@code scratchName} an earlier run left are deleted when a run starts, and each
   * test's scratch store once it is done, failed or erred (one that cannot be is logged, and
   * deleted at the next run). A request OpenFGA refuses fails the test ({@link #runOne}); any other
   * error is thrown with the scratch store's name in place of its id, and the progress is then of
   * no use.
   */
  public static Outcome resume(
      FgaApi api,
      String scratchName,
      JsonNode model,
      JsonNode tests,
      Progress progress,
      BooleanSupplier yield)
      throws IOException, InterruptedException {
    if (!progress.started) {
      for (Store left : api.storesNamed(scratchName)) {
        api.deleteStore(left.id());
        LOG.atInfo().log(
            "deleted the scratch store {} ({}) an earlier run left", left.id(), scratchName);
      }
      progress.started = true;
    }
    while (progress.test < tests.size()) {
      if (yield.getAsBoolean()) {
        return Outcome.YIELDED;
      }
      Optional<Outcome> done =
          runOne(api, scratchName, model, tests.get(progress.test), progress, yield);
      if (done.isPresent()) {
        return done.get();
      }
      progress.test++;
      progress.call = 0;
    }
    return Outcome.PASSED;
  }

  /**
   * The test {@code progress} stands at, in a scratch store of its own, as {@code fga model test}
   * keeps each test's tuples apart: no test sees another's tuples, and two may write the same one.
   * Empty when it passed; else its failure, or {@link Outcome#YIELDED}. A request OpenFGA refuses
   * (the model, a tuple, a relation the model does not define: {@link ApiException#refused}) fails
   * the test, so that it is not run again until the model or the tests change; any other error is
   * thrown with the scratch store's name in place of its id, so that the same error reads the same
   * at every run.
   */
  private static Optional<Outcome> runOne(
      FgaApi api,
      String scratchName,
      JsonNode model,
      JsonNode test,
      Progress progress,
      BooleanSupplier yield)
      throws IOException, InterruptedException {
    String name = test.path("name").asText("#" + (progress.test + 1));
    String step = "OpenFGA refused the model";
    boolean keep = false;
    if (progress.scratchId == null) {
      progress.scratchId = api.createStore(scratchName).id();
      progress.modelId = null;
    }
    try {
      if (progress.modelId == null) {
        progress.modelId = api.writeModel(progress.scratchId, model);
        List<JsonNode> tuples = new ArrayList<>();
        test.path("tuples").forEach(tuples::add);
        if (!tuples.isEmpty()) {
          step = "OpenFGA refused its tuples";
          api.writeTuples(progress.scratchId, progress.modelId, tuples);
        }
      }
      step = "OpenFGA refused a check or list_objects";
      List<Call> calls = calls(test);
      while (progress.call < calls.size()) {
        if (progress.call > 0 && yield.getAsBoolean()) {
          keep = true;
          return Optional.of(Outcome.YIELDED);
        }
        Optional<String> failed =
            calls.get(progress.call).run(api, progress.scratchId, progress.modelId, name);
        progress.call++;
        progress.made++;
        if (failed.isPresent()) {
          return Optional.of(new Outcome(State.FAILED, failed.get()));
        }
      }
      return Optional.empty();
    } catch (IOException e) {
      if (e instanceof ApiException refusal && refusal.refused()) {
        return Optional.of(
            new Outcome(
                State.FAILED, "test \"" + name + "\": " + step + " (" + refusal.detail() + ")"));
      }
      // the scratch store and its model are new at every run: named so that the same error
      // reads the same
      String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
      message = message.replace(progress.scratchId, scratchName);
      if (progress.modelId != null && !progress.modelId.isEmpty()) {
        message = message.replace(progress.modelId, "(the tests' model)");
      }
      throw new IOException("running the model's tests: " + message, e);
    } finally {
      if (!keep) {
        deleteScratch(api, scratchName, progress);
      }
    }
  }

  /**
   * Deletes the scratch store of the test under way; one that cannot be is logged, and deleted at
   * the next run (the test's outcome stands).
   */
  private static void deleteScratch(FgaApi api, String scratchName, Progress progress)
      throws InterruptedException {
    String scratch = progress.scratchId;
    progress.scratchId = null;
    progress.modelId = null;
    try {
      api.deleteStore(scratch);
    } catch (IOException e) {
      LOG.atWarn()
          .log(
              "could not delete the scratch store {} ({}) of a model's tests: {}; the next run"
                  + " of these tests deletes it",
              scratch,
              scratchName,
              e.getMessage());
    }
  }

  /** One request of a test: a check or a list_objects, with what it must answer. */
  private sealed interface Call {
    /** The failed assertion, or empty. */
    Optional<String> run(FgaApi api, String store, String modelId, String test)
        throws IOException, InterruptedException;
  }

  private record Check(
      String user, String relation, String object, JsonNode context, boolean expected)
      implements Call {
    @Override
    public Optional<String> run(FgaApi api, String store, String modelId, String test)
        throws IOException, InterruptedException {
      boolean allowed = api.check(store, modelId, user, relation, object, context);
      if (allowed == expected) {
        return Optional.empty();
      }
      return Optional.of(
          "test \""
              + test
              + "\": check "
              + user
              + " "
              + relation
              + " "
              + object
              + ": expected "
              + expected
              + ", got "
              + allowed);
    }
  }

  private record ListObjects(
      String user, String relation, String type, JsonNode context, TreeSet<String> expected)
      implements Call {
    @Override
    public Optional<String> run(FgaApi api, String store, String modelId, String test)
        throws IOException, InterruptedException {
      TreeSet<String> got =
          new TreeSet<>(api.listObjects(store, modelId, user, relation, type, context));
      if (got.equals(expected)) {
        return Optional.empty();
      }
      return Optional.of(
          "test \""
              + test
              + "\": list_objects "
              + user
              + " "
              + relation
              + " "
              + type
              + ": expected "
              + expected
              + ", got "
              + got);
    }
  }

  /**
   * A test's requests in the order they run: every check (user, then object, then relation), then
   * every list_objects (user, then relation). As many as {@link #checks} counts for it.
   */
  private static List<Call> calls(JsonNode test) {
    List<Call> calls = new ArrayList<>();
    for (JsonNode check : test.path("check")) {
      for (String user : ModelAssertions.oneOrMany(check, "user", "users")) {
        for (String object : ModelAssertions.oneOrMany(check, "object", "objects")) {
          for (var assertion : check.path("assertions").properties()) {
            calls.add(
                new Check(
                    user,
                    assertion.getKey(),
                    object,
                    check.get("context"),
                    assertion.getValue().asBoolean()));
          }
        }
      }
    }
    for (JsonNode list : test.path("list_objects")) {
      String type = list.path("type").asText();
      for (String user : ModelAssertions.oneOrMany(list, "user", "users")) {
        for (var assertion : list.path("assertions").properties()) {
          TreeSet<String> expected = new TreeSet<>();
          assertion.getValue().forEach(o -> expected.add(o.asText()));
          calls.add(new ListObjects(user, assertion.getKey(), type, list.get("context"), expected));
        }
      }
    }
    return calls;
  }
}
