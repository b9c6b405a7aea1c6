package dev.openfga.operator.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import java.util.regex.Pattern;

/**
 * The operator's command line: {@code openfga-operator [flags]} runs the operator. Flags come from
 * {@link Flag}; each falls back on its environment variable, then on its default. All invalid
 * values are reported together, one line each, before anything starts.
 *
 * <p>The root command ({@link Cli}) is made from {@link Flag} so that the flag list exists once.
 * Subcommands can be added to the {@link Cli} that {@link #commandLine} returns.
 */
public final class Flags {

  public static final String COMMAND_NAME = "openfga-operator";

  /** Set from the downward API; the operator's own namespace. */
  public static final String POD_NAMESPACE = "POD_NAMESPACE";

  /** Shown by {@code --version} when the code does not run from a jar with a version. */
  public static final String UNKNOWN_VERSION = "dev";

  /** Exit code when flags are invalid. */
  public static final int EXIT_INVALID_FLAGS = 1;

  static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  static final Pattern LEASE_NAME =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  private Flags() {}

  /** The root command's description in {@code --help}. */
  static final String DESCRIPTION =
      "Runs OpenFGA database migrations as Kubernetes Jobs when an opted-in OpenFGA Deployment"
          + " changes version.";

  /** The last line of {@code --help}. */
  static final String FOOTER =
      "Every flag may also be set through the environment variable named beside it; a flag on the"
          + " command line wins over the environment.";

  /**
   * The root command. When run without a subcommand it validates the flags and hands the result to
   * {@code operator}, whose return value becomes the exit code; invalid flags print one line per
   * problem on the error stream and exit with {@link #EXIT_INVALID_FLAGS}. {@code --help} and
   * {@code --version} print and exit 0; a usage error (unknown flag, missing value) exits 2.
   */
  public static Cli commandLine(Environment environment, ToIntFunction<StartupConfig> operator) {
    return new Cli(
        (given, out, err) -> {
          StartupConfig config;
          try {
            config = resolve(given, environment);
          } catch (InvalidFlagsException e) {
            e.problems().forEach(err::println);
            return EXIT_INVALID_FLAGS;
          }
          return operator.applyAsInt(config);
        });
  }

  /**
   * Parses and validates {@code args} without running anything.
   *
   * @throws Cli.UsageException on a usage error (unknown flag, missing value)
   * @throws InvalidFlagsException when values are invalid
   */
  public static StartupConfig parse(Environment environment, String... args)
      throws InvalidFlagsException {
    return resolve(Cli.parse(args), environment);
  }

  /** The version from the jar's manifest ({@code Implementation-Version}), else {@code dev}. */
  public static String version() {
    String version = Flags.class.getPackage().getImplementationVersion();
    return version == null || version.isBlank() ? UNKNOWN_VERSION : version;
  }

  /**
   * The namespace to watch when none is given, as upstream's {@code resolveWatchNamespace}: the
   * trimmed explicit value if not blank; else the trimmed {@code POD_NAMESPACE} if not blank
   * (without reading the file); else the trimmed content of the service-account namespace file.
   * Only {@code POD_NAMESPACE} is looked up.
   *
   * @param explicit the value given for the flag, or {@code null}
   * @throws MissingNamespaceException when the file cannot be read (the cause is the I/O error) or
   *     is blank
   */
  public static String resolveWatchNamespace(
      String explicit, Path serviceAccountNamespaceFile, Function<String, String> lookupEnv)
      throws MissingNamespaceException {
    if (explicit != null && !explicit.isBlank()) {
      return explicit.strip();
    }
    String podNamespace = lookupEnv.apply(POD_NAMESPACE);
    if (podNamespace != null && !podNamespace.isBlank()) {
      return podNamespace.strip();
    }
    String content;
    try {
      content = Files.readString(serviceAccountNamespaceFile);
    } catch (IOException e) {
      String reason = e instanceof NoSuchFileException ? "no such file" : e.toString();
      throw new MissingNamespaceException(
          POD_NAMESPACE
              + " is empty and reading service-account namespace file \""
              + serviceAccountNamespaceFile
              + "\": "
              + reason,
          e);
    }
    if (content.isBlank()) {
      throw new MissingNamespaceException(
          POD_NAMESPACE
              + " and service-account namespace file \""
              + serviceAccountNamespaceFile
              + "\" are empty");
    }
    return content.strip();
  }

  /** Validates the values given on the command line, completed from the environment. */
  static StartupConfig resolve(Map<Flag, String> commandLine, Environment environment)
      throws InvalidFlagsException {
    return new FlagResolution(commandLine, environment).config();
  }
}
