package dev.openfga.operator.fga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** A tests block is run only if every part of it can be: nothing misspelt passes unchecked. */
class ModelTestsTest {
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
    assertThat(ModelTests.parse(GOOD)).hasSize(1);
    assertThat(ModelTests.parse("tests:\n" + GOOD.indent(2))).hasSize(1);
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
    assertThatThrownBy(() -> ModelTests.parse(yaml))
        .isInstanceOf(ModelTests.InvalidTests.class)
        .hasMessageContaining(message)
        .hasMessageContaining("spec.tests");
  }
}
