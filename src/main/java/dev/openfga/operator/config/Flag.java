package dev.openfga.operator.config;

import java.util.Locale;

/**
 * Every command-line flag of the operator, with its environment fallback, its default and its
 * meaning. This is the one list of flags: the command line ({@link Cli}), {@code --help} and the
 * reference table (docs/reference.md) are all made from it.
 */
public enum Flag {
  WATCH_NAMESPACE(
      "--watch-namespace",
      "NAMESPACE",
      "`POD_NAMESPACE`, then the service-account namespace file",
      "Namespace whose OpenFGA Deployments are watched. Start-up fails when none is given and"
          + " none can be found; the operator never widens to the whole cluster by itself."),
  WATCH_NAMESPACES(
      "--watch-namespaces",
      "NS[,NS...]",
      "",
      "Several namespaces to watch, comma-separated (the flag may also be repeated); adds to"
          + " --watch-namespace."),
  WATCH_ALL_NAMESPACES(
      "--watch-all-namespaces",
      "true|false",
      "false",
      "Watch every namespace (needs a ClusterRole). Cannot be combined with --watch-namespace or"
          + " --watch-namespaces."),
  LEADER_ELECT(
      "--leader-elect",
      "true|false",
      "false",
      "Use leader election (a Lease in the operator's own namespace, --leader-election-id) so that"
          + " only one replica acts."),
  LEADER_ELECTION_ID(
      "--leader-election-id",
      "NAME",
      "openfga-operator-leader",
      "Name of the leader-election Lease. Operators that share a namespace (two releases, each"
          + " watching other namespaces) need one each, or only one of them ever acts."),
  METRICS_BIND_ADDRESS(
      "--metrics-bind-address",
      "[HOST]:PORT",
      ":8080",
      "Address of the Prometheus /metrics endpoint; 0 disables it."),
  HEALTH_PROBE_BIND_ADDRESS(
      "--health-probe-bind-address",
      "[HOST]:PORT",
      ":8081",
      "Address of the /healthz and /readyz probes; 0 disables them."),
  BACKOFF_LIMIT(
      "--backoff-limit",
      "N",
      "3",
      "backoffLimit of migration Jobs: pod retries before a Job counts as failed (0 to 2147483647)."),
  ACTIVE_DEADLINE_SECONDS(
      "--active-deadline-seconds",
      "SECONDS",
      "300",
      "activeDeadlineSeconds of migration Jobs (1 to 9223372036854775807)."),
  TTL_SECONDS_AFTER_FINISHED(
      "--ttl-seconds-after-finished",
      "SECONDS",
      "300",
      "Diagnostic retention in seconds for completed and failed migration Jobs (0 to"
          + " 2147483647)."),
  RETRY_COOLDOWN(
      "--retry-cooldown",
      "DURATION",
      "60s",
      "Wait after a failed migration before the next attempt: a duration such as 90s, 2m or 1h30m,"
          + " or plain seconds; at least 1s. The next Job comes after the later of this and the"
          + " failed Job's retention (--ttl-seconds-after-finished)."),
  FAILURE_LOG_LINES(
      "--failure-log-lines",
      "N",
      "20",
      "At most this many lines of a failed migration pod's log (the Error: lines of openfga"
          + " migrate and a few before them, credentials masked, at most 2 KiB) put into the"
          + " MigrationFailed Event and condition before the Job is ever deleted; needs pods/log"
          + " get (and pods list, needed anyway). 0 turns it off (0 to 1000)."),
  DRY_RUN(
      "--dry-run",
      "true|false",
      "false",
      "Observe and decide as usual, but write nothing (no Job, record, condition, scale, Event or"
          + " Lease): each write that would be made is logged once at INFO as \"dry run:"
          + " <what it decided> (<STATE>): would ...\"; the status command and the metrics show the states. Cannot be combined with"
          + " --leader-elect."),
  STORES_AND_MODELS(
      "--stores-and-models",
      "true|false",
      "false",
      "Also reconcile FGAStore and FGAModel resources (group openfga.dev): OpenFGA stores and"
          + " authorization models declared in Kubernetes. Needs their CRDs installed (the chart's"
          + " storesAndModels.enabled), --openfga-servers, and get on Secrets for their"
          + " credentials. Not with --dry-run."),
  MODEL_TEST_MAX_CHECKS(
      "--model-test-max-checks",
      "N",
      "1000",
      "With --stores-and-models: at most this many checks one FGAModel's spec.tests may expand to"
          + " (one per user, object and relation of a check; one per user and relation of a"
          + " list_objects); more is InvalidModel, naming the limit and the count, before any"
          + " check runs (1 to 100000)."),
  TUPLES_PER_WRITE(
      "--tuples-per-write",
      "N",
      "100",
      "With --stores-and-models: at most this many tuples an FGATuples sends in one Write to"
          + " OpenFGA (its default limit, OPENFGA_MAX_TUPLES_PER_WRITE, is 100). A server that"
          + " refuses a Write as too large gets half as many, with a BatchSizeReduced Warning"
          + " (1 to 1000)."),
  OPENFGA_SERVERS(
      "--openfga-servers",
      "URL[,URL...]",
      "",
      "The OpenFGA servers FGAStores may name, as comma-separated base URLs (e.g."
          + " http://openfga.openfga.svc:8080): an FGAStore whose openfgaRef.url is not one of them"
          + " (scheme, host, port and path compared; the case of scheme and host, a default port"
          + " and a trailing / do not matter) gets Ready=False, reason ServerNotAllowed, and is"
          + " sent no request. Required with --stores-and-models."),
  LOG_FORMAT("--log-format", "text|json", "text", "Log format: text (one line each) or json."),
  LOG_LEVEL(
      "--log-level",
      "LEVEL",
      "info",
      "Log level: trace, debug, info, warn or error. Kubernetes client and framework logs stay at"
          + " warn unless the level is debug or trace, and never go below debug (their trace"
          + " output is whole HTTP exchanges and resources, credentials included). No level"
          + " logs a credential.");

  /** Prefix of every flag's environment variable. */
  public static final String ENV_PREFIX = "OPENFGA_OPERATOR_";

  private final String option;
  private final String paramLabel;
  private final String defaultValue;
  private final String description;

  Flag(String option, String paramLabel, String defaultValue, String description) {
    this.option = option;
    this.paramLabel = paramLabel;
    this.defaultValue = defaultValue;
    this.description = description;
  }

  /** The long option, e.g. {@code --backoff-limit}. */
  public String option() {
    return option;
  }

  /**
   * The environment variable read when the flag is not given, e.g. {@code
   * OPENFGA_OPERATOR_BACKOFF_LIMIT}.
   */
  public String envVar() {
    return ENV_PREFIX + option.substring(2).replace('-', '_').toUpperCase(Locale.ROOT);
  }

  /** The default as shown to people (may describe a lookup rather than be a literal value). */
  public String defaultValue() {
    return defaultValue;
  }

  public String description() {
    return description;
  }

  String paramLabel() {
    return paramLabel;
  }

  /** Switches may be given without a value ({@code --leader-elect} means {@code true}). */
  public boolean isSwitch() {
    return this == WATCH_ALL_NAMESPACES
        || this == LEADER_ELECT
        || this == DRY_RUN
        || this == STORES_AND_MODELS;
  }

  /** May be given several times; the values add up. */
  public boolean isRepeatable() {
    return this == WATCH_NAMESPACES;
  }

  /**
   * The flags as a Markdown table (flag, environment variable, default, meaning), for
   * docs/reference.md.
   */
  public static String markdownTable() {
    StringBuilder table =
        new StringBuilder(
            "| Flag | Environment variable | Default | Meaning |\n|---|---|---|---|\n");
    for (Flag flag : values()) {
      String shownDefault =
          flag.defaultValue.isEmpty()
              ? "(none)"
              : flag.defaultValue.contains("`") ? flag.defaultValue : "`" + flag.defaultValue + "`";
      table
          .append("| `")
          .append(flag.option)
          .append("` | `")
          .append(flag.envVar())
          .append("` | ")
          .append(shownDefault)
          .append(" | ")
          .append(flag.description.replace("|", "\\|"))
          .append(" |\n");
    }
    return table.toString();
  }
}
