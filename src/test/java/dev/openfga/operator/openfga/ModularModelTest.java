package dev.openfga.operator.openfga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The combiner of modular models, on the cases the Go library's own tests cover (a model with
 * extends; a type or a condition in two files; an extend of a type no file defines; a relation an
 * extend adds twice) and the operator's own (a file the ConfigMap lacks, an fga.mod that is not
 * 1.2).
 */
class ModularModelTest {
  private static final String MOD =
      """
      schema: '1.2'
      contents:
        - core.fga
        - issue-tracker/projects.fga
      """;

  private static final String CORE =
      """
      module core

      type user

      # organisations
      type organization
        relations
          define member: [user]
          define admin: [user with non_expired]

      condition non_expired(expires: timestamp, now: timestamp) {
        now < expires
      }
      """;

  private static final String PROJECTS =
      """
      module issue-tracker

      extend type organization
        relations
          define can_create_project: admin or member  # everyone in it

      extend type user
        relations
          define blocked: [user]

      type project
        relations
          define organization: [organization]
          define viewer: [user with in_office] or member from organization

      condition in_office(ip: ipaddress) {
        ip.in_cidr("10.0.0.0/8")
      }
      """;

  /** The same model in one file. */
  private static final String COMBINED =
      """
      model
        schema 1.2

      type user
        relations
          define blocked: [user]

      type organization
        relations
          define member: [user]
          define admin: [user with non_expired]
          define can_create_project: admin or member

      type project
        relations
          define organization: [organization]
          define viewer: [user with in_office] or member from organization

      condition non_expired(expires: timestamp, now: timestamp) {
        now < expires
      }

      condition in_office(ip: ipaddress) {
        ip.in_cidr("10.0.0.0/8")
      }
      """;

  private static final Map<String, String> FILES =
      Map.of("fga.mod", MOD, "core.fga", CORE, "issue-tracker.projects.fga", PROJECTS);

  private static List<ModularModel.Module> modules(String... nameAndText) {
    List<ModularModel.Module> modules = new java.util.ArrayList<>();
    for (int i = 0; i < nameAndText.length; i += 2) {
      modules.add(new ModularModel.Module(nameAndText[i], nameAndText[i + 1]));
    }
    return modules;
  }

  private static List<String> errors(List<ModularModel.Module> modules) {
    try {
      ModularModel.combine(modules, "1.2");
    } catch (ModularModel.Invalid e) {
      return e.errors();
    }
    throw new AssertionError("combined without an error");
  }

  @Test
  void theExtendsAddTheirRelationsToTheTypesOtherFilesDefine() throws Exception {
    ObjectNode model =
        ModularModel.combine(
            modules("core.fga", CORE, "issue-tracker/projects.fga", PROJECTS), "1.2");
    assertThat(model.path("schema_version").asText()).isEqualTo("1.2");
    assertThat(model.path("type_definitions"))
        .extracting(t -> t.path("type").asText())
        .containsExactly("user", "organization", "project");
    JsonNode organization = model.path("type_definitions").get(1);
    assertThat(organization.path("relations").fieldNames())
        .toIterable()
        .containsExactlyInAnyOrder("member", "admin", "can_create_project");
    assertThat(organization.path("metadata").path("relations").fieldNames())
        .toIterable()
        .containsExactlyInAnyOrder("member", "admin", "can_create_project");
    // a type without relations in its own file gets the extension's, and their metadata
    JsonNode user = model.path("type_definitions").get(0);
    assertThat(user.path("relations").has("blocked")).isTrue();
    assertThat(
            user.path("metadata")
                .path("relations")
                .path("blocked")
                .path("directly_related_user_types")
                .get(0)
                .path("type")
                .asText())
        .isEqualTo("user");
    assertThat(model.path("conditions").fieldNames())
        .toIterable()
        .containsExactlyInAnyOrder("non_expired", "in_office");
  }

  @Test
  void theModularModelIsTheSameModelAsItsFilesWrittenAsOne() throws Exception {
    ModelJson.Normalised modular = ModelJson.fromModFile(MOD, FILES, "fga.mod");
    assertThat(modular.json()).isEqualTo(ModelJson.fromDsl(COMBINED).json());
    assertThat(modular.hash()).isEqualTo(ModelJson.fromDsl(COMBINED).hash());
  }

  @Test
  void aTypeDefinedInTwoFilesIsADuplicateNamedWhereTheSecondIs() {
    String other = "module other\n\ntype user\n\ntype team\n";
    assertThat(errors(modules("core.fga", CORE, "other.fga", other)))
        .containsExactly("other.fga line 3, column 6: duplicate type definition user");
  }

  @Test
  void aTypeDefinedTwiceInOneFileIsADuplicateToo() {
    String twice = "module core\n\ntype user\n\ntype user\n";
    assertThat(errors(modules("core.fga", twice)))
        .containsExactly("core.fga line 5, column 6: duplicate type definition user");
  }

  @Test
  void aConditionInTwoFilesIsADuplicate() {
    String other = "module other\n\ntype team\n\ncondition non_expired(x: int) {\n  x < 10\n}\n";
    assertThat(errors(modules("core.fga", CORE, "other.fga", other)))
        .containsExactly("other.fga line 5, column 11: duplicate condition non_expired");
  }

  @Test
  void anExtendOfATypeNoFileDefinesIsAnError() {
    String ext = "module ext\n\nextend type team\n  relations\n    define member: [user]\n";
    assertThat(errors(modules("core.fga", CORE, "ext.fga", ext)))
        .containsExactly("ext.fga line 3, column 13: extended type team does not exist");
  }

  @Test
  void anExtendCannotRedefineARelationTheTypeHas() {
    String ext = "module ext\n\nextend type organization\n  relations\n    define member: [user]\n";
    assertThat(errors(modules("core.fga", CORE, "ext.fga", ext)))
        .containsExactly(
            "ext.fga line 5, column 12: relation member already exists on type organization");
  }

  @Test
  void twoExtendsAddingTheSameRelationAreAnErrorOnTheSecond() {
    String a = "module a\n\nextend type user\n  relations\n    define friend: [user]\n";
    String b = "module b\n\nextend type user\n  relations\n    define friend: [user]\n";
    assertThat(errors(modules("core.fga", CORE, "a.fga", a, "b.fga", b)))
        .containsExactly("b.fga line 5, column 12: relation friend already exists on type user");
  }

  @Test
  void everyFilesErrorsAreSaidAtOnceAndAFileThatDoesNotParseIsNamed() {
    String broken = "module broken\n\ntype team\n  relations\n    define member [user]\n";
    String dup = "module dup\n\ntype organization\n";
    List<String> errors = errors(modules("core.fga", CORE, "broken.fga", broken, "dup.fga", dup));
    assertThat(errors).hasSize(2);
    assertThat(errors.get(0)).startsWith("broken.fga does not parse: line 5, column ");
    assertThat(errors.get(1))
        .isEqualTo("dup.fga line 3, column 6: duplicate type definition organization");
  }

  @Test
  void aFileWithoutAModuleLineIsNotAModule() {
    String model = "model\n  schema 1.1\n\ntype team\n";
    assertThat(errors(modules("core.fga", CORE, "team.fga", model)))
        .containsExactly("team.fga: file is not a module (it has no module line)");
  }

  @Test
  void aTypeAFileBothDefinesAndExtendsIsTakenAsAnExtensionAsGoTakesIt() throws Exception {
    String both =
        "module both\n\ntype user\n  relations\n    define a: [user]\n\n"
            + "extend type user\n  relations\n    define b: [user]\n";
    ObjectNode model = ModularModel.combine(modules("core.fga", CORE, "both.fga", both), "1.2");
    assertThat(model.path("type_definitions").get(0).path("relations").fieldNames())
        .toIterable()
        .containsExactlyInAnyOrder("a", "b");
  }

  @Test
  void theCombinedModelIsValidatedAsAnyModel() {
    String ext = "module ext\n\nextend type organization\n  relations\n    define owner: ghost\n";
    assertThatThrownBy(
            () ->
                ModelJson.fromModFile(
                    "schema: '1.2'\ncontents:\n  - core.fga\n  - ext.fga\n",
                    Map.of("core.fga", CORE, "ext.fga", ext),
                    "fga.mod"))
        .isInstanceOf(ModelJson.InvalidModel.class)
        .hasMessageStartingWith("fga.mod (combined) is not valid: ")
        .hasMessageContaining("ghost");
  }

  @Test
  void aPathIsLookedUpWithItsSlashesAsDotsThenByItsBaseName() throws Exception {
    ModularModel.ModFile mod = ModularModel.modFile(MOD);
    assertThat(mod.contents()).containsExactly("core.fga", "issue-tracker/projects.fga");
    assertThat(ModularModel.modules(mod, Map.of("core.fga", "c", "projects.fga", "p")))
        .containsExactly(
            new ModularModel.Module("core.fga", "c"),
            new ModularModel.Module("issue-tracker/projects.fga", "p"));
    // the dotted key wins over the base name
    assertThat(
            ModularModel.modules(
                mod,
                Map.of("core.fga", "c", "issue-tracker.projects.fga", "p1", "projects.fga", "p2")))
        .extracting(ModularModel.Module::text)
        .containsExactly("c", "p1");
  }

  @Test
  void aMissingFileIsNamedWithTheKeysTried() throws Exception {
    ModularModel.ModFile mod = ModularModel.modFile(MOD);
    assertThatThrownBy(() -> ModularModel.modules(mod, Map.of("fga.mod", MOD)))
        .isInstanceOf(ModularModel.Invalid.class)
        .hasMessage(
            "no key core.fga for the file core.fga; no key issue-tracker.projects.fga nor"
                + " projects.fga for the file issue-tracker/projects.fga");
    assertThatThrownBy(
            () -> ModelJson.fromModFile(MOD, Map.of("fga.mod", MOD, "core.fga", CORE), "cm"))
        .isInstanceOf(ModelJson.InvalidModel.class)
        .hasMessage(
            "cm: a file it lists is missing: no key issue-tracker.projects.fga nor projects.fga"
                + " for the file issue-tracker/projects.fga");
  }

  @Test
  void aBaseNameTwoListedFilesShareStandsForNeither() throws Exception {
    ModularModel.ModFile mod =
        ModularModel.modFile("schema: '1.2'\ncontents:\n  - a/roles.fga\n  - b/roles.fga\n");
    assertThatThrownBy(
            () -> ModularModel.modules(mod, Map.of("roles.fga", "r", "b.roles.fga", "b")))
        .isInstanceOf(ModularModel.Invalid.class)
        .hasMessage(
            "no key a.roles.fga (another file listed is also named roles.fga) for the file"
                + " a/roles.fga");
  }

  @Test
  void twoPathsWrittenAsTheSameKeyAreRefused() throws Exception {
    ModularModel.ModFile mod =
        ModularModel.modFile("schema: '1.2'\ncontents:\n  - a/b.fga\n  - a.b.fga\n");
    assertThatThrownBy(() -> ModularModel.modules(mod, Map.of("a.b.fga", "x")))
        .isInstanceOf(ModularModel.Invalid.class)
        .hasMessage("a/b.fga and a.b.fga are both written as the key a.b.fga");
  }

  @Test
  void anFgaModOfAnotherSchemaThan12IsRefusedWithItsLine() {
    assertThatThrownBy(
            () ->
                ModelJson.fromModFile(
                    "schema: '1.1'\ncontents:\n  - core.fga\n", Map.of("core.fga", CORE), "cm"))
        .isInstanceOf(ModelJson.InvalidModel.class)
        .hasMessage(
            "cm is not a valid fga.mod: line 1, column 9: unsupported schema version, fga.mod"
                + " only supported in version `1.2`");
  }

  @Test
  void anFgaModListingNothingOrAFileTwiceIsRefused() {
    assertThatThrownBy(() -> ModularModel.modFile("schema: '1.2'\ncontents: []\n"))
        .hasMessage("contents lists no file");
    assertThatThrownBy(
            () -> ModularModel.modFile("schema: '1.2'\ncontents:\n  - a.fga\n  - a.fga\n"))
        .hasMessage("contents lists a.fga twice");
    assertThatThrownBy(() -> ModularModel.modFile("schema: [1.2"))
        .isInstanceOf(ModularModel.Invalid.class)
        .hasMessageStartingWith("does not parse: ");
  }
}
