package dev.openfga.operator.ops;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CredentialMaskTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiterString = " => ",
      value = {
        // fabric8's wire log, a header map, JSON (quotes escaped in a JSON line)
        "> Authorization: [Bearer eyJhbGciOi.eyJzdWIi.c2ln] => > Authorization: [***]",
        "headers {Authorization=[Basic dXNlcjpwYXNz], Accept=[*/*]}"
            + " => headers {Authorization=[***], Accept=[*/*]}",
        "{\\\"authorization\\\":\\\"Bearer abc\\\"} => {\\\"authorization\\\":\\\"***\\\"}",
        "Proxy-Authorization: Negotiate YII= x => Proxy-Authorization: *** x",
        "authorization:abc => authorization:***",
        // a bearer token anywhere
        "sent BEARER psk-9d2e to the server => sent BEARER *** to the server",
        "Bearer a.b-c_d~e+f/g== end => Bearer *** end",
        // passwords in key/value form
        "host=db user=openfga password=s3cr3t dbname=x => host=db user=openfga password=*** dbname=x",
        "grant_type=client_credentials&client_secret=cs-1&client_id=c"
            + " => grant_type=client_credentials&client_secret=***&client_id=c",
        "{\\\"password\\\":\\\"pw\\\"} => {\\\"password\\\":\\\"***\\\"}",
        // a URI's password, up to its last @
        "postgres://openfga:pw-1@db:5432/openfga => postgres://openfga:***@db:5432/openfga",
        "mysql://u:p@ss@w0rd@tcp(db:3306)/x => mysql://u:***@tcp(db:3306)/x",
        "two: http://a:b@h1 and https://c:d@h2/ => two: http://a:***@h1 and https://c:***@h2/",
        // what is kept is kept as it is, $ included
        "postgres://a$1:pw@db => postgres://a$1:***@db",
      })
  void masksWhatLooksLikeACredential(String line, String masked) {
    assertThat(CredentialMask.mask(line)).isEqualTo(masked);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "migration to v1.9.0 succeeded: condition MigrationFailed=False, recorded version v1.9.0",
        "authorization model 01HVMMBCMGZNT3SED4Z17ECXCA written",
        "store it-psk created at http://127.0.0.1:8080/stores (HTTP 201)",
        "postgres://openfga@db:5432/openfga?sslmode=disable",
        "Secret team-a/oidc-client (openfgaRef.credentialsRef) does not exist",
        "the bearer",
        "{\"token_type\":\"Bearer\",\"expires_in\":3600}",
      })
  void leavesOrdinaryLinesAlone(String line) {
    assertThat(CredentialMask.mask(line)).isEqualTo(line);
  }

  @ParameterizedTest
  @ValueSource(strings = {"Authorization: ***", "Bearer ***", "postgres://u:***@db/x"})
  void maskingTwiceChangesNothingMore(String line) {
    assertThat(CredentialMask.mask(line)).isEqualTo(line);
  }
}
