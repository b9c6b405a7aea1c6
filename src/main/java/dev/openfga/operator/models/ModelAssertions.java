package dev.openfga.operator.models;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.stores.FGAStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A model's tests (the {@code tests} block of an {@code .fga.yaml} store file, as {@code fga model
 * test} runs them), read, counted and keyed, pure; {@link AssertionRunner} runs them against the
 * real OpenFGA server before the model becomes current, each in a scratch store of its own, which
 * is deleted afterwards (ADR 0019). Each test writes its {@code tuples}, then every {@code check}
 * assertion ({@code user}/{@code users}, {@code object}/{@code objects}, {@code assertions:
 * {relation: true|false}}, optional {@code context}) and every {@code list_objects} assertion
 * ({@code user}/{@code users}, {@code type}, {@code assertions: {relation: [objects]}}) must hold.
 * The first that does not is the answer. A block with a key this class does not read (a misspelt
 * one, or {@code list_users}), a check without a user, an object or an assertion, or a test that
 * asserts nothing is refused when parsed: a test that cannot run must not pass.
 */
public final class ModelAssertions {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

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
    Optional<String> over = overBudget(tests, max);
    if (over.isPresent()) {
      throw new InvalidTests(over.get());
    }
  }

  /** Why the tests are refused by {@link #withinBudget}, or empty when they are not. */
  public static Optional<String> overBudget(JsonNode tests, int max) {
    long n = checks(tests);
    if (n <= max) {
      return Optional.empty();
    }
    return Optional.of(
        "spec.tests expand to "
            + n
            + " checks (one per user, object and relation of a check, one per user and relation"
            + " of a list_objects), more than the "
            + max
            + " one FGAModel may run (--model-test-max-checks): split the tests, or test fewer"
            + " combinations");
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

  static List<String> oneOrMany(JsonNode node, String one, String many) {
    List<String> values = new ArrayList<>();
    if (node.hasNonNull(one)) {
      values.add(node.get(one).asText());
    }
    node.path(many).forEach(v -> values.add(v.asText()));
    return values;
  }
}
