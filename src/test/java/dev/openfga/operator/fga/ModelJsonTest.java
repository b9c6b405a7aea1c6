package dev.openfga.operator.fga;

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
