package dev.openfga.operator.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class FlagsTest {

  @TempDir Path dir;

  private Path missingFile() {
    return dir.resolve("namespace");
  }

  private Environment podIn(String namespace) {
    return Environment.of(Map.of("POD_NAMESPACE", namespace), missingFile());
  }

  private Environment env(Map<String, String> variables) {
    return Environment.of(variables, missingFile());
  }

  private static List<String> problems(Environment environment, String... args) {
    InvalidFlagsException e =
        catchThrowableOfType(InvalidFlagsException.class, () -> Flags.parse(environment, args));
    assertThat(e).as("flags %s should be rejected", List.of(args)).isNotNull();
    return e.problems();
  }

  /** Runs the command as Main does and captures what it prints. */
  private record Run(int exitCode, String out, String err, StartupConfig config) {}

  private static Run execute(Environment environment, String... args) {
    AtomicReference<StartupConfig> seen = new AtomicReference<>();
    Cli commandLine =
        Flags.commandLine(
            environment,
            config -> {
              seen.set(config);
              return 0;
            });
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));
    int exitCode = commandLine.execute(args);
    return new Run(exitCode, out.toString(), err.toString(), seen.get());
  }

  @Test
  void appliesUpstreamDefaults() throws Exception {
    StartupConfig startup = Flags.parse(podIn("openfga"));
    OperatorConfig config = startup.operator();

    assertThat(config.watchNamespaces()).containsExactly("openfga");
    assertThat(config.leaderElect()).isFalse();
    assertThat(config.leaseNamespace()).contains("openfga");
    assertThat(config.metricsAddress()).contains(":8080");
    assertThat(config.healthAddress()).contains(":8081");
    assertThat(config.backoffLimit()).isEqualTo(3);
    assertThat(config.activeDeadlineSeconds()).isEqualTo(300);
    assertThat(config.ttlSecondsAfterFinished()).isEqualTo(300);
    assertThat(config.retryCooldown()).isEqualTo(Duration.ofSeconds(60));
    assertThat(startup.logging()).isEqualTo(LoggingConfig.DEFAULT);
  }

  @Test
  void documentedDefaultsAreTheAppliedDefaults() throws Exception {
    OperatorConfig config = Flags.parse(podIn("openfga")).operator();

    assertThat(Flag.BACKOFF_LIMIT.defaultValue()).isEqualTo(String.valueOf(config.backoffLimit()));
    assertThat(Flag.ACTIVE_DEADLINE_SECONDS.defaultValue())
        .isEqualTo(String.valueOf(config.activeDeadlineSeconds()));
    assertThat(Flag.TTL_SECONDS_AFTER_FINISHED.defaultValue())
        .isEqualTo(String.valueOf(config.ttlSecondsAfterFinished()));
    assertThat(GoDuration.parse(Flag.RETRY_COOLDOWN.defaultValue()))
        .isEqualTo(config.retryCooldown());
    assertThat(config.metricsAddress()).contains(Flag.METRICS_BIND_ADDRESS.defaultValue());
    assertThat(config.healthAddress()).contains(Flag.HEALTH_PROBE_BIND_ADDRESS.defaultValue());
    assertThat(Flag.MODEL_TEST_MAX_CHECKS.defaultValue())
        .isEqualTo(String.valueOf(config.modelTestMaxChecks()))
        .isEqualTo(String.valueOf(OperatorConfig.DEFAULT_MODEL_TEST_MAX_CHECKS))
        .isEqualTo("1000");
  }

  @Test
  void theModelTestBudgetIsReadAndBounded() throws Exception {
    assertThat(
            Flags.parse(
                    podIn("o"),
                    "--stores-and-models",
                    "--openfga-servers=http://openfga:8080",
                    "--model-test-max-checks=100000")
                .operator()
                .modelTestMaxChecks())
        .isEqualTo(100_000);
    assertThat(
            Flags.parse(
                    env(
                        Map.of(
                            "POD_NAMESPACE", "o", "OPENFGA_OPERATOR_MODEL_TEST_MAX_CHECKS", "1")))
                .operator()
                .modelTestMaxChecks())
        .isEqualTo(1);
  }

  static Stream<Arguments> everyValuedFlag() {
    return Stream.of(
        Arguments.of("--watch-namespace", "team-a"),
        Arguments.of("--watch-namespaces", "team-a,team-b"),
        Arguments.of("--watch-all-namespaces", "true"),
        Arguments.of("--leader-elect", "true"),
        Arguments.of("--metrics-bind-address", "127.0.0.1:9090"),
        Arguments.of("--health-probe-bind-address", "0.0.0.0:9091"),
        Arguments.of("--backoff-limit", "7"),
        Arguments.of("--active-deadline-seconds", "1200"),
        Arguments.of("--ttl-seconds-after-finished", "0"),
        Arguments.of("--retry-cooldown", "2m"),
        Arguments.of("--model-test-max-checks", "250"),
        Arguments.of("--openfga-servers", "http://openfga.openfga.svc:8080,https://fga.example"),
        Arguments.of("--log-format", "json"),
        Arguments.of("--log-level", "debug"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("everyValuedFlag")
  void acceptsEqualsAndSpaceForms(String flag, String value) throws Exception {
    StartupConfig withEquals = Flags.parse(podIn("openfga"), flag + "=" + value);
    StartupConfig withSpace = Flags.parse(podIn("openfga"), flag, value);

    assertThat(withSpace).isEqualTo(withEquals);
    assertThat(withEquals).isNotEqualTo(Flags.parse(podIn("openfga")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("everyValuedFlag")
  void fallsBackOnTheEnvironmentVariable(String flag, String value) throws Exception {
    Flag spec = Stream.of(Flag.values()).filter(f -> f.option().equals(flag)).findFirst().get();
    Environment environment = env(Map.of("POD_NAMESPACE", "openfga", spec.envVar(), value));

    assertThat(Flags.parse(environment)).isEqualTo(Flags.parse(podIn("openfga"), flag, value));
  }

  @Test
  void readsEachValueWhereItBelongs() throws Exception {
    StartupConfig startup =
        Flags.parse(
            podIn("ops"),
            "--watch-namespace=team-a",
            "--leader-elect",
            "--metrics-bind-address=0",
            "--health-probe-bind-address",
            "127.0.0.1:0",
            "--backoff-limit=0",
            "--active-deadline-seconds=9223372036854775807",
            "--ttl-seconds-after-finished=2147483647",
            "--retry-cooldown=1h30m",
            "--log-format=JSON",
            "--log-level=trace");
    OperatorConfig config = startup.operator();

    assertThat(config.watchNamespaces()).containsExactly("team-a");
    assertThat(config.leaderElect()).isTrue();
    assertThat(config.leaseNamespace()).contains("ops");
    assertThat(config.metricsAddress()).isEmpty();
    assertThat(config.healthAddress()).contains("127.0.0.1:0");
    assertThat(config.backoffLimit()).isZero();
    assertThat(config.activeDeadlineSeconds()).isEqualTo(Long.MAX_VALUE);
    assertThat(config.ttlSecondsAfterFinished()).isEqualTo(Integer.MAX_VALUE);
    assertThat(config.retryCooldown()).isEqualTo(Duration.ofMinutes(90));
    assertThat(startup.logging())
        .isEqualTo(new LoggingConfig(LoggingConfig.Format.JSON, LoggingConfig.Level.TRACE));
  }

  @Test
  void commandLineWinsOverEnvironment() throws Exception {
    Environment environment =
        env(Map.of("POD_NAMESPACE", "openfga", "OPENFGA_OPERATOR_BACKOFF_LIMIT", "9"));

    assertThat(Flags.parse(environment, "--backoff-limit=4").operator().backoffLimit())
        .isEqualTo(4);
  }

  @Test
  void ignoresBlankEnvironmentVariables() throws Exception {
    Environment environment =
        env(
            Map.of(
                "POD_NAMESPACE", "openfga",
                "OPENFGA_OPERATOR_BACKOFF_LIMIT", "",
                "OPENFGA_OPERATOR_WATCH_NAMESPACE", "  "));

    OperatorConfig config = Flags.parse(environment).operator();

    assertThat(config.backoffLimit()).isEqualTo(3);
    assertThat(config.watchNamespaces()).containsExactly("openfga");
  }

  @Test
  void lastOccurrenceOfAFlagWins() throws Exception {
    assertThat(
            Flags.parse(podIn("openfga"), "--backoff-limit=1", "--backoff-limit=2")
                .operator()
                .backoffLimit())
        .isEqualTo(2);
  }

  @Test
  void switchesTakeAnOptionalValue() throws Exception {
    assertThat(Flags.parse(podIn("o"), "--leader-elect").operator().leaderElect()).isTrue();
    assertThat(Flags.parse(podIn("o"), "--leader-elect=false").operator().leaderElect()).isFalse();
    assertThat(Flags.parse(podIn("o"), "--leader-elect", "false").operator().leaderElect())
        .isFalse();
    // like --dry-run, the opt-in to FGAStore and FGAModel needs no value
    String servers = "--openfga-servers=http://openfga:8080";
    assertThat(Flags.parse(podIn("o"), "--stores-and-models", servers).operator().storesAndModels())
        .isTrue();
    assertThat(Flags.parse(podIn("o"), "--stores-and-models=false").operator().storesAndModels())
        .isFalse();
    assertThat(
            Flags.parse(podIn("o"), "--stores-and-models", "--backoff-limit", "5", servers)
                .operator()
                .storesAndModels())
        .isTrue();
    assertThat(
            Flags.parse(podIn("o"), "--leader-elect", "--backoff-limit", "5")
                .operator()
                .backoffLimit())
        .isEqualTo(5);
  }

  @Test
  void storesAndModelsNeedTheServersFgaStoresMayName() throws Exception {
    String missing =
        "--stores-and-models needs --openfga-servers (env OPENFGA_OPERATOR_OPENFGA_SERVERS): the"
            + " base URLs of the OpenFGA servers FGAStores may name, comma-separated (chart value"
            + " storesAndModels.servers)";
    assertThat(problems(podIn("o"), "--stores-and-models")).containsExactly(missing);
    assertThat(problems(podIn("o"), "--stores-and-models", "--openfga-servers=", "--dry-run=false"))
        .containsExactly(missing);
    assertThat(problems(podIn("o"), "--stores-and-models", "--openfga-servers= , "))
        .containsExactly(missing);
    // as given, blanks and empty entries dropped; read from the environment too
    assertThat(
            Flags.parse(
                    podIn("o"),
                    "--stores-and-models",
                    "--openfga-servers= http://openfga.a.svc:8080/ ,,https://fga.example/api")
                .operator()
                .openfgaServers())
        .containsExactly("http://openfga.a.svc:8080/", "https://fga.example/api");
    assertThat(
            Flags.parse(
                    env(
                        Map.of(
                            "POD_NAMESPACE", "o",
                            "OPENFGA_OPERATOR_STORES_AND_MODELS", "true",
                            "OPENFGA_OPERATOR_OPENFGA_SERVERS", "http://openfga:8080")))
                .operator()
                .openfgaServers())
        .containsExactly("http://openfga:8080");
    // not needed without stores and models
    assertThat(Flags.parse(podIn("o")).operator().openfgaServers()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "openfga.openfga.svc:8080",
        "ftp://openfga:8080",
        "http://",
        "http://user:pw@openfga:8080",
        "http://openfga:8080/?x=1",
        "http://openfga:8080/#top",
        "http://open fga:8080"
      })
  void aServerThatIsNotAnHttpBaseUrlIsRefusedNamingIt(String url) {
    assertThat(
            problems(podIn("o"), "--stores-and-models", "--openfga-servers=http://ok:8080," + url))
        .containsExactly(
            "invalid value for --openfga-servers: "
                + url
                + " (must be an http:// or https:// URL with a host, and no user, query or"
                + " fragment)");
  }

  static Stream<Arguments> invalidValues() {
    return Stream.of(
        Arguments.of(
            "--backoff-limit=-1",
            "invalid value for --backoff-limit: -1 (must be between 0 and 2147483647)"),
        Arguments.of(
            "--backoff-limit=2147483648",
            "invalid value for --backoff-limit: 2147483648 (must be between 0 and 2147483647)"),
        Arguments.of(
            "--backoff-limit=three",
            "invalid value for --backoff-limit: three (must be an integer between 0 and"
                + " 2147483647)"),
        Arguments.of(
            "--backoff-limit=",
            "invalid value for --backoff-limit: \"\" (must be an integer between 0 and"
                + " 2147483647)"),
        Arguments.of(
            "--active-deadline-seconds=0",
            "invalid value for --active-deadline-seconds: 0 (must be between 1 and"
                + " 9223372036854775807)"),
        Arguments.of(
            "--active-deadline-seconds=9223372036854775808",
            "invalid value for --active-deadline-seconds: 9223372036854775808 (must be an integer"
                + " between 1 and 9223372036854775807)"),
        Arguments.of(
            "--ttl-seconds-after-finished=-5",
            "invalid value for --ttl-seconds-after-finished: -5 (must be between 0 and"
                + " 2147483647)"),
        Arguments.of(
            "--ttl-seconds-after-finished=2147483648",
            "invalid value for --ttl-seconds-after-finished: 2147483648 (must be between 0 and"
                + " 2147483647)"),
        Arguments.of(
            "--retry-cooldown=500ms",
            "invalid value for --retry-cooldown: 500ms (must be a duration of at least 1s, such"
                + " as 90s, 2m, 1h30m, or whole seconds)"),
        Arguments.of(
            "--retry-cooldown=0",
            "invalid value for --retry-cooldown: 0 (must be a duration of at least 1s, such as"
                + " 90s, 2m, 1h30m, or whole seconds)"),
        Arguments.of(
            "--retry-cooldown=soon",
            "invalid value for --retry-cooldown: soon (must be a duration of at least 1s, such as"
                + " 90s, 2m, 1h30m, or whole seconds)"),
        Arguments.of(
            "--retry-cooldown=-1m",
            "invalid value for --retry-cooldown: -1m (must be a duration of at least 1s, such as"
                + " 90s, 2m, 1h30m, or whole seconds)"),
        Arguments.of(
            "--metrics-bind-address=8080",
            "invalid value for --metrics-bind-address: 8080 (must be [host]:port with a port from"
                + " 0 to 65535, or 0 to disable)"),
        Arguments.of(
            "--health-probe-bind-address=:70000",
            "invalid value for --health-probe-bind-address: :70000 (must be [host]:port with a"
                + " port from 0 to 65535, or 0 to disable)"),
        Arguments.of(
            "--model-test-max-checks=0",
            "invalid value for --model-test-max-checks: 0 (must be between 1 and 100000)"),
        Arguments.of(
            "--model-test-max-checks=100001",
            "invalid value for --model-test-max-checks: 100001 (must be between 1 and 100000)"),
        Arguments.of(
            "--model-test-max-checks=lots",
            "invalid value for --model-test-max-checks: lots (must be an integer between 1 and"
                + " 100000)"),
        Arguments.of(
            "--log-format=xml", "invalid value for --log-format: xml (must be text or json)"),
        Arguments.of(
            "--log-level=verbose",
            "invalid value for --log-level: verbose (must be one of trace, debug, info, warn,"
                + " error)"),
        Arguments.of(
            "--leader-elect=yes", "invalid value for --leader-elect: yes (must be true or false)"),
        Arguments.of(
            "--watch-all-namespaces=maybe",
            "invalid value for --watch-all-namespaces: maybe (must be true or false)"),
        Arguments.of(
            "--watch-namespace=Team_A",
            "invalid value for --watch-namespace: Team_A (must be a namespace name: at most 63"
                + " lowercase letters, digits and '-', starting and ending with a letter or"
                + " digit)"),
        Arguments.of(
            "--watch-namespaces=ok,-bad",
            "invalid value for --watch-namespaces: -bad (must be a namespace name: at most 63"
                + " lowercase letters, digits and '-', starting and ending with a letter or"
                + " digit)"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidValues")
  void rejectsInvalidValueWithOneLineNamingFlagValueAndRange(String arg, String expected) {
    assertThat(problems(podIn("openfga"), arg)).containsExactly(expected);
  }

  @Test
  void rejectsZeroActiveDeadline() {
    assertThat(problems(podIn("openfga"), "--active-deadline-seconds=0"))
        .containsExactly(
            "invalid value for --active-deadline-seconds: 0 (must be between 1 and"
                + " 9223372036854775807)");
  }

  @Test
  void acceptsTheBoundariesUpstreamAccepts() throws Exception {
    OperatorConfig config =
        Flags.parse(
                podIn("openfga"),
                "--active-deadline-seconds=1",
                "--backoff-limit=0",
                "--ttl-seconds-after-finished=0",
                "--retry-cooldown=1s")
            .operator();

    assertThat(config.activeDeadlineSeconds()).isEqualTo(1);
    assertThat(config.backoffLimit()).isZero();
    assertThat(config.ttlSecondsAfterFinished()).isZero();
    assertThat(config.retryCooldown()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void treatsANegativeNumberAfterASpaceAsTheValue() {
    assertThat(problems(podIn("openfga"), "--backoff-limit", "-1"))
        .containsExactly(
            "invalid value for --backoff-limit: -1 (must be between 0 and 2147483647)");
  }

  @Test
  void namesTheEnvironmentVariableWhenTheBadValueCameFromIt() {
    Environment environment =
        env(Map.of("POD_NAMESPACE", "openfga", "OPENFGA_OPERATOR_BACKOFF_LIMIT", "-2"));

    assertThat(problems(environment))
        .containsExactly(
            "invalid value for --backoff-limit (env OPENFGA_OPERATOR_BACKOFF_LIMIT): -2 (must be"
                + " between 0 and 2147483647)");
  }

  @Test
  void reportsEveryProblemAtOnce() {
    List<String> problems =
        problems(
            env(Map.of("OPENFGA_OPERATOR_LOG_FORMAT", "xml")),
            "--backoff-limit=-1",
            "--active-deadline-seconds=0",
            "--ttl-seconds-after-finished=x",
            "--retry-cooldown=0s",
            "--metrics-bind-address=nope",
            "--log-level=loud",
            "--leader-elect");

    assertThat(problems)
        .hasSize(9)
        .anySatisfy(p -> assertThat(p).startsWith("no namespace to watch: "))
        .anySatisfy(p -> assertThat(p).startsWith("--leader-elect needs the operator's own"))
        .anySatisfy(p -> assertThat(p).startsWith("invalid value for --backoff-limit: -1"))
        .anySatisfy(p -> assertThat(p).startsWith("invalid value for --active-deadline-seconds: 0"))
        .anySatisfy(p -> assertThat(p).startsWith("invalid value for --ttl-seconds-after-finished"))
        .anySatisfy(p -> assertThat(p).startsWith("invalid value for --retry-cooldown: 0s"))
        .anySatisfy(p -> assertThat(p).startsWith("invalid value for --metrics-bind-address: nope"))
        .anySatisfy(p -> assertThat(p).startsWith("invalid value for --log-level: loud"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith(
                        "invalid value for --log-format (env OPENFGA_OPERATOR_LOG_FORMAT)"));
    assertThat(problems).allSatisfy(p -> assertThat(p).doesNotContain("\n"));
  }

  @Test
  void invalidFlagsExitWithOneAndOneLinePerProblem() {
    Run run = execute(podIn("openfga"), "--backoff-limit=-1", "--active-deadline-seconds=0");

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.config()).isNull();
    assertThat(run.err().lines())
        .containsExactly(
            "invalid value for --backoff-limit: -1 (must be between 0 and 2147483647)",
            "invalid value for --active-deadline-seconds: 0 (must be between 1 and"
                + " 9223372036854775807)");
  }

  @Test
  void unknownFlagIsAUsageErrorWithExitCodeTwo() {
    Run run = execute(podIn("openfga"), "--backof-limit=3");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.config()).isNull();
    assertThat(run.err())
        .contains("Unknown option: '--backof-limit=3'")
        .contains("Did you mean: --backoff-limit?")
        .contains("Try 'openfga-operator --help'");
  }

  @Test
  void aWordThatIsNoFlagIsAUsageError() {
    assertThatThrownBy(() -> Flags.parse(podIn("openfga"), "--backoff-limit=1", "openfga"))
        .isInstanceOf(Cli.UsageException.class)
        .hasMessage("Unmatched argument at index 1: 'openfga'");
    assertThat(execute(podIn("openfga"), "-x").exitCode()).isEqualTo(2);
  }

  @Test
  void missingValueIsAUsageError() {
    assertThatThrownBy(() -> Flags.parse(podIn("openfga"), "--backoff-limit"))
        .isInstanceOf(Cli.UsageException.class)
        .hasMessageContaining("--backoff-limit");
  }

  @Test
  void validFlagsRunTheOperatorAndItsResultIsTheExitCode() {
    Cli commandLine = Flags.commandLine(podIn("openfga"), config -> 42);
    commandLine.setErr(new PrintWriter(new StringWriter()));

    assertThat(commandLine.execute("--backoff-limit=5")).isEqualTo(42);
    assertThat(execute(podIn("openfga"), "--backoff-limit=5").config().operator().backoffLimit())
        .isEqualTo(5);
  }

  @Test
  void printsVersionAndExitsZero() {
    Run run = execute(podIn("openfga"), "--version");

    assertThat(run.exitCode()).isZero();
    assertThat(run.config()).isNull();
    assertThat(run.out().strip()).isEqualTo("openfga-operator " + Flags.version());
  }

  @Test
  void versionIsDevOutsideAVersionedJar() {
    // the tests run from target/classes, which has no manifest
    assertThat(Flags.version()).isEqualTo("dev");
  }

  @Test
  void helpListsEveryFlagWithItsEnvironmentVariableAndExitsZero() {
    Run run = execute(podIn("openfga"), "--help");

    assertThat(run.exitCode()).isZero();
    assertThat(run.config()).isNull();
    assertThat(run.out()).startsWith("Usage: openfga-operator");
    for (Flag flag : Flag.values()) {
      assertThat(run.out()).contains(flag.option()).contains(flag.envVar());
    }
  }

  // --- watch scope -------------------------------------------------------------------------

  @Test
  void watchesThePodNamespaceByDefault() throws Exception {
    assertThat(Flags.parse(podIn(" team-a\n")).operator().watchNamespaces())
        .containsExactly("team-a");
  }

  @Test
  void watchesTheServiceAccountNamespaceWhenPodNamespaceIsUnset() throws Exception {
    Files.writeString(missingFile(), "team-b\n");

    OperatorConfig config = Flags.parse(env(Map.of())).operator();

    assertThat(config.watchNamespaces()).containsExactly("team-b");
    assertThat(config.leaseNamespace()).contains("team-b");
  }

  @Test
  void failsInsteadOfWideningToTheWholeCluster() {
    assertThat(problems(env(Map.of())))
        .containsExactly(
            "no namespace to watch: POD_NAMESPACE is empty and reading service-account namespace"
                + " file \""
                + missingFile()
                + "\": no such file; set --watch-namespace, --watch-namespaces or"
                + " --watch-all-namespaces");
  }

  @Test
  void explicitNamespaceNeedsNoPodNamespace() throws Exception {
    OperatorConfig config = Flags.parse(env(Map.of()), "--watch-namespace", " team-a ").operator();

    assertThat(config.watchNamespaces()).containsExactly("team-a");
    assertThat(config.leaseNamespace()).isEmpty();
  }

  @Test
  void watchesSeveralNamespaces() throws Exception {
    OperatorConfig config =
        Flags.parse(
                podIn("ops"),
                "--watch-namespaces=a, b,,c",
                "--watch-namespaces",
                "d",
                "--watch-namespace=e")
            .operator();

    assertThat(config.watchNamespaces()).containsExactlyInAnyOrder("a", "b", "c", "d", "e");
    assertThat(config.watchesAllNamespaces()).isFalse();
  }

  @Test
  void watchesAllNamespacesWhenAsked() throws Exception {
    OperatorConfig config = Flags.parse(env(Map.of()), "--watch-all-namespaces").operator();

    assertThat(config.watchesAllNamespaces()).isTrue();
    assertThat(config.watchNamespaces()).isEmpty();
  }

  static Stream<Arguments> conflictingNamespaceFlags() {
    return Stream.of(
        Arguments.of(
            List.of("--watch-all-namespaces", "--watch-namespace=a"),
            Map.of(),
            "conflicting flags: --watch-all-namespaces cannot be combined with"
                + " --watch-namespace=a"),
        Arguments.of(
            List.of("--watch-all-namespaces", "--watch-namespaces=a,b"),
            Map.of(),
            "conflicting flags: --watch-all-namespaces cannot be combined with"
                + " --watch-namespaces=a,b"),
        Arguments.of(
            List.of("--watch-all-namespaces=true", "--watch-namespace=a", "--watch-namespaces=b"),
            Map.of(),
            "conflicting flags: --watch-all-namespaces cannot be combined with"
                + " --watch-namespace=a and --watch-namespaces=b"),
        Arguments.of(
            List.of("--watch-namespace=a"),
            Map.of("OPENFGA_OPERATOR_WATCH_ALL_NAMESPACES", "true"),
            "conflicting flags: --watch-all-namespaces cannot be combined with"
                + " --watch-namespace=a"),
        Arguments.of(
            List.of("--watch-all-namespaces"),
            Map.of("OPENFGA_OPERATOR_WATCH_NAMESPACE", "a"),
            "conflicting flags: --watch-all-namespaces cannot be combined with"
                + " --watch-namespace=a (env OPENFGA_OPERATOR_WATCH_NAMESPACE)"));
  }

  @ParameterizedTest
  @MethodSource("conflictingNamespaceFlags")
  void rejectsWatchAllNamespacesCombinedWithNamedNamespaces(
      List<String> args, Map<String, String> variables, String expected) {
    Map<String, String> withPod = new HashMap<>(variables);
    withPod.put("POD_NAMESPACE", "ops");

    assertThat(problems(env(withPod), args.toArray(String[]::new))).containsExactly(expected);
  }

  @Test
  void watchAllNamespacesSetToFalseDoesNotConflict() throws Exception {
    assertThat(
            Flags.parse(podIn("ops"), "--watch-all-namespaces=false", "--watch-namespace=a")
                .operator()
                .watchNamespaces())
        .containsExactly("a");
  }

  @Test
  void leaderElectionNeedsTheOperatorsOwnNamespace() {
    assertThat(problems(env(Map.of()), "--watch-namespace=a", "--leader-elect"))
        .containsExactly(
            "--leader-elect needs the operator's own namespace for its Lease: POD_NAMESPACE is"
                + " empty and reading service-account namespace file \""
                + missingFile()
                + "\": no such file");
  }

  @Test
  void leaseNamespaceIsThePodNamespaceEvenWhenWatchingOthers() throws Exception {
    OperatorConfig config =
        Flags.parse(podIn("ops"), "--watch-namespaces=a,b", "--leader-elect").operator();

    assertThat(config.leaseNamespace()).contains("ops");
    assertThat(config.watchNamespaces()).containsExactlyInAnyOrder("a", "b");
  }

  @Test
  void theLeaseIsNamedByFlagOrEnvironmentAndMustBeAValidName() throws Exception {
    assertThat(Flags.parse(podIn("ops"), "--leader-elect").operator().leaseName())
        .isEqualTo("openfga-operator-leader");
    assertThat(
            Flags.parse(podIn("ops"), "--leader-elect", "--leader-election-id=team-a.leader")
                .operator()
                .leaseName())
        .isEqualTo("team-a.leader");
    assertThat(
            Flags.parse(
                    Environment.of(
                        Map.of(
                            "POD_NAMESPACE",
                            "ops",
                            "OPENFGA_OPERATOR_LEADER_ELECTION_ID",
                            "b-lead"),
                        missingFile()),
                    "--leader-elect")
                .operator()
                .leaseName())
        .isEqualTo("b-lead");
    assertThat(problems(podIn("ops"), "--leader-elect", "--leader-election-id=Team_A"))
        .containsExactly(
            "invalid value for --leader-election-id: Team_A (must be a DNS subdomain: lowercase"
                + " letters, digits, '-' and '.', at most 253)");
  }

  // --- upstream resolveWatchNamespace cases -----------------------------------------------

  @Test
  void resolveUsesTrimmedExplicitValue() throws Exception {
    List<String> lookedUp = new ArrayList<>();

    String namespace =
        Flags.resolveWatchNamespace(
            " explicit ",
            missingFile(),
            key -> {
              lookedUp.add(key);
              return "env-namespace";
            });

    assertThat(namespace).isEqualTo("explicit");
    assertThat(lookedUp).isEmpty();
  }

  @Test
  void resolveUsesTrimmedPodNamespaceWithoutReadingTheFile() throws Exception {
    Path unreadable = dir; // a directory: reading it would fail
    List<String> lookedUp = new ArrayList<>();

    String namespace =
        Flags.resolveWatchNamespace(
            null,
            unreadable,
            key -> {
              lookedUp.add(key);
              return " env-namespace\n";
            });

    assertThat(namespace).isEqualTo("env-namespace");
    assertThat(lookedUp).containsExactly("POD_NAMESPACE");
  }

  @Test
  void resolveUsesTrimmedServiceAccountFile() throws Exception {
    Files.writeString(missingFile(), " file-namespace\n");
    List<String> lookedUp = new ArrayList<>();

    String namespace =
        Flags.resolveWatchNamespace(
            "",
            missingFile(),
            key -> {
              lookedUp.add(key);
              return null;
            });

    assertThat(namespace).isEqualTo("file-namespace");
    assertThat(lookedUp).containsExactly("POD_NAMESPACE");
  }

  @Test
  void resolveReportsAMissingFile() {
    assertThatThrownBy(() -> Flags.resolveWatchNamespace(null, missingFile(), key -> null))
        .isInstanceOf(MissingNamespaceException.class)
        .hasMessageContaining("reading service-account namespace file")
        .hasCauseInstanceOf(IOException.class);
  }

  @Test
  void resolveWrapsTheReadError() {
    MissingNamespaceException e =
        catchThrowableOfType(
            MissingNamespaceException.class,
            () -> Flags.resolveWatchNamespace(null, dir, key -> " "));

    assertThat(e).hasMessageContaining("reading service-account namespace file \"" + dir + "\"");
    assertThat(e.getCause()).isInstanceOf(IOException.class);
  }

  @Test
  void resolveReportsBlankPodNamespaceAndBlankFile() throws Exception {
    Files.writeString(missingFile(), " \n");

    assertThatThrownBy(() -> Flags.resolveWatchNamespace(null, missingFile(), key -> "  "))
        .isInstanceOf(MissingNamespaceException.class)
        .hasMessageContaining("are empty");
  }

  // --- the flag list as data -------------------------------------------------------------

  @Test
  void everyFlagHasAnEnvironmentVariableFromTheSameScheme() {
    assertThat(Flag.BACKOFF_LIMIT.envVar()).isEqualTo("OPENFGA_OPERATOR_BACKOFF_LIMIT");
    assertThat(Flag.WATCH_NAMESPACE.envVar()).isEqualTo("OPENFGA_OPERATOR_WATCH_NAMESPACE");
    assertThat(Stream.of(Flag.values()).map(Flag::envVar))
        .doesNotHaveDuplicates()
        .allMatch(name -> name.matches("OPENFGA_OPERATOR_[A-Z_]+"));
  }

  @Test
  void theCommandRecognisesExactlyTheListedFlags() {
    for (Flag flag : Flag.values()) {
      // a bad value is an invalid flag (1), an unknown flag a usage error (2)
      assertThat(execute(podIn("openfga"), flag.option() + "=?").exitCode())
          .as(flag.option())
          .isEqualTo(1);
    }
    assertThat(execute(podIn("openfga"), "--help").exitCode()).isZero();
    assertThat(execute(podIn("openfga"), "--version").exitCode()).isZero();
    assertThat(execute(podIn("openfga"), "--no-such-flag").exitCode()).isEqualTo(2);
    assertThat(Flags.commandLine(podIn("openfga"), config -> 0).options())
        .containsExactlyElementsOf(
            Stream.concat(
                    Stream.of(Flag.values()).map(Flag::option), Stream.of("--help", "--version"))
                .toList());
  }

  @Test
  void markdownTableHasOneRowPerFlag() {
    List<String> rows = Flag.markdownTable().lines().toList();

    assertThat(rows).hasSize(2 + Flag.values().length);
    assertThat(rows.get(0)).isEqualTo("| Flag | Environment variable | Default | Meaning |");
    assertThat(rows)
        .contains(
            "| `--backoff-limit` | `OPENFGA_OPERATOR_BACKOFF_LIMIT` | `3` | backoffLimit of"
                + " migration Jobs: pod retries before a Job counts as failed (0 to 2147483647). |")
        .contains(
            "| `--log-format` | `OPENFGA_OPERATOR_LOG_FORMAT` | `text` | Log format: text (one line"
                + " each) or json. |");
  }

  @Test
  void referenceFlagTableMatchesTheCode() throws IOException {
    Path reference = Path.of("docs", "reference.md");
    String text = Files.exists(reference) ? Files.readString(reference) : "";
    String start = "<!-- flags:start -->\n";
    String end = "<!-- flags:end -->";
    assertThat(text)
        .as("docs/reference.md has the flag table between " + start.strip() + " and " + end)
        .contains(start, end);

    String table = text.substring(text.indexOf(start) + start.length(), text.indexOf(end));

    assertThat(table.strip()).isEqualTo(Flag.markdownTable().strip());
  }

  @ParameterizedTest
  @ValueSource(strings = {"TEXT", "Json"})
  void logFormatIgnoresCase(String format) throws Exception {
    assertThat(Flags.parse(podIn("o"), "--log-format", format).logging().format())
        .isEqualTo(LoggingConfig.Format.valueOf(format.toUpperCase(Locale.ROOT)));
  }

  @Test
  void disablesHealthProbesWithZero() throws Exception {
    assertThat(Flags.parse(podIn("o"), "--health-probe-bind-address=0").operator().healthAddress())
        .isEqualTo(Optional.empty());
  }
}
