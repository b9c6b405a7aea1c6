package dev.openfga.operator.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * One pass over the flags given on the command line and in the environment that collects every
 * problem, so that all are reported at once ({@link Flags#resolve}).
 */
final class FlagResolution {
  /** A value with where it came from. */
  record Given(Flag flag, String text, boolean fromEnvironment) {

    String describe() {
      String value = text.isBlank() || !text.equals(text.strip()) ? '"' + text + '"' : text;
      return flag.option() + (fromEnvironment ? " (env " + flag.envVar() + ")" : "") + ": " + value;
    }
  }

  private final Map<Flag, String> commandLine;
  private final Environment environment;
  private final List<String> problems = new ArrayList<>();

  FlagResolution(Map<Flag, String> commandLine, Environment environment) {
    this.commandLine = commandLine;
    this.environment = environment;
  }

  StartupConfig config() throws InvalidFlagsException {
    boolean leaderElect = switchValue(Flag.LEADER_ELECT);
    boolean dryRun = switchValue(Flag.DRY_RUN);
    boolean storesAndModels = switchValue(Flag.STORES_AND_MODELS);
    checkDryRun(dryRun, leaderElect, storesAndModels);
    List<String> openfgaServers = openfgaServers(storesAndModels);
    Optional<String> ownNamespace = Optional.empty();
    String ownNamespaceProblem = null;
    try {
      ownNamespace =
          Optional.of(
              Flags.resolveWatchNamespace(
                  null, environment.serviceAccountNamespaceFile(), environment.variables()));
    } catch (MissingNamespaceException e) {
      ownNamespaceProblem = e.getMessage();
    }
    Set<String> watchNamespaces = watchNamespaces(ownNamespace, ownNamespaceProblem);
    if (leaderElect && ownNamespaceProblem != null) {
      problems.add(
          Flag.LEADER_ELECT.option()
              + " needs the operator's own namespace for its Lease: "
              + ownNamespaceProblem);
    }
    String leaseName = leaseName();
    Optional<String> metricsAddress = address(Flag.METRICS_BIND_ADDRESS);
    Optional<String> healthAddress = address(Flag.HEALTH_PROBE_BIND_ADDRESS);
    long backoffLimit = integer(Flag.BACKOFF_LIMIT, 0, Integer.MAX_VALUE);
    long activeDeadlineSeconds = integer(Flag.ACTIVE_DEADLINE_SECONDS, 1, Long.MAX_VALUE);
    long ttlSecondsAfterFinished = integer(Flag.TTL_SECONDS_AFTER_FINISHED, 0, Integer.MAX_VALUE);
    Duration retryCooldown = retryCooldown();
    long failureLogLines = integer(Flag.FAILURE_LOG_LINES, 0, 1000);
    long modelTestMaxChecks =
        integer(Flag.MODEL_TEST_MAX_CHECKS, 1, OperatorConfig.MODEL_TEST_MAX_CHECKS_LIMIT);
    long tuplesPerWrite = integer(Flag.TUPLES_PER_WRITE, 1, OperatorConfig.TUPLES_PER_WRITE_LIMIT);
    LoggingConfig.Format logFormat = choice(Flag.LOG_FORMAT, LoggingConfig.Format.values());
    LoggingConfig.Level logLevel = choice(Flag.LOG_LEVEL, LoggingConfig.Level.values());
    if (!problems.isEmpty()) {
      throw new InvalidFlagsException(problems);
    }
    OperatorConfig operator =
        new OperatorConfig(
            watchNamespaces,
            leaderElect,
            ownNamespace,
            metricsAddress,
            healthAddress,
            Math.toIntExact(backoffLimit),
            activeDeadlineSeconds,
            Math.toIntExact(ttlSecondsAfterFinished),
            retryCooldown,
            Math.toIntExact(failureLogLines),
            dryRun,
            storesAndModels,
            leaseName,
            Math.toIntExact(modelTestMaxChecks),
            openfgaServers,
            Math.toIntExact(tuplesPerWrite));
    return new StartupConfig(operator, new LoggingConfig(logFormat, logLevel));
  }

  /** A dry run writes nothing: neither the Lease nor what the store controller would write. */
  private void checkDryRun(boolean dryRun, boolean leaderElect, boolean storesAndModels) {
    if (dryRun && storesAndModels) {
      problems.add(
          Flag.STORES_AND_MODELS.option()
              + " cannot be combined with "
              + Flag.DRY_RUN.option()
              + ": the store controller has no dry run yet");
    }
    if (dryRun && leaderElect) {
      problems.add(
          Flag.DRY_RUN.option()
              + " cannot be combined with "
              + Flag.LEADER_ELECT.option()
              + ": a dry run writes nothing, not even the leader-election Lease (run one"
              + " replica)");
    }
  }

  /**
   * The OpenFGA servers FGAStores may name: each an http(s) URL with a host and no user, query or
   * fragment. Required with --stores-and-models: without the list any namespace could have the
   * operator send requests to a server of its choosing.
   */
  private List<String> openfgaServers(boolean storesAndModels) {
    Optional<Given> given = given(Flag.OPENFGA_SERVERS);
    List<String> servers = new ArrayList<>();
    if (given.isPresent()) {
      for (String part : given.get().text().split(",", -1)) {
        String url = part.strip();
        if (url.isEmpty()) {
          continue;
        }
        if (isServerUrl(url)) {
          servers.add(url);
        } else {
          invalid(
              new Given(Flag.OPENFGA_SERVERS, url, given.get().fromEnvironment()),
              "must be an http:// or https:// URL with a host, and no user, query or fragment");
        }
      }
    }
    if (storesAndModels && given.map(g -> g.text().replace(",", "").isBlank()).orElse(true)) {
      problems.add(
          Flag.STORES_AND_MODELS.option()
              + " needs "
              + Flag.OPENFGA_SERVERS.option()
              + " (env "
              + Flag.OPENFGA_SERVERS.envVar()
              + "): the base URLs of the OpenFGA servers FGAStores may name, comma-separated"
              + " (chart value storesAndModels.servers)");
    }
    return servers;
  }

  private static boolean isServerUrl(String url) {
    try {
      java.net.URI uri = new java.net.URI(url);
      return ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          && uri.getHost() != null
          && uri.getRawUserInfo() == null
          && uri.getRawQuery() == null
          && uri.getRawFragment() == null;
    } catch (java.net.URISyntaxException e) {
      return false;
    }
  }

  /** The Lease's name: a DNS subdomain, as the API server wants it. */
  private String leaseName() {
    Optional<Given> given = given(Flag.LEADER_ELECTION_ID);
    if (given.isEmpty()) {
      return Flag.LEADER_ELECTION_ID.defaultValue();
    }
    String name = given.get().text();
    if (name.length() > 253 || !Flags.LEASE_NAME.matcher(name).matches()) {
      invalid(
          given.get(),
          "must be a DNS subdomain: lowercase letters, digits, '-' and '.', at most 253");
    }
    return name;
  }

  /** The command-line value, else a non-blank environment value, else nothing. */
  private Optional<Given> given(Flag flag) {
    String text = commandLine.get(flag);
    if (text != null) {
      return Optional.of(new Given(flag, text, false));
    }
    String fromEnvironment = environment.variable(flag.envVar());
    if (fromEnvironment != null && !fromEnvironment.isBlank()) {
      return Optional.of(new Given(flag, fromEnvironment, true));
    }
    return Optional.empty();
  }

  private Given givenOrDefault(Flag flag) {
    return given(flag).orElseGet(() -> new Given(flag, flag.defaultValue(), false));
  }

  private void invalid(Given given, String rule) {
    problems.add("invalid value for " + given.describe() + " (" + rule + ")");
  }

  private boolean switchValue(Flag flag) {
    Given given = givenOrDefault(flag);
    switch (given.text().strip().toLowerCase(Locale.ROOT)) {
      case "true", "1":
        return true;
      case "false", "0":
        return false;
      default:
        invalid(given, "must be true or false");
        return false;
    }
  }

  private long integer(Flag flag, long min, long max) {
    Given given = givenOrDefault(flag);
    long value;
    try {
      value = Long.parseLong(given.text().strip());
    } catch (NumberFormatException e) {
      invalid(given, "must be an integer between " + min + " and " + max);
      return min;
    }
    if (value < min || value > max) {
      invalid(given, "must be between " + min + " and " + max);
      return min;
    }
    return value;
  }

  private Optional<String> address(Flag flag) {
    Given given = givenOrDefault(flag);
    String text = given.text().strip();
    if (text.equals("0")) {
      return Optional.empty();
    }
    try {
      return Optional.of(BindAddress.parse(text).toString());
    } catch (IllegalArgumentException e) {
      invalid(given, "must be " + BindAddress.FORMAT + ", or 0 to disable");
      return Optional.empty();
    }
  }

  private Duration retryCooldown() {
    Given given = givenOrDefault(Flag.RETRY_COOLDOWN);
    String rule = "must be a duration of at least 1s, such as 90s, 2m, 1h30m, or whole seconds";
    try {
      Duration cooldown = GoDuration.parse(given.text());
      if (cooldown.compareTo(Duration.ofSeconds(1)) < 0) {
        invalid(given, rule);
      }
      return cooldown;
    } catch (IllegalArgumentException e) {
      invalid(given, rule);
      return Duration.ofSeconds(1);
    }
  }

  private <E extends Enum<E>> E choice(Flag flag, E[] choices) {
    Given given = givenOrDefault(flag);
    String text = given.text().strip();
    for (E choice : choices) {
      if (choice.name().equalsIgnoreCase(text)) {
        return choice;
      }
    }
    List<String> names =
        Arrays.stream(choices).map(c -> c.name().toLowerCase(Locale.ROOT)).toList();
    String allowed =
        names.size() == 2
            ? names.get(0) + " or " + names.get(1)
            : "one of " + String.join(", ", names);
    invalid(given, "must be " + allowed);
    return choices[0];
  }

  private Set<String> watchNamespaces(Optional<String> ownNamespace, String ownNamespaceProblem) {
    boolean all = switchValue(Flag.WATCH_ALL_NAMESPACES);
    List<Given> named =
        Stream.of(given(Flag.WATCH_NAMESPACE), given(Flag.WATCH_NAMESPACES))
            .flatMap(Optional::stream)
            .filter(g -> !g.text().replace(",", "").isBlank())
            .toList();
    Set<String> namespaces = new LinkedHashSet<>();
    named.forEach(g -> namespaces.addAll(namespaces(g)));
    if (all) {
      if (!named.isEmpty()) {
        problems.add(
            "conflicting flags: "
                + Flag.WATCH_ALL_NAMESPACES.option()
                + " cannot be combined with "
                + named.stream()
                    .map(
                        g ->
                            g.flag().option()
                                + "="
                                + g.text()
                                + (g.fromEnvironment() ? " (env " + g.flag().envVar() + ")" : ""))
                    .collect(Collectors.joining(" and ")));
      }
      return Set.of();
    }
    if (!named.isEmpty()) {
      return namespaces; // empty only when every name was invalid, which is reported
    }
    if (ownNamespaceProblem != null) {
      problems.add(
          "no namespace to watch: "
              + ownNamespaceProblem
              + "; set "
              + Flag.WATCH_NAMESPACE.option()
              + ", "
              + Flag.WATCH_NAMESPACES.option()
              + " or "
              + Flag.WATCH_ALL_NAMESPACES.option());
      return Set.of();
    }
    return Set.of(ownNamespace.orElseThrow());
  }

  /** The comma-separated names of {@code given}, each checked as a namespace name. */
  private List<String> namespaces(Given given) {
    List<String> names = new ArrayList<>();
    for (String part : given.text().split(",", -1)) {
      String name = part.strip();
      if (name.isEmpty()) {
        continue;
      }
      if (Flags.NAMESPACE.matcher(name).matches()) {
        names.add(name);
      } else {
        invalid(
            new Given(given.flag(), name, given.fromEnvironment()),
            "must be a namespace name: at most 63 lowercase letters, digits and '-', starting"
                + " and ending with a letter or digit");
      }
    }
    return names;
  }
}
