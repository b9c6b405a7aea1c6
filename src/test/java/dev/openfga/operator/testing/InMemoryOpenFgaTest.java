package dev.openfga.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.openfga.operator.openfga.ApiException;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.Model;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleApi;
import dev.openfga.operator.openfga.TupleCondition;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.openfga.TuplePage;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The in-memory OpenFGA answers tuple writes and reads as the real 1.8.16 and 1.10.0 servers were
 * probed to answer: atomic writes, the write options of 1.10 (dropped by 1.8), the limit of a
 * write, the validation messages, pages and their tokens; through {@link FgaApi} as the operator
 * calls it.
 */
class InMemoryOpenFgaTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String DSL =
      """
      model
        schema 1.1
      type user
      type group
        relations
          define member: [user]
      type org
        relations
          define admin: [user, group#member]
          define member: [user, user:*, user with in_hours]
          define guest: [user with in_hours]
          define viewer: admin or member
      condition in_hours(hour: int) {
        hour >= 9
      }
      """;

  private final InMemoryOpenFga server = new InMemoryOpenFga();
  private FakeOpenFga openfga;
  private FgaApi api;
  private TupleApi tuples;
  private String store;
  private String modelId;

  @BeforeEach
  void start() throws Exception {
    openfga = new FakeOpenFga(server);
    api =
        new FgaApi(FgaApi.defaultHttpClient(), URI.create(openfga.url()), Optional::empty, d -> {});
    tuples = api.tuples();
    store = api.createStore("app").id();
    modelId = api.writeModel(store, ModelJson.fromDsl(DSL).json());
  }

  @AfterEach
  void stop() {
    openfga.close();
  }

  private static TupleKey key(String text) {
    return TupleKey.parse(text);
  }

  private static Tuple plain(String text) {
    return Tuple.of(key(text), null);
  }

  private static TupleCondition inHours(String context) throws Exception {
    return new TupleCondition("in_hours", context == null ? null : JSON.readTree(context));
  }

  private void write(List<Tuple> writes, List<TupleKey> deletes, boolean ignore) throws Exception {
    tuples.write(store, null, writes, deletes, ignore, ignore);
  }

  private ApiException refused(List<Tuple> writes, List<TupleKey> deletes, boolean ignore) {
    return catchThrowableOfType(() -> write(writes, deletes, ignore), ApiException.class);
  }

  @Test
  void aWriteIsAppliedWholeOrNotAtAll() throws Exception {
    write(
        List.of(plain("org:acme#admin@user:anne"), plain("org:acme#member@user:bob")),
        List.of(),
        false);
    assertThat(server.tuples(store))
        .containsOnlyKeys("org:acme#admin@user:anne", "org:acme#member@user:bob");
    assertThat(server.tuplesWritten).hasValue(2);

    // one tuple that exists: neither the new tuple nor the delete is applied
    ApiException duplicate =
        refused(
            List.of(plain("org:acme#admin@user:carl"), plain("org:acme#admin@user:anne")),
            List.of(key("org:acme#member@user:bob")),
            false);
    assertThat(duplicate.duplicateOrMissing()).isTrue();
    assertThat(duplicate.detail())
        .isEqualTo(
            "HTTP 400 write_failed_due_to_invalid_input: cannot write a tuple which already exists:"
                + " user: 'user:anne', relation: 'admin', object: 'org:acme': tuple to be written"
                + " already existed or the tuple to be deleted did not exist");
    // a delete of one that does not exist: the write beside it is not applied either
    ApiException missing =
        refused(
            List.of(plain("org:acme#admin@user:carl")),
            List.of(key("org:acme#admin@user:zoe")),
            false);
    assertThat(missing.duplicateOrMissing()).isTrue();
    assertThat(missing.detail())
        .isEqualTo(
            "HTTP 400 write_failed_due_to_invalid_input: cannot delete a tuple which does not exist:"
                + " user: 'user:zoe', relation: 'admin', object: 'org:acme': tuple to be written"
                + " already existed or the tuple to be deleted did not exist");
    assertThat(server.tuples(store))
        .containsOnlyKeys("org:acme#admin@user:anne", "org:acme#member@user:bob");
    assertThat(server.tuplesWritten).hasValue(2);
    assertThat(server.tuplesDeleted).hasValue(0);

    // the same key written and deleted in one request
    ApiException twice =
        refused(
            List.of(plain("org:acme#admin@user:anne")),
            List.of(key("org:acme#admin@user:anne")),
            false);
    assertThat(twice.code()).isEqualTo("cannot_allow_duplicate_tuples_in_one_request");
    assertThat(twice.refused()).isTrue();

    write(
        List.of(plain("org:acme#admin@user:carl")),
        List.of(key("org:acme#member@user:bob")),
        false);
    assertThat(server.tuples(store))
        .containsOnlyKeys("org:acme#admin@user:anne", "org:acme#admin@user:carl");
    assertThat(server.tuplesDeleted).hasValue(1);
    assertThat(server.writeRequests).hasValue(5);
    assertThat(server.log).contains("write +2 -0", "write +2 -1", "write +1 -1");
  }

  @Test
  void version110SkipsDuplicatesAndMissingWhenAskedButNotAnotherCondition() throws Exception {
    write(
        List.of(Tuple.of(key("org:acme#member@user:anne"), inHours("{\"hour\":9}"))),
        List.of(),
        false);
    Instant written = server.tuples(store).get("org:acme#member@user:anne").timestamp();

    // the same condition (9 is 9.0) is a duplicate, skipped; the missing delete too
    write(
        List.of(
            Tuple.of(key("org:acme#member@user:anne"), inHours("{\"hour\":9.0}")),
            plain("org:acme#admin@user:bob")),
        List.of(key("org:acme#admin@user:zoe")),
        true);
    assertThat(server.tuples(store))
        .containsOnlyKeys("org:acme#member@user:anne", "org:acme#admin@user:bob");
    assertThat(server.tuples(store).get("org:acme#member@user:anne").timestamp())
        .isEqualTo(written);
    assertThat(server.tuplesWritten).hasValue(2);
    assertThat(server.tuplesDeleted).hasValue(0);

    // another condition on a tuple that exists: 409, nothing applied
    ApiException conflict =
        refused(
            List.of(
                Tuple.of(key("org:acme#member@user:anne"), inHours("{\"hour\":10}")),
                plain("org:acme#admin@user:carl")),
            List.of(),
            true);
    assertThat(conflict.conflict()).isTrue();
    assertThat(conflict.refused()).isFalse();
    assertThat(conflict.detail())
        .isEqualTo(
            "HTTP 409 Aborted: transactional write failed due to conflict: attempted to write a"
                + " tuple which already exists with a different condition: user: 'user:anne',"
                + " relation: 'member', object: 'org:acme'");
    assertThat(server.tuples(store)).doesNotContainKey("org:acme#admin@user:carl");
  }

  @Test
  void version1816DropsTheOptionsAndAnswersAsWithoutThem() throws Exception {
    server.version = "1.8.16";
    write(List.of(plain("org:acme#admin@user:anne")), List.of(), false);
    assertThat(
            refused(List.of(plain("org:acme#admin@user:anne")), List.of(), true)
                .duplicateOrMissing())
        .isTrue();
    assertThat(
            refused(List.of(), List.of(key("org:acme#admin@user:zoe")), true).duplicateOrMissing())
        .isTrue();
    assertThat(server.tuples(store)).containsOnlyKeys("org:acme#admin@user:anne");

    server.version = "1.10.0";
    write(
        List.of(plain("org:acme#admin@user:anne")), List.of(key("org:acme#admin@user:zoe")), true);
    assertThat(server.tuples(store)).containsOnlyKeys("org:acme#admin@user:anne");
  }

  @Test
  void aWriteOfMoreThanTheLimitIsRefusedWhole() throws Exception {
    List<Tuple> hundred = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      hundred.add(plain("org:o" + i + "#admin@user:anne"));
    }
    // 99 writes and 2 deletes: 101
    ApiException limit =
        refused(
            hundred.subList(0, 99),
            List.of(key("org:x#admin@user:a"), key("org:y#admin@user:a")),
            false);
    assertThat(limit.entityLimit()).isTrue();
    assertThat(limit.detail())
        .isEqualTo(
            "HTTP 400 exceeded_entity_limit: The number of write operations exceeds the allowed"
                + " limit of 100");
    assertThat(server.tuples(store)).isEmpty();

    write(hundred, List.of(), false);
    assertThat(server.tuples(store)).hasSize(100);

    server.maxTuplesPerWrite = 2;
    ApiException lower =
        refused(
            List.of(
                plain("org:a#admin@user:b"),
                plain("org:b#admin@user:b"),
                plain("org:c#admin@user:b")),
            List.of(),
            false);
    assertThat(lower.detail()).endsWith("exceeds the allowed limit of 2");
  }

  @Test
  void tuplesTheModelDoesNotAllowAreRefusedWithOpenFgasReasons() throws Exception {
    record Case(Tuple tuple, String message) {}
    List<Case> cases =
        List.of(
            new Case(
                plain("org:acme#owner@user:carl"),
                "Invalid tuple 'org:acme#owner@user:carl'. Reason: relation 'org#owner' not found"),
            new Case(
                plain("repo:x#admin@user:carl"),
                "Invalid tuple 'repo:x#admin@user:carl'. Reason: type 'repo' not found"),
            new Case(
                plain("org:acme#admin@carl"),
                "Invalid tuple 'org:acme#admin@carl'. Reason: the 'user' field must be an object"
                    + " (e.g. document:1) or an 'object#relation' or a typed wildcard (e.g."
                    + " group:*)"),
            new Case(
                Tuple.of(key("org:acme#member@user:carl"), new TupleCondition("nope", null)),
                "Invalid tuple 'org:acme#member@user:carl (condition nope)'. Reason: undefined"
                    + " condition"),
            new Case(
                plain("org:o#guest@user:b"),
                "Invalid tuple 'org:o#guest@user:b'. Reason: condition is missing"),
            new Case(
                plain("org:o#admin@user:*"),
                "Invalid tuple 'org:o#admin@user:*'. Reason: the typed wildcard 'user:*' is not an"
                    + " allowed type restriction for 'org#admin'"),
            new Case(
                plain("org:o#viewer@user:b"),
                "Invalid tuple 'org:o#viewer@user:b'. Reason: type 'user' is not an allowed type"
                    + " restriction for 'org#viewer'"));
    for (Case c : cases) {
      ApiException e =
          refused(List.of(plain("org:ok#admin@user:anne"), c.tuple()), List.of(), false);
      assertThat(e.invalidTuple()).as(c.message()).isTrue();
      assertThat(e.detail()).isEqualTo("HTTP 400 validation_error: " + c.message());
    }
    assertThat(server.tuples(store)).isEmpty();

    // what the model allows: a userset, a wildcard, a condition it defines
    write(
        List.of(
            plain("org:o#admin@group:g#member"),
            plain("org:o#member@user:*"),
            Tuple.of(key("org:o#guest@user:b"), inHours("{\"hour\":8}")),
            Tuple.of(key("org:o#member@user:c"), inHours(null))),
        List.of(),
        false);
    assertThat(server.tuples(store)).hasSize(4);
  }

  @Test
  void writesAreCheckedAgainstTheModelTheyNameElseTheNewest() throws Exception {
    String newer =
        api.writeModel(
            store,
            ModelJson.fromDsl(
                    "model\n  schema 1.1\ntype user\ntype org\n  relations\n"
                        + "    define owner: [user]\n")
                .json());
    // the newest has owner, not admin
    assertThat(refused(List.of(plain("org:a#admin@user:b")), List.of(), false).invalidTuple())
        .isTrue();
    write(List.of(plain("org:a#owner@user:b")), List.of(), false);
    tuples.write(store, modelId, List.of(plain("org:a#admin@user:b")), List.of(), false, false);
    assertThat(server.tuples(store)).containsOnlyKeys("org:a#admin@user:b", "org:a#owner@user:b");

    ApiException unknown =
        catchThrowableOfType(
            () ->
                tuples.write(
                    store,
                    "01HVMMBCMGZNT3SED4Z17EXXXX",
                    List.of(plain("org:a#owner@user:c")),
                    List.of(),
                    false,
                    false),
            ApiException.class);
    assertThat(unknown.code()).isEqualTo("authorization_model_not_found");
    assertThat(unknown.refused()).isFalse();

    assertThat(api.model(store, modelId)).map(m -> m.path("id").asText()).contains(modelId);
    assertThat(api.model(store, "01HVMMBCMGZNT3SED4Z17EXXXX")).isEmpty();
    assertThat(api.newestModel(store)).map(Model::id).contains(newer);
  }

  @Test
  void aStoreWithoutAModelTakesAnyTuple() throws Exception {
    String bare = api.createStore("bare").id();
    tuples.write(bare, null, List.of(plain("anything:1#whatever@user:x")), List.of(), false, false);
    assertThat(server.tuples(bare)).containsOnlyKeys("anything:1#whatever@user:x");
    assertThat(api.newestModel(bare)).isEmpty();
  }

  @Test
  void readsPageAHundredAtATimeWithTokensAndFilterByObjectOrKey() throws Exception {
    for (int i = 0; i < 250; i++) {
      server.putTuple(store, plain(String.format("org:o%03d#admin@user:anne", i)));
    }
    server.putTuple(store, plain("org:o007#member@user:bob"));
    List<Tuple> all = new ArrayList<>();
    List<String> tokens = new ArrayList<>();
    String token = "";
    do {
      TuplePage page = tuples.readAll(store, token);
      all.addAll(page.tuples());
      token = page.continuationToken();
      tokens.add(token);
    } while (!token.isEmpty());
    assertThat(tokens).containsExactly("100", "200", "");
    assertThat(all).hasSize(251);
    assertThat(all).extracting(t -> t.key().text()).doesNotHaveDuplicates().isSorted();
    assertThat(server.readRequests).hasValue(3);

    assertThat(tuples.readObject(store, "org:o007", "").tuples())
        .extracting(t -> t.key().text())
        .containsExactly("org:o007#admin@user:anne", "org:o007#member@user:bob");
    assertThat(tuples.readOne(store, key("org:o007#member@user:bob"))).isPresent();
    assertThat(tuples.readOne(store, key("org:o007#member@user:anne"))).isEmpty();

    // what the API refuses: a page over 100, a filter without object type or id and user
    assertThat(post("/read", "{\"page_size\":101}"))
        .startsWith("400 ")
        .contains("\"code\":\"page_size_invalid\"");
    assertThat(post("/read", "{\"tuple_key\":{\"object\":\"org:\"}}"))
        .startsWith("400 ")
        .contains("\"code\":\"validation_error\"");
    // a type and a user: that user's tuples on every object of the type
    assertThat(post("/read", "{\"tuple_key\":{\"object\":\"org:\",\"user\":\"user:bob\"}}"))
        .startsWith("200 ")
        .contains("\"object\":\"org:o007\"", "\"continuation_token\":\"\"")
        .doesNotContain("user:anne");
    assertThat(post("/read", "{\"continuation_token\":\"x\"}"))
        .startsWith("400 ")
        .contains("invalid_continuation_token");
  }

  @Test
  void aReadGivesTheConditionAndTheServersTimestamp() throws Exception {
    Instant before = Instant.now();
    write(
        List.of(Tuple.of(key("org:acme#member@user:anne"), inHours("{\"hour\":9}"))),
        List.of(),
        false);
    Tuple read = tuples.readOne(store, key("org:acme#member@user:anne")).orElseThrow();
    assertThat(TupleCondition.same(read.condition(), inHours("{\"hour\":9}"))).isTrue();
    assertThat(read.timestamp()).isBetween(before, Instant.now());
    assertThat(read.timestamp()).isEqualTo(server.tuples(store).get(read.key().text()).timestamp());
  }

  @Test
  void aFailedWriteAppliesNothingAndTheHookRunsAfterEachAppliedWrite() throws Exception {
    AtomicInteger hooked = new AtomicInteger();
    server.afterWrite = () -> hooked.set(server.tuples(store).size());
    server.failWritesAfter.set(1);
    write(List.of(plain("org:a#admin@user:b")), List.of(), false);
    ApiException failed = refused(List.of(plain("org:b#admin@user:b")), List.of(), false);
    assertThat(failed.status()).isEqualTo(500);
    assertThat(failed.code()).isEqualTo("internal_error");
    assertThat(server.failWritesAfter).hasValue(-1);
    write(List.of(plain("org:c#admin@user:b")), List.of(), false);
    assertThat(server.tuples(store)).containsOnlyKeys("org:a#admin@user:b", "org:c#admin@user:b");
    // the hook saw the second applied write's tuple already in the store
    assertThat(hooked).hasValue(2);
    // a write is not retried after a 500: three requests
    assertThat(server.writeRequests).hasValue(3);
  }

  @Test
  void theApplicationsOwnWritesAndADeletedStoresTuples() throws Exception {
    write(List.of(plain("org:a#admin@user:b")), List.of(), false);
    server.removeTuple(store, key("org:a#admin@user:b"));
    server.putTuple(store, plain("org:z#admin@user:b"));
    assertThat(tuples.readAll(store, "").tuples())
        .extracting(t -> t.key().text())
        .containsExactly("org:z#admin@user:b");
    assertThat(server.tuplesDeleted).hasValue(0);
    api.deleteStore(store);
    assertThat(server.tuples(store)).isEmpty();
  }

  /** A raw POST to the store's API (what FgaApi never sends); the answer's body. */
  private String post(String path, String body) throws Exception {
    HttpResponse<String> answer =
        FgaApi.defaultHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(openfga.url() + "/stores/" + store + path))
                    .POST(HttpRequest.BodyPublishers.ofString(body))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    JsonNode parsed = JSON.readTree(answer.body());
    return answer.statusCode() + " " + parsed;
  }
}
