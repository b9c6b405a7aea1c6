package dev.openfga.operator.models;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.openfga.operator.openfga.ApiException;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.openfga.Store;
import dev.openfga.operator.stores.FGAStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A model's tests (the {@code tests} block of an {@code .fga.yaml} store file, as {@code fga model
 * test} runs them) run against the real OpenFGA server before the model becomes current: each in a
 * scratch store of its own, which is deleted afterwards (ADR 0019). Each test writes its {@code
 * tuples}, then every {@code check} assertion ({@code user}/{@code users}, {@code object}/{@code
 * objects}, {@code assertions: {relation: true|false}}, optional {@code context}) and every {@code
 * list_objects} assertion ({@code user}/{@code users}, {@code type}, {@code assertions: {relation:
 * [objects]}}) must hold. The first that does not is the answer. A block with a key this class does
 * not read (a misspelt one, or {@code list_users}), a check without a user, an object or an
 * assertion, or a test that asserts nothing is refused when parsed: a test that cannot run must not
 * pass.
 */
public final class ModelAssertions {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Logger LOG = LoggerFactory.getLogger(ModelAssertions.class);

  private ModelAssertions() {}

  /** The tests block does not read as tests; the message says where. */
  public static final class InvalidTests extends Exception {
    InvalidTests(String message) {
      super(message);
    }
  }

  /** The tests, parsed: a list, with or without its {@code tests:} key. */
  public static JsonNode parse(String yaml) throws InvalidTests {
    JsonNode node;
    try {
      node = YAML.readTree(yaml);
    } catch (IOException e) {
      throw new InvalidTests("spec.tests is not YAML: " + e.getMessage());
    }
    if (node != null && node.isObject() && node.has("tests")) {
      node = node.get("tests");
    }
    if (node == null || !node.isArray()) {
      throw new InvalidTests("spec.tests must be a list of tests (the tests block of a .fga.yaml)");
    }
    int index = 0;
    for (JsonNode test : node) {
      index++;
      if (!test.isObject()) {
        throw new InvalidTests("spec.tests: every test must be a mapping with name, tuples, check");
      }
      String name = "spec.tests: test \"" + test.path("name").asText("#" + index) + "\"";
      only(test, name, "name", "description", "tuples", "check", "list_objects");
      if (!test.path("check").isArray() && !test.path("list_objects").isArray()) {
        throw new InvalidTests(name + " asserts nothing: it needs check or list_objects");
      }
      for (JsonNode check : test.path("check")) {
        String where = name + ": check";
        only(check, where, "user", "users", "object", "objects", "assertions", "context");
        oneOrManyRequired(check, where, "user", "users");
        oneOrManyRequired(check, where, "object", "objects");
        assertions(check, where, JsonNode::isBoolean, "true or false");
      }
      for (JsonNode list : test.path("list_objects")) {
        String where = name + ": list_objects";
        only(list, where, "user", "users", "type", "assertions", "context");
        oneOrManyRequired(list, where, "user", "users");
        if (list.path("type").asText("").isBlank()) {
          throw new InvalidTests(where + " needs a type");
        }
        assertions(list, where, JsonNode::isArray, "a list of objects");
      }
    }
    return node;
  }

  /**
   * Refuses keys other than {@code allowed}, so that a misspelt one is not silently skipped (a test
   * the operator cannot run must not pass).
   */
  private static void only(JsonNode node, String where, String... allowed) throws InvalidTests {
    if (!node.isObject()) {
      throw new InvalidTests(where + " must be a mapping");
    }
    List<String> keys = List.of(allowed);
    for (var names = node.fieldNames(); names.hasNext(); ) {
      String key = names.next();
      if (!keys.contains(key)) {
        throw new InvalidTests(
            where + ": unknown key \"" + key + "\" (this operator reads " + keys + ")");
      }
    }
  }

  private static void oneOrManyRequired(JsonNode node, String where, String one, String many)
      throws InvalidTests {
    if (oneOrMany(node, one, many).isEmpty()) {
      throw new InvalidTests(where + " needs " + one + " or " + many);
    }
  }

  private static void assertions(
      JsonNode node, String where, java.util.function.Predicate<JsonNode> valid, String what)
      throws InvalidTests {
    JsonNode assertions = node.path("assertions");
    if (!assertions.isObject() || assertions.isEmpty()) {
      throw new InvalidTests(where + " needs assertions: {relation: " + what + "}");
    }
    for (var assertion : assertions.properties()) {
      if (!valid.test(assertion.getValue())) {
        throw new InvalidTests(
            where + ": the assertion of " + assertion.getKey() + " must be " + what);
      }
    }
  }

  /**
   * {@code sha256:} of a normalised model's hash and the tests' text: what {@code status.testedKey}
   * records, so that a model and tests that were run together are not run again.
   */
  public static String key(String modelHash, String testsText) {
    return ModelJson.sha256(modelHash + "\n" + testsText);
  }

  /**
   * The name of an FGAModel's scratch stores: its uid, so that what an earlier run of the same
   * FGAModel's tests left behind (a crash, a lost create answer, a failed delete) is found by name
   * and nothing else is; the same FGAModel's tests never run twice at once.
   */
  public static String scratchName(String modelUid) {
    return FGAStore.SCRATCH_PREFIX + modelUid;
  }

  /**
   * The requests the tests expand to, counted without making them: one check per user, object and
   * relation of each {@code check}, one per user and relation of each {@code list_objects} (what
   * {@code --model-test-max-checks} bounds). Pure; saturates at {@link Long#MAX_VALUE}.
   */
  public static long checks(JsonNode tests) {
    long n = 0;
    for (JsonNode test : tests) {
      for (JsonNode check : test.path("check")) {
        n =
            plus(
                n,
                times(
                    times(count(check, "user", "users"), count(check, "object", "objects")),
                    check.path("assertions").size()));
      }
      for (JsonNode list : test.path("list_objects")) {
        n = plus(n, times(count(list, "user", "users"), list.path("assertions").size()));
      }
    }
    return n;
  }

  /**
   * Refuses tests that expand to more than {@code max} checks ({@link #checks}), naming the count
   * and the limit: decided before any of them runs, so that one FGAModel cannot hold the shared
   * OpenFGA slots with a suite of tens of thousands of requests.
   */
  public static void withinBudget(JsonNode tests, int max) throws InvalidTests {
    long n = checks(tests);
    if (n > max) {
      throw new InvalidTests(
          "spec.tests expand to "
              + n
              + " checks (one per user, object and relation of a check, one per user and relation"
              + " of a list_objects), more than the "
              + max
              + " one FGAModel may run (--model-test-max-checks): split the tests, or test fewer"
              + " combinations");
    }
  }

  private static long count(JsonNode node, String one, String many) {
    return (node.hasNonNull(one) ? 1 : 0) + node.path(many).size();
  }

  private static long times(long a, long b) {
    try {
      return Math.multiplyExact(a, b);
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  private static long plus(long a, long b) {
    try {
      return Math.addExact(a, b);
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

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
        String scratch = progress.scratchId;
        progress.scratchId = null;
        progress.modelId = null;
        try {
          api.deleteStore(scratch);
        } catch (IOException e) {
          // the test's outcome stands; the scratch store is left, and said so
          LOG.atWarn()
              .log(
                  "could not delete the scratch store {} ({}) of a model's tests: {}; the next run"
                      + " of these tests deletes it",
                  scratch,
                  scratchName,
                  e.getMessage());
        }
      }
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
      for (String user : oneOrMany(check, "user", "users")) {
        for (String object : oneOrMany(check, "object", "objects")) {
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
      for (String user : oneOrMany(list, "user", "users")) {
        for (var assertion : list.path("assertions").properties()) {
          TreeSet<String> expected = new TreeSet<>();
          assertion.getValue().forEach(o -> expected.add(o.asText()));
          calls.add(new ListObjects(user, assertion.getKey(), type, list.get("context"), expected));
        }
      }
    }
    return calls;
  }

  private static List<String> oneOrMany(JsonNode node, String one, String many) {
    List<String> values = new ArrayList<>();
    if (node.hasNonNull(one)) {
      values.add(node.get(one).asText());
    }
    node.path(many).forEach(v -> values.add(v.asText()));
    return values;
  }
}
