package dev.openfga.operator.fga;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
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
public final class ModelTests {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Logger LOG = LoggerFactory.getLogger(ModelTests.class);

  private ModelTests() {}

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
    return SCRATCH_PREFIX + modelUid;
  }

  /** What every scratch store's name starts with; no FGAStore may name a store so. */
  public static final String SCRATCH_PREFIX = "fgamodel-test-";

  /**
   * Runs the tests against {@code model}, each in a scratch store named {@code scratchName};
   * returns the first failed assertion, or empty when all pass. Stores of that name an earlier run
   * left are deleted first, and each scratch store afterwards in every case (one that cannot be is
   * logged, and deleted at the next run).
   */
  public static Optional<String> run(FgaApi api, String scratchName, JsonNode model, JsonNode tests)
      throws IOException, InterruptedException {
    for (FgaApi.Store left : api.storesNamed(scratchName)) {
      api.deleteStore(left.id());
      LOG.atInfo().log(
          "deleted the scratch store {} ({}) an earlier run left", left.id(), scratchName);
    }
    int index = 0;
    for (JsonNode test : tests) {
      index++;
      Optional<String> failed = runOne(api, scratchName, model, test, index);
      if (failed.isPresent()) {
        return failed;
      }
    }
    return Optional.empty();
  }

  /**
   * One test in a scratch store of its own, as {@code fga model test} keeps each test's tuples
   * apart: no test sees another's tuples, and two may write the same one. A request OpenFGA refuses
   * (the model, a tuple, a relation the model does not define: {@link FgaApi.ApiException#refused})
   * fails the test, so that it is not run again until the model or the tests change; any other
   * error is thrown with the scratch store's name in place of its id, so that the same error reads
   * the same at every run.
   */
  private static Optional<String> runOne(
      FgaApi api, String scratchName, JsonNode model, JsonNode test, int index)
      throws IOException, InterruptedException {
    FgaApi.Store scratch = api.createStore(scratchName);
    String name = test.path("name").asText("#" + index);
    String step = "OpenFGA refused the model";
    String modelId = null;
    try {
      modelId = api.writeModel(scratch.id(), model);
      List<JsonNode> tuples = new ArrayList<>();
      test.path("tuples").forEach(tuples::add);
      if (!tuples.isEmpty()) {
        step = "OpenFGA refused its tuples";
        api.writeTuples(scratch.id(), modelId, tuples);
      }
      step = "OpenFGA refused a check or list_objects";
      Optional<String> failed = checks(api, scratch.id(), modelId, name, test.path("check"));
      if (failed.isEmpty()) {
        failed = listObjects(api, scratch.id(), modelId, name, test.path("list_objects"));
      }
      return failed;
    } catch (IOException e) {
      if (e instanceof FgaApi.ApiException refusal && refusal.refused()) {
        return Optional.of("test \"" + name + "\": " + step + " (" + refusal.detail() + ")");
      }
      // the scratch store and its model are new at every run: named so that the same error
      // reads the same
      String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
      message = message.replace(scratch.id(), scratchName);
      if (modelId != null && !modelId.isEmpty()) {
        message = message.replace(modelId, "(the tests' model)");
      }
      throw new IOException("running the model's tests: " + message, e);
    } finally {
      try {
        api.deleteStore(scratch.id());
      } catch (IOException e) {
        // the test's outcome stands; the scratch store is left, and said so
        LOG.atWarn()
            .log(
                "could not delete the scratch store {} ({}) of a model's tests: {}; the next run"
                    + " of these tests deletes it",
                scratch.id(),
                scratchName,
                e.getMessage());
      }
    }
  }

  private static Optional<String> checks(
      FgaApi api, String store, String modelId, String test, JsonNode checks)
      throws IOException, InterruptedException {
    for (JsonNode check : checks) {
      for (String user : oneOrMany(check, "user", "users")) {
        for (String object : oneOrMany(check, "object", "objects")) {
          for (var assertion : check.path("assertions").properties()) {
            boolean expected = assertion.getValue().asBoolean();
            boolean allowed =
                api.check(store, modelId, user, assertion.getKey(), object, check.get("context"));
            if (allowed != expected) {
              return Optional.of(
                  "test \""
                      + test
                      + "\": check "
                      + user
                      + " "
                      + assertion.getKey()
                      + " "
                      + object
                      + ": expected "
                      + expected
                      + ", got "
                      + allowed);
            }
          }
        }
      }
    }
    return Optional.empty();
  }

  private static Optional<String> listObjects(
      FgaApi api, String store, String modelId, String test, JsonNode lists)
      throws IOException, InterruptedException {
    for (JsonNode list : lists) {
      String type = list.path("type").asText();
      for (String user : oneOrMany(list, "user", "users")) {
        for (var assertion : list.path("assertions").properties()) {
          TreeSet<String> expected = new TreeSet<>();
          assertion.getValue().forEach(o -> expected.add(o.asText()));
          TreeSet<String> got =
              new TreeSet<>(
                  api.listObjects(
                      store, modelId, user, assertion.getKey(), type, list.get("context")));
          if (!got.equals(expected)) {
            return Optional.of(
                "test \""
                    + test
                    + "\": list_objects "
                    + user
                    + " "
                    + assertion.getKey()
                    + " "
                    + type
                    + ": expected "
                    + expected
                    + ", got "
                    + got);
          }
        }
      }
    }
    return Optional.empty();
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
