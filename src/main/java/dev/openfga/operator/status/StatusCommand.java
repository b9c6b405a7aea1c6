package dev.openfga.operator.status;

import dev.openfga.operator.config.Cli;
import dev.openfga.operator.config.Cli.UsageException;
import dev.openfga.operator.kube.OperatorClient;
import dev.openfga.operator.ops.Logging;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * {@code openfga-operator status}: every opted-in OpenFGA Deployment with its desired and migrated
 * version, the state the operator's planner computes for it, its migration Job and its last Event.
 * Read-only, with the caller's kubeconfig, like {@code kubectl get}.
 */
public final class StatusCommand implements Cli.Subcommand {
  public static final String NAME = "status";

  /** Exit code when the cluster cannot be read. */
  public static final int EXIT_UNREACHABLE = 1;

  private static final String SUMMARY =
      "Lists every opted-in OpenFGA Deployment: desired version, migrated version, state (as the"
          + " operator decides it), migration Job and last Event.";

  static final String HELP =
      """
      Usage: openfga-operator status [-Ah] [-n=NAMESPACE] [-o=FORMAT]
      %s
      Reads the cluster with your kubeconfig (KUBECONFIG, ~/.kube/config, current context); writes \
      nothing.
        -n, --namespace=NAMESPACE  Namespace to list. Default: the kubeconfig context's namespace, \
      else default.
        -A, --all-namespaces       List every namespace (adds a NAMESPACE column).
        -o, --output=FORMAT        table (default) or json (an array of objects with stable field \
      names).
        -h, --help                 Show this help message and exit.

      Exit status: 0 when the cluster was read, 1 when it could not be, 2 on a usage error.
      """
          .formatted(SUMMARY);

  private final Supplier<KubernetesClient> clients;
  private final boolean ownsClient;
  private final Clock clock;

  /** With a client from the caller's kubeconfig, and the system clock. */
  public StatusCommand() {
    this.clients = StatusCommand::kubeconfigClient;
    this.ownsClient = true;
    this.clock = Clock.systemUTC();
  }

  /** With the given client (not closed) and clock: for tests and the demo. */
  public StatusCommand(KubernetesClient client, Clock clock) {
    Objects.requireNonNull(client, "client");
    this.clients = () -> client;
    this.ownsClient = false;
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String summary() {
    return SUMMARY;
  }

  @Override
  public int run(List<String> args, PrintWriter out, PrintWriter err) {
    String namespace = null;
    boolean allNamespaces = false;
    String output = "table";
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      int eq = arg.startsWith("-") ? arg.indexOf('=') : -1;
      String option = eq < 0 ? arg : arg.substring(0, eq);
      String inline = eq < 0 ? null : arg.substring(eq + 1);
      switch (option) {
        case "-h", "--help" -> {
          out.print(HELP);
          return 0;
        }
        case "-n", "--namespace" -> namespace = inline != null ? inline : Cli.valueAfter(args, i++);
        case "-A", "--all-namespaces" -> allNamespaces = true;
        case "-o", "--output" -> output = inline != null ? inline : Cli.valueAfter(args, i++);
        default ->
            throw new UsageException(
                arg.startsWith("-")
                    ? "Unknown option: '" + arg + "'"
                    : "Unmatched argument at index " + i + ": '" + arg + "'");
      }
    }
    boolean json = parseOutput(output);
    if (namespace != null && allNamespaces) {
      throw new UsageException("--namespace and --all-namespaces cannot be combined");
    }
    if (namespace != null && namespace.isBlank()) {
      throw new UsageException("--namespace must not be empty");
    }
    if (ownsClient) {
      quietLogs();
    }
    KubernetesClient client = null;
    try {
      client = clients.get();
      Optional<String> scope =
          allNamespaces ? Optional.empty() : Optional.of(namespace(client, namespace));
      List<StatusRow> rows = StatusView.rows(StatusReader.read(client, scope), clock.instant());
      if (json) {
        out.print(StatusTable.json(rows));
      } else if (rows.isEmpty()) {
        err.println(
            "No opted-in OpenFGA Deployments found"
                + scope.map(ns -> " in namespace " + ns).orElse("")
                + ".");
      } else {
        out.print(StatusTable.table(rows, allNamespaces));
      }
      out.flush();
      err.flush();
      return 0;
    } catch (RuntimeException e) {
      err.println("error: " + describe(e, server(client)));
      err.flush();
      return EXIT_UNREACHABLE;
    } finally {
      if (ownsClient && client != null) {
        client.close();
      }
    }
  }

  private static boolean parseOutput(String output) {
    return switch (output.strip().toLowerCase(java.util.Locale.ROOT)) {
      case "table", "" -> false;
      case "json" -> true;
      default ->
          throw new UsageException(
              "Invalid value for option '--output': '" + output + "' (expected table or json)");
    };
  }

  private static String namespace(KubernetesClient client, String namespace) {
    if (namespace != null) {
      return namespace.strip();
    }
    String fromContext = client.getNamespace();
    return fromContext == null || fromContext.isBlank() ? "default" : fromContext;
  }

  /** The client from the kubeconfig, failing fast: no request retries for a command line. */
  private static KubernetesClient kubeconfigClient() {
    Config config = Config.autoConfigure(null);
    config.setRequestRetryBackoffLimit(0);
    return OperatorClient.create(config);
  }

  private static String server(KubernetesClient client) {
    try {
      return client == null ? null : client.getMasterUrl().toString();
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** One line: what failed, and where. */
  static String describe(RuntimeException e, String server) {
    String at = server == null ? "" : " at " + server;
    Throwable io = e;
    while (io != null && !(io instanceof IOException)) {
      io = io.getCause();
    }
    if (io != null) {
      return "cannot reach the Kubernetes API server" + at + ": " + networkReason(io);
    }
    if (e instanceof KubernetesClientException k && k.getCode() > 0) {
      String message =
          k.getStatus() != null && k.getStatus().getMessage() != null
              ? k.getStatus().getMessage()
              : k.getMessage();
      return "the Kubernetes API server"
          + at
          + " answered "
          + k.getCode()
          + ": "
          + oneLine(message);
    }
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = reason(e);
    if (root != e) {
      message += ": " + reason(root);
    }
    return "cannot read the cluster" + at + ": " + message;
  }

  /** The JDK's HTTP client gives most network failures no message: say which one it was. */
  private static String networkReason(Throwable io) {
    for (Throwable t = io; t != null; t = t.getCause()) {
      if (t instanceof UnresolvedAddressException || t instanceof UnknownHostException) {
        return "unknown host" + (t.getMessage() == null ? "" : " " + t.getMessage());
      }
      if (t instanceof HttpTimeoutException) {
        return "timed out";
      }
      if (t instanceof ConnectException && t.getCause() instanceof ClosedChannelException) {
        return "connection refused";
      }
    }
    for (Throwable t = io; t != null; t = t.getCause()) {
      if (t.getMessage() != null && !t.getMessage().isBlank()) {
        return oneLine(t.getMessage());
      }
    }
    return reason(io);
  }

  private static String reason(Throwable t) {
    String message = t.getMessage();
    return message == null || message.isBlank() ? t.getClass().getSimpleName() : oneLine(message);
  }

  private static String oneLine(String text) {
    return text == null ? "" : text.replaceAll("\\s+", " ").strip();
  }

  /**
   * A command line prints only its own output: the libraries' logs (on standard output) would break
   * {@code -o json}.
   */
  private static void quietLogs() {
    Logging.off();
  }
}
