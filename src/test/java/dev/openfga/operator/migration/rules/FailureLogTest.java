package dev.openfga.operator.migration.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

class FailureLogTest {

  /** What openfga migrate v1.8.16 prints when the database is down (measured). */
  private static final String REFUSED =
      """
      2026/12/01 09:00:00 current version 0
      Error: failed to initialize database connection: failed to connect to `user=openfga database=x`:
      \t127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused
      \t127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused
      Usage:
        openfga migrate [flags]

      Flags:
            --datastore-engine string     (required) the datastore engine that will be used for persistence
            --datastore-uri string        (required) the connection uri of the database (e.g. 'postgres://postgres:password@localhost:5432/postgres')
        -h, --help                        help for migrate
            --timeout duration            a timeout (default 1m0s)
      """;

  @Test
  void keepsTheErrorLinesAndTheLinesBeforeThemButNotTheUsageText() {
    assertThat(FailureLog.excerpt(REFUSED, 20))
        .isEqualTo(
            """
            2026/12/01 09:00:00 current version 0
            Error: failed to initialize database connection: failed to connect to `user=openfga database=x`:
            \t127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused
            \t127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused""");
  }

  @Test
  void keepsAtMostThreeLinesBeforeTheError() {
    String log = "one\ntwo\nthree\nfour\nfive\nError: boom\nUsage:\n  openfga migrate [flags]\n";

    assertThat(FailureLog.excerpt(log, 20)).isEqualTo("three\nfour\nfive\nError: boom");
  }

  @Test
  void givesTheErrorLinesPrecedenceWhenFewLinesAreKept() {
    assertThat(FailureLog.excerpt(REFUSED, 2))
        .startsWith("Error: failed to initialize")
        .endsWith("connection refused")
        .hasLineCount(2);
  }

  @Test
  void keepsTheLastLinesOfALogWithoutAnErrorLine() {
    assertThat(FailureLog.excerpt("a\nb\nc\nd\n", 2)).isEqualTo("c\nd");
  }

  @Test
  void masksThePasswordOfEveryUri() {
    String line =
        "Error: invalid database uri: parse \"postgres://openfga:open%zz@127.0.0.1:1/x\": invalid"
            + " URL escape \"%zz\"";

    assertThat(FailureLog.redact(line, List.of()))
        .isEqualTo(
            "Error: invalid database uri: parse \"postgres://openfga:***@127.0.0.1:1/x\": invalid"
                + " URL escape \"***\"")
        .doesNotContain("open%zz")
        .doesNotContain("zz");
  }

  @Test
  void masksAPasswordGoReadAsAPortOrAHostCharacter() {
    // as the real openfga migrate prints a Secret's URI whose password holds '#' (Go cuts the
    // fragment first, so no '@' is left), '/' or '?' (the authority ends there)
    String hash =
        "Error: invalid database uri: parse \"postgres://openfga:Xk9vQ2\": invalid port"
            + " \":Xk9vQ2\" after host";
    String slash =
        "Error: invalid database uri: parse \"postgres://openfga:Xk9vQ2/rest@127.0.0.1:1/x\":"
            + " invalid port \":Xk9vQ2\" after host";
    String character = "parse \"postgres://ab/c@db\": invalid character \"/\" in host name";

    assertThat(FailureLog.redact(hash, List.of()))
        .isEqualTo(
            "Error: invalid database uri: parse \"postgres://openfga:***\": invalid port"
                + " \"***\" after host");
    // Go's authority ends at the '/': the rest of the password is in what it took for the path
    assertThat(FailureLog.redact(slash, List.of()))
        .isEqualTo(
            "Error: invalid database uri: parse \"postgres://openfga:***\":"
                + " invalid port \"***\" after host");
    assertThat(FailureLog.redact(character, List.of())).contains("invalid character \"***\"");
    // Go's %q keeps quotes and spaces: the whole password before the '#' is masked, even one
    // that starts with a quote
    for (String cut :
        new String[] {
          "Ab'cdEf",
          "'secretpw",
          "Ab cd",
          "Ab\\\"cd",
          "Xk9/Q2+abc",
          "ab?cd",
          "abc/d@e",
          "Xk9v/Q2@db:1/x",
          "P@ss:w0rd",
          "a@b:x"
        }) {
      // as Go reports it: the authority ends at '/' or '?', the host after its last '@'
      String authority = "openfga:" + cut.split("[/?]", 2)[0];
      String host = authority.substring(authority.lastIndexOf('@') + 1);
      String port = host.substring(host.indexOf(':'));
      String line =
          "Error: invalid database uri: parse \"postgres://openfga:"
              + cut
              + "\": invalid port \""
              + port
              + "\" after host";
      assertThat(FailureLog.redact(line, List.of()))
          .as(cut)
          .isEqualTo(
              "Error: invalid database uri: parse \"postgres://openfga:***\": invalid port"
                  + " \"***\" after host");
    }
    // a user name with an '@' (Azure's user@server) and a password cut short by a '/'
    assertThat(
            FailureLog.redact(
                "parse \"postgres://openfga@myserver:Pa/ss@myserver.postgres.database.azure.com"
                    + ":5432/fga\": invalid port \":Pa\" after host",
                List.of()))
        .isEqualTo("parse \"postgres://openfga@myserver:***\": invalid port \"***\" after host");
    // hosts Go reads are kept: IPv6, several
    assertThat(FailureLog.redact("parse \"postgres://a:5432,b:5432/f%zz\": x", List.of()))
        .isEqualTo("parse \"postgres://a:5432,b:5432/f%zz\": x");
    assertThat(FailureLog.redact("parse \"http://[fe80::1%25eth0]:8080/x%zz\": x", List.of()))
        .isEqualTo("parse \"http://[fe80::1%25eth0]:8080/x%zz\": x");
    // a long quoted text is no stack overflow
    String longLine = "parse \"postgres://openfga:" + "x".repeat(5000) + "\": invalid port";
    assertThat(FailureLog.redact(longLine, List.of()))
        .isEqualTo("parse \"postgres://openfga:***\": invalid port");
    // a port is a port
    String port = "dial tcp: parse \"postgres://db.example:5432/fga\": invalid port \":5432\"";
    assertThat(FailureLog.redact(port, List.of())).isEqualTo(port);
  }

  @Test
  void masksPasswordsWithSpacesQuotesPercentAndAtSigns() {
    // as openfga migrate prints a URI that Go's URL parser refuses: the whole URI, %q-quoted
    for (String password :
        new String[] {"my secret%", "pa\\\"ss", "p@ss%zz", "a:b@c d", "'quoted'"}) {
      String line =
          "Error: invalid database uri: parse \"postgres://openfga:"
              + password
              + "@db.example:5432/fga?sslmode=disable\": net/url: invalid userinfo";
      assertThat(FailureLog.redact(line, List.of()))
          .as(password)
          .isEqualTo(
              "Error: invalid database uri: parse \"postgres://openfga:***@db.example:5432/fga"
                  + "?sslmode=disable\": net/url: invalid userinfo");
    }
    // a literal URI whose password holds an @: the whole password is a secret, not a part of it
    var container =
        new ContainerBuilder()
            .addNewEnv()
            .withName("OPENFGA_DATASTORE_URI")
            .withValue("postgres://fga:p@ss word@db:5432/fga")
            .endEnv()
            .build();
    assertThat(FailureLog.literalSecrets(container)).contains("p@ss word");
  }

  @Test
  void masksPasswordSettings() {
    assertThat(FailureLog.redact("dsn host=db user=u password=s3cret sslmode=disable", List.of()))
        .isEqualTo("dsn host=db user=u password=*** sslmode=disable");
    assertThat(FailureLog.redact("password: 'with space'", List.of())).isEqualTo("password: ***");
  }

  @Test
  void masksTheLiteralCredentialsOfTheContainer() {
    var container =
        new ContainerBuilder()
            .addNewEnv()
            .withName("OPENFGA_DATASTORE_URI")
            .withValue("mysql://fga:hunter22@tcp(db:3306)/fga")
            .endEnv()
            .addNewEnv()
            .withName("OPENFGA_DATASTORE_PASSWORD")
            .withValue("correct-horse")
            .endEnv()
            .addNewEnv()
            .withName("OPENFGA_DATASTORE_ENGINE")
            .withValue("mysql")
            .endEnv()
            .build();
    List<String> secrets = FailureLog.literalSecrets(container);

    assertThat(secrets)
        .containsExactlyInAnyOrder(
            "mysql://fga:hunter22@tcp(db:3306)/fga", "hunter22", "correct-horse");
    String text =
        "Error: Access denied (using password: YES) for correct-horse; tried hunter22 at"
            + " mysql://fga:hunter22@tcp(db:3306)/fga";
    assertThat(FailureLog.redact(text, secrets))
        .doesNotContain("hunter22", "correct-horse")
        .startsWith("Error: Access denied")
        .endsWith("for ***; tried *** at ***");
  }

  @Test
  void leavesTextWithoutCredentialsAlone() {
    String line = "Error: FATAL: database \"no_such_db\" does not exist (SQLSTATE 3D000)";

    assertThat(FailureLog.redact(line, List.of("ab"))).isEqualTo(line);
  }
}
