package dev.openfga.operator.models;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.testing.Fixtures;
import org.junit.jupiter.api.Test;

/** A tests block is run only if every part of it can be: nothing misspelt passes unchecked. */
class ModelAssertionsTest {
  private static final String GOOD =
      """
      - name: owners can view
        tuples:
          - {user: "user:anne", relation: owner, object: "doc:1"}
        check:
          - user: user:anne
            object: doc:1
            assertions: {viewer: true}
        list_objects:
          - user: user:anne
            type: doc
            assertions: {viewer: ["doc:1"]}
      """;

  @Test
  void aTestsBlockOfChecksAndListObjectsIsRead() throws Exception {
    assertThat(ModelAssertions.parse(GOOD)).hasSize(1);
    assertThat(ModelAssertions.parse("tests:\n" + GOOD.indent(2))).hasSize(1);
  }

  @Test
  void whatWouldBeSkippedInSilenceIsRefusedByName() {
    assertRefused(GOOD.replace("object: doc:1", "objet: doc:1"), "unknown key \"objet\"");
    assertRefused(GOOD.replace("check:", "checks:"), "unknown key \"checks\"");
    assertRefused(GOOD.replace("list_objects:", "list_users:"), "unknown key \"list_users\"");
    assertRefused(GOOD.replace("      object: doc:1\n", ""), "check needs object or objects");
    assertRefused(
        GOOD.replace("assertions: {viewer: true}", "assertions: {}"), "check needs assertions");
    assertRefused(
        GOOD.replace("assertions: {viewer: true}", "assertions: {viewer: yes please}"),
        "the assertion of viewer must be true or false");
    assertRefused(GOOD.replace("type: doc", "type: \"\""), "list_objects needs a type");
    assertRefused("- name: empty\n  tuples: []\n", "test \"empty\" asserts nothing");
  }

  private static void assertRefused(String yaml, String message) {
    assertThatThrownBy(() -> ModelAssertions.parse(yaml))
        .isInstanceOf(ModelAssertions.InvalidTests.class)
        .hasMessageContaining(message)
        .hasMessageContaining("spec.tests");
  }

  @Test
  void theChecksAreCountedAsTheyExpandWithoutRunningThem() throws Exception {
    // 3 users (user and users) x 2 objects x 2 relations, and 2 users x 3 relations of a
    // list_objects; a second test adds 1
    JsonNode tests =
        ModelAssertions.parse(
            """
            - name: many
              check:
                - user: user:anne
                  users: [user:bob, user:carl]
                  objects: [doc:1, doc:2]
                  assertions: {viewer: true, editor: false}
              list_objects:
                - users: [user:anne, user:bob]
                  type: doc
                  assertions: {viewer: [], editor: [], owner: []}
            - name: one
              check:
                - {user: user:anne, object: doc:1, assertions: {viewer: true}}
            """);

    assertThat(ModelAssertions.checks(tests)).isEqualTo(3 * 2 * 2 + 2 * 3 + 1);
  }

  @Test
  void testsBeyondTheBudgetAreRefusedNamingTheCountAndTheLimit() throws Exception {
    // 7 users x 11 objects x 13 relations = 1001
    JsonNode tests = ModelAssertions.parse(combinations(7, 11, 13));
    assertThat(ModelAssertions.checks(tests)).isEqualTo(1001);

    assertThatThrownBy(() -> ModelAssertions.withinBudget(tests, 1000))
        .isInstanceOf(ModelAssertions.InvalidTests.class)
        .hasMessageContaining("spec.tests expand to 1001 checks")
        .hasMessageContaining("more than the 1000 one FGAModel may run")
        .hasMessageContaining("--model-test-max-checks");
    // at the limit: allowed
    ModelAssertions.withinBudget(tests, 1001);
    ModelAssertions.withinBudget(ModelAssertions.parse(combinations(10, 10, 10)), 1000);
  }

  private static String combinations(int users, int objects, int relations) {
    return Fixtures.modelTestCombinations(users, objects, relations);
  }
}
