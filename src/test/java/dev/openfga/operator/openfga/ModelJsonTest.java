package dev.openfga.operator.openfga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** What counts as the same model: the hash that keys every model write. */
class ModelJsonTest {
  private static final String DSL =
      """
      model
        schema 1.1

      type user

      type document
        relations
          define owner: [user]
          define viewer: [user, user:*] or owner
      """;

  @Test
  void whitespaceAndCommentsInTheDslChangeNothing() throws Exception {
    String reformatted =
        """
        # the documents model
        model
          schema 1.1
        type user


        type document
          relations
            define owner: [user]   # who owns it
            define viewer: [user, user:*] or owner
        """;
    assertThat(ModelJson.fromDsl(reformatted).hash()).isEqualTo(ModelJson.fromDsl(DSL).hash());
  }

  @Test
  void theOrderOfTypesAndOfDirectlyRelatedTypesChangesNothing() throws Exception {
    String reordered =
        """
        model
          schema 1.1
        type document
          relations
            define owner: [user]
            define viewer: [user:*, user] or owner
        type user
        """;
    assertThat(ModelJson.fromDsl(reordered).hash()).isEqualTo(ModelJson.fromDsl(DSL).hash());
  }

  @Test
  void theDslAndTheSameModelAsTheApiReturnsItHashTheSame() throws Exception {
    String fromApi =
        """
        {"id":"01HVMMBCMGZNT3SED4Z17ECXCA","schema_version":"1.1","conditions":{},
         "type_definitions":[
          {"type":"document","metadata":{"module":"","source_info":null,"relations":{
             "owner":{"directly_related_user_types":[{"type":"user","condition":""}],"module":"","source_info":null},
             "viewer":{"directly_related_user_types":[{"type":"user","condition":""},{"type":"user","wildcard":{},"condition":""}],"module":"","source_info":null}}},
           "relations":{
             "owner":{"this":{}},
             "viewer":{"union":{"child":[{"this":{}},{"computedUserset":{"object":"","relation":"owner"}}]}}}},
          {"type":"user","relations":{},"metadata":null}]}
        """;
    ModelJson.Normalised dsl = ModelJson.fromDsl(DSL);
    assertThat(ModelJson.fromJson(fromApi).json()).isEqualTo(dsl.json());
    assertThat(ModelJson.fromJson(fromApi).hash()).isEqualTo(dsl.hash()).startsWith("sha256:");
  }

  private static final String CONDITIONAL_DSL =
      """
      model
        schema 1.1
      type user
      type document
        relations
          define viewer: [user with in_hours]
      condition in_hours(hour: int, tags: list<string>) {
        hour < 17 && tags.size() > 0
      }
      """;

  /** The same model as JSON written by hand: no generic_types where a type has none. */
  private static final String CONDITIONAL_JSON =
      """
      {"schema_version":"1.1",
       "type_definitions":[
        {"type":"user"},
        {"type":"document","relations":{"viewer":{"this":{}}},
         "metadata":{"relations":{"viewer":{"directly_related_user_types":[
           {"type":"user","condition":"in_hours"}]}}}}],
       "conditions":{"in_hours":{"name":"in_hours","expression":"hour < 17 && tags.size() > 0",
         "parameters":{"hour":{"type_name":"TYPE_NAME_INT"},
           "tags":{"type_name":"TYPE_NAME_LIST","generic_types":[{"type_name":"TYPE_NAME_STRING"}]}}}}}
      """;

  @Test
  void aConditionWithoutGenericTypesHashesAsTheApiReturnsIt() throws Exception {
    // as OpenFGA (v1.8, v1.10) answers: generic_types [] on every parameter type, metadata null
    String fromApi =
        """
        {"id":"01HVMMBCMGZNT3SED4Z17ECXCA","schema_version":"1.1",
         "type_definitions":[
          {"type":"user","relations":{},"metadata":null},
          {"type":"document","relations":{"viewer":{"this":{}}},
           "metadata":{"relations":{"viewer":{"directly_related_user_types":[
             {"type":"user","condition":"in_hours"}],"module":"","source_info":null}},
             "module":"","source_info":null}}],
         "conditions":{"in_hours":{"name":"in_hours","expression":"hour < 17 && tags.size() > 0",
           "parameters":{
             "hour":{"type_name":"TYPE_NAME_INT","generic_types":[]},
             "tags":{"type_name":"TYPE_NAME_LIST",
               "generic_types":[{"type_name":"TYPE_NAME_STRING","generic_types":[]}]}},
           "metadata":null}}}
        """;
    ModelJson.Normalised api = ModelJson.fromJson(fromApi);
    assertThat(ModelJson.fromJson(CONDITIONAL_JSON).json()).isEqualTo(api.json());
    assertThat(ModelJson.fromJson(CONDITIONAL_JSON).hash()).isEqualTo(api.hash());
    assertThat(ModelJson.fromDsl(CONDITIONAL_DSL).hash()).isEqualTo(api.hash());
    // a generic type that is there still counts
    String otherList = CONDITIONAL_JSON.replace("TYPE_NAME_STRING", "TYPE_NAME_INT");
    assertThat(ModelJson.fromJson(otherList).hash()).isNotEqualTo(api.hash());
  }

  @Test
  void aChangedRelationIsAnotherModel() throws Exception {
    String changed = DSL.replace("define owner: [user]", "define owner: [user, document#owner]");
    assertThat(ModelJson.fromDsl(changed).hash()).isNotEqualTo(ModelJson.fromDsl(DSL).hash());
  }

  @Test
  void aModelThatParsesButReferencesAnUndefinedTypeIsInvalid() {
    String undefined = DSL.replace("define owner: [user]", "define owner: [team]");
    assertThatThrownBy(() -> ModelJson.fromDsl(undefined))
        .isInstanceOf(ModelJson.InvalidModel.class)
        .hasMessageContaining("not valid")
        .hasMessageContaining("team");
  }

  @Test
  void aDslErrorSaysItsLineAndColumnAsAnEditorCountsThemInTheUsersText() {
    // line 6 (counted from 1, the text's first line), column 26: the space after "[user]"
    String syntax =
        """
        model
          schema 1.1
        type user
        type document
          relations
            define viewer: [user] orr owner
            define owner: [user]
        """;
    assertThatThrownBy(() -> ModelJson.fromDsl(syntax, "spec.model"))
        .isInstanceOf(ModelJson.InvalidModel.class)
        .hasMessageStartingWith("spec.model does not parse: line 6, column 26: ")
        .hasMessageNotContaining("line=");
    // a comment and a blank line before the model count too: line 8, column 20 is "team"
    String undefined =
        """
        # documents

        model
          schema 1.1
        type user
        type document
          relations
            define owner: [team]
        """;
    assertThatThrownBy(() -> ModelJson.fromDsl(undefined, "ConfigMap auth/models key model.fga"))
        .isInstanceOf(ModelJson.InvalidModel.class)
        .hasMessage(
            "ConfigMap auth/models key model.fga is not valid: line 8, column 20: `team`"
                + " is not a valid type.");
    // the first character of the text is line 1, column 1
    assertThatThrownBy(() -> ModelJson.fromDsl("modl\n  schema 1.1\ntype user\n", "spec.model"))
        .hasMessageStartingWith("spec.model does not parse: line 1, column 1: ");
  }

  @Test
  void aJsonModelsErrorNamesNoLineOfTheDslItWasTurnedInto() {
    String undefined =
        CONDITIONAL_JSON.replace(
            "{\"type\":\"user\",\"condition\"", "{\"type\":\"team\",\"condition\"");
    assertThatThrownBy(() -> ModelJson.fromJson(undefined, "spec.modelJson"))
        .isInstanceOf(ModelJson.InvalidModel.class)
        .hasMessageStartingWith("spec.modelJson is not valid: ")
        .hasMessageContaining("`team`")
        .hasMessageNotContaining("line");
  }

  @Test
  void anUnparsableModelSaysWhy() {
    assertThatThrownBy(
            () ->
                ModelJson.fromDsl(
                    "model\n  schema 1.1\ntype document\n  relations\n    define viewer: [usr\n"))
        .isInstanceOf(ModelJson.InvalidModel.class)
        .hasMessageContaining("does not parse");
    assertThatThrownBy(() -> ModelJson.fromJson("{\"type_definitions\":[]}"))
        .isInstanceOf(ModelJson.InvalidModel.class)
        .hasMessageContaining("schema_version");
    assertThatThrownBy(() -> ModelJson.fromJson("{nope"))
        .isInstanceOf(ModelJson.InvalidModel.class)
        .hasMessageContaining("does not parse");
  }
}
