package dev.openfga.operator.openfga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.Base64;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The thin OpenFGA client against a scripted HTTP server: pages, retries (and where it must not
 * retry), errors that name the call, and the credentials (never in a message).
 */
class FgaApiTest {
  private record Answer(int status, String body) {}

  private record Seen(String method, String uri, String authorization, String body) {}

  private HttpServer server;
  private final Deque<Answer> answers = new ArrayDeque<>();
  private final List<Seen> seen = new CopyOnWriteArrayList<>();
  private final List<Duration> slept = new CopyOnWriteArrayList<>();
  private FgaApi api;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", this::answer);
    server.start();
    api = api(() -> Optional.of("key-1"));
  }

  private FgaApi api(FgaApi.Bearer bearer) {
    return new FgaApi(FgaApi.defaultHttpClient(), URI.create(url() + "/"), bearer, slept::add);
  }

  private String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  private synchronized void answer(HttpExchange exchange) throws IOException {
    String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    seen.add(
        new Seen(
            exchange.getRequestMethod(),
            exchange.getRequestURI().toString(),
            exchange.getRequestHeaders().getFirst("Authorization"),
            body));
    Answer a = answers.isEmpty() ? new Answer(500, "{\"code\":\"no_answer\"}") : answers.poll();
    byte[] out = a.body().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(a.status(), out.length == 0 ? -1 : out.length);
    try (OutputStream o = exchange.getResponseBody()) {
      o.write(out);
    }
  }

  private void then(int status, String body) {
    answers.add(new Answer(status, body));
  }

  @Test
  void listsEveryPageOfStoresWithTheBearerToken() throws Exception {
    then(200, "{\"stores\":[{\"id\":\"A1\",\"name\":\"app\"}],\"continuation_token\":\"t/2=\"}");
    then(
        200,
        "{\"stores\":[{\"id\":\"B2\",\"name\":\"other\"},{\"id\":\"C3\",\"name\":\"app\"}],\"continuation_token\":\"\"}");

    assertThat(api.storesNamed("app")).extracting(Store::id).containsExactly("A1", "C3");
    assertThat(seen)
        .extracting(Seen::uri)
        .containsExactly(
            "/stores?page_size=100", "/stores?page_size=100&continuation_token=t%2F2%3D");
    assertThat(seen).extracting(Seen::authorization).containsOnly("Bearer key-1");
  }

  @Test
  void aStoreTheServerDoesNotKnowIsEmpty() throws Exception {
    then(404, "{\"code\":\"store_id_not_found\",\"message\":\"store not found\"}");
    assertThat(api.getStore("01HVMMBCMGZNT3SED4Z17ECXCA")).isEmpty();
    then(200, "{\"id\":\"X\",\"name\":\"app\",\"deleted_at\":\"2026-01-01T00:00:00Z\"}");
    assertThat(api.getStore("X")).isEmpty();
    then(200, "{\"id\":\"X\",\"name\":\"app\",\"created_at\":\"2026-01-01T00:00:00Z\"}");
    assertThat(api.getStore("X")).contains(new Store("X", "app", "2026-01-01T00:00:00Z"));
  }

  @Test
  void readsAreRetriedWithBackoffOn5xxAnd429() throws Exception {
    then(503, "{}");
    then(429, "{}");
    then(200, "{\"stores\":[]}");
    assertThat(api.listStores()).isEmpty();
    assertThat(seen).hasSize(3);
    assertThat(slept).containsExactly(Duration.ofMillis(200), Duration.ofMillis(400));
  }

  @Test
  void readsGiveUpAfterTheLastAttemptWithAMessageNamingTheCall() {
    for (int i = 0; i < FgaApi.ATTEMPTS; i++) {
      then(500, "{\"code\":\"internal_error\",\"message\":\"boom\"}");
    }
    assertThatThrownBy(() -> api.listStores())
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("GET " + url() + "/stores: HTTP 500 internal_error: boom")
        .hasMessageNotContaining("key-1");
    assertThat(seen).hasSize(FgaApi.ATTEMPTS);
  }

  /** The message of the error {@code listStores} ends with after this one answer (a 4xx). */
  private String errorFor(int status, String body) {
    then(status, body);
    Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> api.listStores());
    assertThat(thrown).isInstanceOf(ApiException.class);
    return thrown.getMessage();
  }

  @Test
  void aBodyThatIsNotJsonIsNeverCopiedOnlyItsStatus() {
    String page = "<html><body>Bad gateway: upstream 10.0.3.7 said secret-token-123</body></html>";
    assertThat(errorFor(403, page))
        .isEqualTo("GET " + url() + "/stores: HTTP 403, not an OpenFGA error body")
        .doesNotContain("secret-token-123");
  }

  @Test
  void jsonWithoutCodeOrMessageIsNotCopied() {
    assertThat(errorFor(404, "{\"error\":\"route 10.0.3.7 not found\",\"path\":\"/x\"}"))
        .isEqualTo("GET " + url() + "/stores: HTTP 404, not an OpenFGA error body");
    assertThat(errorFor(400, "[\"validation_error\"]"))
        .endsWith(": HTTP 400, not an OpenFGA error body");
    // code and message of another type than text or number: not copied either
    assertThat(errorFor(400, "{\"code\":{\"x\":\"leak\"},\"message\":[\"leak\"]}"))
        .endsWith(": HTTP 400, not an OpenFGA error body");
  }

  @Test
  void openFgasErrorJsonGivesItsCodeAndMessageAndNothingElse() {
    assertThat(
            errorFor(
                400,
                "{\"code\":\"validation_error\",\"message\":\"invalid store name\","
                    + "\"details\":[\"internal detail\"]}"))
        .isEqualTo("GET " + url() + "/stores: HTTP 400 validation_error: invalid store name");
    // grpc-gateway's own errors have a numeric code
    assertThat(errorFor(404, "{\"code\":5,\"message\":\"Not Found\",\"details\":[]}"))
        .endsWith(": HTTP 404 5: Not Found");
  }

  @Test
  void aHugeOrMultiLineMessageIsCutAndFlattened() {
    String huge = "x".repeat(100_000);
    String message =
        errorFor(400, "{\"code\":\"validation_error\",\"message\":\"a\\nb " + huge + "\"}");
    assertThat(message)
        .startsWith("GET " + url() + "/stores: HTTP 400 validation_error: a b xxx")
        .doesNotContain("\n")
        .hasSizeLessThan(("GET " + url() + "/stores: HTTP 400 validation_error: ").length() + 300);
    assertThat(errorFor(400, "{\"code\":\"" + huge + "\"}"))
        .hasSizeLessThan(("GET " + url() + "/stores: HTTP 400 ").length() + 300);
  }

  @Test
  void aSuccessfulAnswerThatIsNotJsonIsNotQuotedEither() {
    then(200, "SSH-2.0-OpenSSH_9.6 secret-banner");
    assertThatThrownBy(() -> api.listStores())
        .hasMessage("GET " + url() + "/stores: HTTP 200, not an OpenFGA answer body (not JSON)")
        .hasMessageNotContaining("secret-banner");
  }

  @Test
  void aServerThatDoesNotSpeakHttpIsNotQuoted() throws Exception {
    // e.g. a URL pointed at an SSH port: the HTTP client's message quotes the status line it read
    try (var socket = new java.net.ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread banner =
          new Thread(
              () -> {
                while (!socket.isClosed()) {
                  try (var client = socket.accept()) {
                    var in =
                        new java.io.BufferedReader(
                            new java.io.InputStreamReader(
                                client.getInputStream(), StandardCharsets.US_ASCII));
                    for (String line = in.readLine();
                        line != null && !line.isEmpty();
                        line = in.readLine()) {
                      // the request, read to its end
                    }
                    client
                        .getOutputStream()
                        .write(
                            "SSH-2.0-OpenSSH_9.6 secret-banner\r\n\r\n"
                                .getBytes(StandardCharsets.US_ASCII));
                  } catch (IOException e) {
                    return;
                  }
                }
              });
      banner.setDaemon(true);
      banner.start();
      FgaApi ssh =
          new FgaApi(
              FgaApi.defaultHttpClient(),
              URI.create("http://127.0.0.1:" + socket.getLocalPort()),
              Optional::empty,
              slept::add);
      Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(ssh::listStores);
      assertThat(thrown)
          .isInstanceOf(IOException.class)
          .hasMessageStartingWith("GET http://127.0.0.1:" + socket.getLocalPort() + "/stores: ")
          .hasMessageNotContaining("secret-banner")
          .hasMessageNotContaining("SSH-2.0");
    }
  }

  @Test
  void aTokenEndpointAnsweringSomethingElseThanJsonIsNotQuoted() throws Exception {
    then(200, "<html>login page secret-banner</html>");
    Credentials credentials =
        Credentials.fromSecretData(
            "ns/creds",
            Map.of(
                "clientId", b64("client"),
                "clientSecret", b64("s3cret"),
                "apiTokenIssuer", b64(url() + "/token")));
    assertThatThrownBy(
            () ->
                credentials.bearer(
                    FgaApi.defaultHttpClient(),
                    Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC)))
        .isInstanceOf(Credentials.CredentialsException.class)
        .hasMessageContaining("answered HTTP 200 without a JSON body")
        .hasMessageNotContaining("secret-banner");
  }

  @Test
  void aCreateIsNotRetriedAfterA5xxItMayHaveCommitted() {
    then(500, "{\"code\":\"internal_error\"}");
    then(201, "{\"id\":\"A1\",\"name\":\"app\"}");
    assertThatThrownBy(() -> api.createStore("app")).isInstanceOf(ApiException.class);
    assertThat(seen).hasSize(1);
  }

  @Test
  void aCreateIsRetriedWhenRateLimited() throws Exception {
    then(429, "{}");
    then(201, "{\"id\":\"A1\",\"name\":\"app\"}");
    assertThat(api.createStore("app").id()).isEqualTo("A1");
    assertThat(seen).extracting(Seen::body).containsOnly("{\"name\":\"app\"}");
  }

  @Test
  void aCreateIsRetriedWhenTheConnectionWasRefused() throws Exception {
    int port;
    try (var socket = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort(); // closed again: nothing listens there
    }
    FgaApi refused =
        new FgaApi(
            FgaApi.defaultHttpClient(),
            URI.create("http://127.0.0.1:" + port),
            Optional::empty,
            slept::add);
    assertThatThrownBy(() -> refused.createStore("app"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("POST http://127.0.0.1:" + port + "/stores: ConnectException");
    assertThat(slept).hasSize(FgaApi.ATTEMPTS - 1);
  }

  @Test
  void deletingAStoreAlreadyGoneSucceeds() throws Exception {
    then(404, "{\"code\":\"store_id_not_found\"}");
    api.deleteStore("A1");
    assertThat(seen)
        .extracting(Seen::method, Seen::uri)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("DELETE", "/stores/A1"));
  }

  @Test
  void anIdThatIsNotAnIdIsNeverPutIntoAPath() {
    assertThatThrownBy(() -> api.getStore("../x")).isInstanceOf(IllegalArgumentException.class);
    assertThat(seen).isEmpty();
  }

  @Test
  void modelsAreListedNewestFirstOverPagesAndWrittenWithTheirThreeFields() throws Exception {
    then(
        200,
        "{\"authorization_models\":[{\"id\":\"M2\",\"schema_version\":\"1.1\",\"type_definitions\":[]}],\"continuation_token\":\"n\"}");
    then(
        200,
        "{\"authorization_models\":[{\"id\":\"M1\",\"schema_version\":\"1.1\",\"type_definitions\":[]}]}");
    assertThat(api.listModels("S1")).extracting(Model::id).containsExactly("M2", "M1");

    then(201, "{\"authorization_model_id\":\"M3\"}");
    var model =
        new ObjectMapper()
            .readTree(
                "{\"id\":\"ignored\",\"schema_version\":\"1.1\",\"type_definitions\":[{\"type\":\"user\"}]}");
    assertThat(api.writeModel("S1", model)).isEqualTo("M3");
    Seen write = seen.get(seen.size() - 1);
    assertThat(write.uri()).isEqualTo("/stores/S1/authorization-models");
    assertThat(write.body())
        .isEqualTo("{\"schema_version\":\"1.1\",\"type_definitions\":[{\"type\":\"user\"}]}");
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aWriteSendsItsTuplesConditionsAndOptionsInPlace() throws Exception {
    then(200, "{}");
    var tuples = api.tuples();
    tuples.write(
        "S1",
        "M1",
        List.of(
            Tuple.of(
                new TupleKey("org:acme", "admin", "user:anne"),
                new TupleCondition("in_hours", JSON.readTree("{\"from\":9}"))),
            Tuple.of(
                new TupleKey("org:acme", "member", "group:x#member"),
                new TupleCondition("in_hours", null)),
            Tuple.of(new TupleKey("doc:1", "viewer", "user:*"), null)),
        List.of(new TupleKey("org:acme", "admin", "user:bob")),
        true,
        true);
    assertThat(seen.get(0).method()).isEqualTo("POST");
    assertThat(seen.get(0).uri()).isEqualTo("/stores/S1/write");
    assertThat(seen.get(0).body())
        .isEqualTo(
            "{\"authorization_model_id\":\"M1\","
                + "\"writes\":{\"tuple_keys\":["
                + "{\"user\":\"user:anne\",\"relation\":\"admin\",\"object\":\"org:acme\","
                + "\"condition\":{\"name\":\"in_hours\",\"context\":{\"from\":9}}},"
                + "{\"user\":\"group:x#member\",\"relation\":\"member\",\"object\":\"org:acme\","
                + "\"condition\":{\"name\":\"in_hours\"}},"
                + "{\"user\":\"user:*\",\"relation\":\"viewer\",\"object\":\"doc:1\"}],"
                + "\"on_duplicate\":\"ignore\"},"
                + "\"deletes\":{\"tuple_keys\":["
                + "{\"user\":\"user:bob\",\"relation\":\"admin\",\"object\":\"org:acme\"}],"
                + "\"on_missing\":\"ignore\"}}");

    // no options when not asked; an empty writes or deletes is left out; no model: the newest
    TupleKey anne = new TupleKey("org:acme", "admin", "user:anne");
    then(200, "{}");
    tuples.write("S1", "M1", List.of(Tuple.of(anne, null)), List.of(anne), false, false);
    then(200, "{}");
    tuples.write("S1", null, List.of(), List.of(anne), false, true);
    then(200, "{}");
    tuples.write("S1", null, List.of(Tuple.of(anne, null)), List.of(), true, true);
    String key = "{\"user\":\"user:anne\",\"relation\":\"admin\",\"object\":\"org:acme\"}";
    assertThat(seen.subList(1, 4))
        .extracting(Seen::body)
        .containsExactly(
            "{\"authorization_model_id\":\"M1\",\"writes\":{\"tuple_keys\":["
                + key
                + "]},\"deletes\":{\"tuple_keys\":["
                + key
                + "]}}",
            "{\"deletes\":{\"tuple_keys\":[" + key + "],\"on_missing\":\"ignore\"}}",
            "{\"writes\":{\"tuple_keys\":[" + key + "],\"on_duplicate\":\"ignore\"}}");
  }

  @Test
  void aWriteIsNotRetriedAfterAnAnswerItMayHaveCommittedButIsWhenRateLimited() throws Exception {
    TupleKey anne = new TupleKey("org:acme", "admin", "user:anne");
    then(500, "{\"code\":\"internal_error\"}");
    assertThatThrownBy(
            () ->
                api.tuples()
                    .write("S1", null, List.of(Tuple.of(anne, null)), List.of(), false, false))
        .isInstanceOf(ApiException.class)
        .hasMessageContaining("POST " + url() + "/stores/S1/write: HTTP 500 internal_error");
    assertThat(seen).hasSize(1);
    then(429, "{}");
    then(200, "{}");
    api.tuples().write("S1", null, List.of(Tuple.of(anne, null)), List.of(), false, false);
    assertThat(seen).hasSize(3);
  }

  @Test
  void theScratchStoresTuplesAreWrittenAsTheyAreInWritesOfAHundred() throws Exception {
    List<com.fasterxml.jackson.databind.JsonNode> tuples = new java.util.ArrayList<>();
    for (int i = 0; i < 150; i++) {
      tuples.add(
          JSON.readTree(
              "{\"object\":\"doc:" + i + "\",\"relation\":\"viewer\",\"user\":\"user:a\"}"));
    }
    then(200, "{}");
    then(200, "{}");
    api.writeTuples("S1", "M1", tuples);
    assertThat(seen).hasSize(2);
    var first = JSON.readTree(seen.get(0).body());
    var second = JSON.readTree(seen.get(1).body());
    assertThat(first.path("authorization_model_id").asText()).isEqualTo("M1");
    assertThat(first.path("writes").path("tuple_keys")).hasSize(100);
    assertThat(first.path("writes").path("tuple_keys").get(0)).isEqualTo(tuples.get(0));
    assertThat(second.path("writes").path("tuple_keys")).hasSize(50);
    assertThat(second.path("writes").path("tuple_keys").get(49)).isEqualTo(tuples.get(149));
    assertThat(first.has("deletes")).isFalse();
    assertThat(first.path("writes").has("on_duplicate")).isFalse();
  }

  @Test
  void readPagesGiveTuplesWithConditionAndTimestampAndPassTheToken() throws Exception {
    then(
        200,
        "{\"tuples\":[{\"key\":{\"user\":\"user:anne\",\"relation\":\"admin\",\"object\":\"org:acme\","
            + "\"condition\":{\"name\":\"in_hours\",\"context\":{\"from\":9}}},"
            + "\"timestamp\":\"2026-03-04T05:06:07.123456789Z\"},"
            + "{\"key\":{\"user\":\"user:bob\",\"relation\":\"member\",\"object\":\"org:acme\"},"
            + "\"timestamp\":\"2026-03-04T05:06:08Z\"}],\"continuation_token\":\"eyJ/=\"}");
    then(200, "{\"tuples\":[],\"continuation_token\":\"\"}");

    TuplePage page = api.tuples().readObject("S1", "org:acme", "");
    assertThat(page.last()).isFalse();
    assertThat(page.continuationToken()).isEqualTo("eyJ/=");
    assertThat(page.tuples())
        .containsExactly(
            new Tuple(
                new TupleKey("org:acme", "admin", "user:anne"),
                new TupleCondition("in_hours", JSON.readTree("{\"from\":9}")),
                Instant.parse("2026-03-04T05:06:07.123456789Z")),
            new Tuple(
                new TupleKey("org:acme", "member", "user:bob"),
                null,
                Instant.parse("2026-03-04T05:06:08Z")));
    assertThat(api.tuples().readObject("S1", "org:acme", page.continuationToken()).last()).isTrue();

    assertThat(seen)
        .extracting(Seen::method, Seen::uri)
        .containsOnly(tuple("POST", "/stores/S1/read"));
    assertThat(seen)
        .extracting(Seen::body)
        .containsExactly(
            "{\"tuple_key\":{\"object\":\"org:acme\"},\"page_size\":100,"
                + "\"consistency\":\"HIGHER_CONSISTENCY\"}",
            "{\"tuple_key\":{\"object\":\"org:acme\"},\"page_size\":100,"
                + "\"continuation_token\":\"eyJ/=\",\"consistency\":\"HIGHER_CONSISTENCY\"}");
  }

  @Test
  void aReadOfTheWholeStoreHasNoFilterAndOneKeyReadsExactlyIt() throws Exception {
    then(200, "{\"tuples\":[],\"continuation_token\":\"\"}");
    assertThat(api.tuples().readAll("S1", "t1").tuples()).isEmpty();
    assertThat(seen.get(0).body())
        .isEqualTo(
            "{\"page_size\":100,\"continuation_token\":\"t1\",\"consistency\":\"HIGHER_CONSISTENCY\"}");

    TupleKey anne = new TupleKey("org:acme", "admin", "user:anne");
    then(200, "{\"tuples\":[],\"continuation_token\":\"\"}");
    assertThat(api.tuples().readOne("S1", anne)).isEmpty();
    assertThat(seen.get(1).body())
        .isEqualTo(
            "{\"tuple_key\":{\"user\":\"user:anne\",\"relation\":\"admin\",\"object\":\"org:acme\"},"
                + "\"page_size\":100,\"consistency\":\"HIGHER_CONSISTENCY\"}");
    then(
        200,
        "{\"tuples\":[{\"key\":{\"user\":\"user:anne\",\"relation\":\"admin\",\"object\":\"org:acme\"},"
            + "\"timestamp\":\"2026-03-04T05:06:07Z\"}],\"continuation_token\":\"\"}");
    assertThat(api.tuples().readOne("S1", anne))
        .contains(new Tuple(anne, null, Instant.parse("2026-03-04T05:06:07Z")));
  }

  @Test
  void aReadIsRetriedOn5xx() throws Exception {
    then(503, "{}");
    then(200, "{\"tuples\":[]}");
    assertThat(api.tuples().readAll("S1", "").last()).isTrue();
    assertThat(seen).hasSize(2);
  }

  /** The error a write ends with after this one answer. */
  private ApiException writeError(int status, String body) {
    then(status, body);
    TupleKey anne = new TupleKey("org:acme", "admin", "user:anne");
    Throwable thrown =
        org.assertj.core.api.Assertions.catchThrowable(
            () ->
                api.tuples()
                    .write("S1", null, List.of(Tuple.of(anne, null)), List.of(), false, false));
    assertThat(thrown).isInstanceOf(ApiException.class);
    return (ApiException) thrown;
  }

  @Test
  void theWriteErrorsOpenFgaAnswersAreToldApart() {
    ApiException duplicate =
        writeError(
            400,
            "{\"code\":\"write_failed_due_to_invalid_input\",\"message\":\"cannot write a tuple which"
                + " already exists: user: 'user:anne', relation: 'admin', object: 'org:acme': tuple to be"
                + " written already existed or the tuple to be deleted did not exist\"}");
    ApiException missing =
        writeError(
            400,
            "{\"code\":\"write_failed_due_to_invalid_input\",\"message\":\"cannot delete a tuple which"
                + " does not exist: user: 'user:anne', relation: 'admin', object: 'org:acme': tuple to be"
                + " written already existed or the tuple to be deleted did not exist\"}");
    ApiException invalid =
        writeError(
            400,
            "{\"code\":\"validation_error\",\"message\":\"Invalid tuple 'org:acme#owner@user:carl'."
                + " Reason: relation 'org#owner' not found\"}");
    ApiException limit =
        writeError(
            400,
            "{\"code\":\"exceeded_entity_limit\",\"message\":\"The number of write operations"
                + " exceeds the allowed limit of 100\"}");
    ApiException conflict =
        writeError(
            409,
            "{\"code\":\"Aborted\",\"message\":\"transactional write failed due to conflict:"
                + " attempted to write a tuple which already exists with a different condition: x\"}");
    ApiException twice =
        writeError(
            400,
            "{\"code\":\"cannot_allow_duplicate_tuples_in_one_request\",\"message\":\"duplicate\"}");
    ApiException modelGone =
        writeError(
            400,
            "{\"code\":\"authorization_model_not_found\",\"message\":\"Authorization Model 'M' not found\"}");

    assertThat(List.of(duplicate, missing, invalid, limit, conflict, twice, modelGone))
        .extracting(
            ApiException::duplicateOrMissing,
            ApiException::invalidTuple,
            ApiException::entityLimit,
            ApiException::conflict,
            ApiException::refused)
        .containsExactly(
            tuple(true, false, false, false, true),
            tuple(true, false, false, false, true),
            tuple(false, true, false, false, true),
            tuple(false, false, true, false, true),
            tuple(false, false, false, true, false),
            tuple(false, false, false, false, true),
            tuple(false, false, false, false, false));
    assertThat(invalid.detail())
        .isEqualTo(
            "HTTP 400 validation_error: Invalid tuple 'org:acme#owner@user:carl'. Reason: relation"
                + " 'org#owner' not found");
    // none of them retried: each answer once
    assertThat(seen).hasSize(7);
  }

  @Test
  void aModelIsReadByIdOrIsEmptyWhenTheStoreHasNoneOfThatId() throws Exception {
    then(
        200,
        "{\"authorization_model\":{\"id\":\"M1\",\"schema_version\":\"1.1\",\"type_definitions\":[]}}");
    assertThat(api.model("S1", "M1"))
        .contains(
            JSON.readTree("{\"id\":\"M1\",\"schema_version\":\"1.1\",\"type_definitions\":[]}"));
    // what OpenFGA answers for an id it does not know (a 400, as its errors ledger has it)
    then(
        400,
        "{\"code\":\"authorization_model_not_found\",\"message\":\"Authorization Model"
            + " '01HVMMBCMGZNT3SED4Z17ECXCA' not found\"}");
    assertThat(api.model("S1", "01HVMMBCMGZNT3SED4Z17ECXCA")).isEmpty();
    // a store that is gone is not a model that is gone
    then(404, "{\"code\":\"store_id_not_found\"}");
    assertThatThrownBy(() -> api.model("S1", "M1")).isInstanceOf(ApiException.class);
    assertThat(seen)
        .extracting(Seen::method, Seen::uri)
        .containsOnly(
            tuple("GET", "/stores/S1/authorization-models/M1"),
            tuple("GET", "/stores/S1/authorization-models/01HVMMBCMGZNT3SED4Z17ECXCA"));
  }

  @Test
  void theNewestModelIsTheFirstOfAPageOfOne() throws Exception {
    then(
        200,
        "{\"authorization_models\":[{\"id\":\"M2\",\"schema_version\":\"1.1\",\"type_definitions\":[]}],\"continuation_token\":\"n\"}");
    assertThat(api.newestModel("S1")).map(Model::id).contains("M2");
    then(200, "{\"authorization_models\":[],\"continuation_token\":\"\"}");
    assertThat(api.newestModel("S1")).isEmpty();
    assertThat(seen)
        .extracting(Seen::uri)
        .containsOnly("/stores/S1/authorization-models?page_size=1");
  }

  @Test
  void oidcClientCredentialsFetchATokenOnceAndKeepItUntilAMinuteBeforeItExpires() throws Exception {
    then(200, "{\"access_token\":\"tok-1\",\"expires_in\":3600}");
    Credentials credentials =
        Credentials.fromSecretData(
            "ns/creds",
            Map.of(
                "clientId", b64("client"),
                "clientSecret", b64("s3cret"),
                "apiTokenIssuer", b64(url() + "/token"),
                "apiAudience", b64("https://api.fga")));
    var http = FgaApi.defaultHttpClient();
    Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
    assertThat(credentials.bearer(http, Clock.fixed(t0, ZoneOffset.UTC))).contains("tok-1");
    assertThat(credentials.bearer(http, Clock.fixed(t0.plusSeconds(3539), ZoneOffset.UTC)))
        .contains("tok-1");
    assertThat(seen).hasSize(1);
    assertThat(seen.get(0).uri()).isEqualTo("/token");
    assertThat(seen.get(0).body())
        .isEqualTo(
            "grant_type=client_credentials&client_id=client&client_secret=s3cret&audience=https%3A%2F%2Fapi.fga");
    then(200, "{\"access_token\":\"tok-2\",\"expires_in\":3600}");
    assertThat(credentials.bearer(http, Clock.fixed(t0.plusSeconds(3540), ZoneOffset.UTC)))
        .contains("tok-2");
    assertThat(credentials.toString()).doesNotContain("s3cret").doesNotContain("tok");
  }

  @Test
  void anAccessTokenOpenFgaRefusesIsNotUsedAgain() throws Exception {
    Credentials credentials =
        Credentials.fromSecretData(
            "ns/creds",
            Map.of(
                "clientId", b64("client"),
                "clientSecret", b64("s3cret"),
                "apiTokenIssuer", b64(url() + "/token")));
    var http = FgaApi.defaultHttpClient();
    Clock clock = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
    FgaApi withOidc =
        new FgaApi(
            http, URI.create(url() + "/"), Connector.bearer(credentials, http, clock), slept::add);
    // the issuer rotated its signing key: OpenFGA refuses a token valid for another hour
    then(200, "{\"access_token\":\"tok-1\",\"expires_in\":3600}");
    then(401, "{\"code\":\"unauthenticated\"}");
    assertThatThrownBy(withOidc::listStores).hasMessageContaining("HTTP 401");

    then(200, "{\"access_token\":\"tok-2\",\"expires_in\":3600}");
    then(200, "{\"stores\":[]}");
    assertThat(withOidc.listStores()).isEmpty();
    assertThat(seen)
        .extracting(Seen::uri, Seen::authorization)
        .containsExactly(
            tuple("/token", null),
            tuple("/stores?page_size=100", "Bearer tok-1"),
            tuple("/token", null),
            tuple("/stores?page_size=100", "Bearer tok-2"));
  }

  @Test
  void theCacheKeepsASecretsCredentialsAndTheirTokenUntilTheSecretChanges() throws Exception {
    then(200, "{\"access_token\":\"tok-1\",\"expires_in\":3600}");
    Map<String, String> data =
        Map.of(
            "clientId", b64("client"),
            "clientSecret", b64("s3cret"),
            "apiTokenIssuer", b64(url() + "/token"));
    Credentials.Cache cache = new Credentials.Cache();
    var http = FgaApi.defaultHttpClient();
    Clock clock = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);

    // two reconciles that read the same Secret: one token request
    assertThat(cache.get("ns/creds", "uid-1", "10", null, data).bearer(http, clock))
        .contains("tok-1");
    assertThat(cache.get("ns/creds", "uid-1", "10", null, data).bearer(http, clock))
        .contains("tok-1");
    assertThat(seen).hasSize(1);

    // the Secret changed (a new resourceVersion): its new data, a new token
    then(200, "{\"access_token\":\"tok-2\",\"expires_in\":3600}");
    Map<String, String> rotated = new java.util.HashMap<>(data);
    rotated.put("clientSecret", b64("rotated"));
    assertThat(cache.get("ns/creds", "uid-1", "11", null, rotated).bearer(http, clock))
        .contains("tok-2");
    assertThat(seen).hasSize(2);
    assertThat(seen.get(1).body()).contains("client_secret=rotated");

    // re-created under the same name (a new uid), even with an equal resourceVersion: new ones
    then(200, "{\"access_token\":\"tok-3\",\"expires_in\":3600}");
    assertThat(cache.get("ns/creds", "uid-2", "11", null, data).bearer(http, clock))
        .contains("tok-3");
    assertThat(seen).hasSize(3);

    // another Secret is kept apart; a Secret without a resourceVersion is never kept
    Map<String, String> key = Map.of("apiToken", b64("key-1"));
    assertThat(cache.get("ns/other", "uid-9", null, null, key))
        .isNotSameAs(cache.get("ns/other", "uid-9", null, null, key));
    assertThat(cache.get("ns/creds", "uid-2", "11", null, data).bearer(http, clock))
        .contains("tok-3");
    assertThat(seen).hasSize(3);

    // an unusable Secret is refused by name, and what was kept of it is dropped
    Credentials before = cache.get("ns/creds", "uid-2", "11", null, data);
    assertThatThrownBy(() -> cache.get("ns/creds", "uid-2", "12", null, Map.of("token", b64("x"))))
        .isInstanceOf(Credentials.CredentialsException.class)
        .hasMessageContaining("ns/creds");
    assertThat(cache.get("ns/creds", "uid-2", "11", null, data)).isNotSameAs(before);
  }

  @Test
  void theCacheDropsAGoneSecretAndKeepsAtMostItsLimit() throws Exception {
    Credentials.Cache cache = new Credentials.Cache();
    Map<String, String> key = Map.of("apiToken", b64("key-1"));
    Credentials kept = cache.get("ns/creds", "uid-1", "10", null, key);
    assertThat(cache.get("ns/creds", "uid-1", "10", null, key)).isSameAs(kept);

    java.time.Instant now = java.time.Instant.parse("2026-12-03T10:00:00Z");
    cache.gone("ns/creds", now);
    assertThat(cache.kept("ns/creds", now)).containsSame(kept);
    Credentials again = cache.get("ns/creds", "uid-1", "10", null, key);
    assertThat(again).isNotSameAs(kept);

    // the least recently used goes first once more Secrets than the limit were read
    Credentials first = cache.get("ns/s0", "uid-0", "1", null, key);
    for (int i = 1; i < Credentials.Cache.KEPT - 1; i++) {
      cache.get("ns/s" + i, "uid-" + i, "1", null, key);
    }
    assertThat(cache.get("ns/creds", "uid-1", "10", null, key)).isSameAs(again);
    cache.get("ns/one-more", "uid-x", "1", null, key);
    assertThat(cache.get("ns/creds", "uid-1", "10", null, key)).isSameAs(again);
    assertThat(cache.get("ns/s0", "uid-0", "1", null, key)).isNotSameAs(first);
  }

  @Test
  void aRefusedClientIsACredentialsErrorThatNamesTheSecretNotTheSecret() throws Exception {
    then(401, "{\"error\":\"invalid_client\"}");
    Credentials credentials =
        Credentials.fromSecretData(
            "ns/creds",
            Map.of(
                "clientId", b64("client"),
                "clientSecret", b64("s3cret"),
                "apiTokenIssuer", b64(url() + "/token?tenant=t-7")));
    assertThatThrownBy(() -> credentials.bearer(FgaApi.defaultHttpClient(), Clock.systemUTC()))
        .isInstanceOf(Credentials.CredentialsException.class)
        .hasMessageContaining("ns/creds")
        .hasMessageContaining("apiTokenIssuer")
        .hasMessageContaining("HTTP 401")
        .hasMessageNotContaining("s3cret")
        // nothing of the Secret in a status, an Event or a log line: the issuer URL neither
        .hasMessageNotContaining(url())
        .hasMessageNotContaining("t-7");
  }

  @Test
  void aSecretIsReadAsAPreSharedKeyOrClientCredentialsOrRefusedByName() throws Exception {
    assertThat(
            Credentials.fromSecretData("ns/k", Map.of("apiToken", b64("key-1\n")))
                .bearer(null, Clock.systemUTC()))
        .contains("key-1");
    assertThatThrownBy(() -> Credentials.fromSecretData("ns/k", Map.of("token", b64("x"))))
        .isInstanceOf(Credentials.CredentialsException.class)
        .hasMessageContaining("Secret ns/k has neither apiToken");
    assertThatThrownBy(
            () ->
                Credentials.fromSecretData(
                    "ns/k", Map.of("clientId", b64("c"), "clientSecret", b64("s"))))
        .hasMessageContaining("need the key apiTokenIssuer");
    assertThatThrownBy(() -> Credentials.fromSecretData("ns/k", Map.of("apiToken", "%%%")))
        .hasMessageContaining("key apiToken is not base64");
    assertThat(Credentials.none().bearer(null, Clock.systemUTC())).isEmpty();
  }

  @Test
  void aBareIssuerHostMeansItsOauthTokenEndpointAsTheSdksReadIt() throws Exception {
    assertThat(Credentials.tokenEndpoint("s", "issuer.example.com"))
        .isEqualTo(URI.create("https://issuer.example.com/oauth/token"));
    assertThat(Credentials.tokenEndpoint("s", "https://issuer.example.com/realms/x/token"))
        .isEqualTo(URI.create("https://issuer.example.com/realms/x/token"));
  }

  private static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }
}
