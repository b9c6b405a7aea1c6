package dev.openfga.operator.config;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The operator's command line: {@code openfga-operator [flags]} or {@code openfga-operator
 * <subcommand> [its flags]}. A parser of our own rather than a library: it is a few dozen lines,
 * and picocli's classes (class-file version 49) are ones the image's AOT cache cannot hold, so they
 * would be loaded from the jar and verified at every start (docs/performance.md, "Where the
 * start-up goes" and change 15).
 *
 * <p>Forms, as Go's flag package and the upstream operator accept them: {@code --flag=value},
 * {@code --flag value}; a switch alone means {@code true} and takes a following word that does not
 * start with {@code -} as its value; the last occurrence of a flag wins, a repeatable flag collects
 * every occurrence. {@code -h}/{@code --help} and {@code -V}/{@code --version} print and exit 0; a
 * usage error (unknown flag, missing value, stray word) prints the problem and a hint and exits
 * {@link #EXIT_USAGE}.
 */
public final class Cli {

  /** Exit code of a usage error. */
  public static final int EXIT_USAGE = 2;

  /** A usage error: an unknown flag, a missing value, a word where none belongs. */
  public static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
      super(message);
    }
  }

  /** A subcommand: {@code openfga-operator <name> [args]}. */
  public interface Subcommand {
    /** The word that selects it. */
    String name();

    /** One line for the root command's help. */
    String summary();

    /**
     * Runs with the words after its name.
     *
     * @return the exit code
     * @throws UsageException on a usage error, reported by the caller
     */
    int run(List<String> args, PrintWriter out, PrintWriter err);
  }

  /** What the root command does with parsed flags. */
  interface Root {
    int run(Map<Flag, String> given, PrintWriter out, PrintWriter err);
  }

  private final Root root;
  private final Map<String, Subcommand> subcommands = new LinkedHashMap<>();
  private PrintWriter out = new PrintWriter(System.out, true);
  private PrintWriter err = new PrintWriter(System.err, true);

  Cli(Root root) {
    this.root = root;
  }

  /** Adds {@code subcommand}; returns this. */
  public Cli addSubcommand(Subcommand subcommand) {
    subcommands.put(subcommand.name(), subcommand);
    return this;
  }

  public Cli setOut(PrintWriter out) {
    this.out = out;
    return this;
  }

  public Cli setErr(PrintWriter err) {
    this.err = err;
    return this;
  }

  /** The root command's options: every {@link Flag}, then {@code --help} and {@code --version}. */
  public List<String> options() {
    List<String> options = new ArrayList<>();
    for (Flag flag : Flag.values()) {
      options.add(flag.option());
    }
    options.add("--help");
    options.add("--version");
    return options;
  }

  /** Runs the command line {@code args}; returns the exit code. */
  public int execute(String... args) {
    String command = Flags.COMMAND_NAME;
    try {
      if (args.length > 0 && subcommands.containsKey(args[0])) {
        Subcommand sub = subcommands.get(args[0]);
        command = Flags.COMMAND_NAME + " " + sub.name();
        return flushed(sub.run(List.of(args).subList(1, args.length), out, err));
      }
      for (String arg : args) {
        if (arg.equals("-h") || arg.equals("--help")) {
          out.print(help());
          return flushed(0);
        }
        if (arg.equals("-V") || arg.equals("--version")) {
          out.println(Flags.COMMAND_NAME + " " + Flags.version());
          return flushed(0);
        }
      }
      return flushed(root.run(parse(args), out, err));
    } catch (UsageException e) {
      err.println(e.getMessage());
      err.println("Try '" + command + " --help' for more information.");
      return flushed(EXIT_USAGE);
    }
  }

  private int flushed(int code) {
    out.flush();
    err.flush();
    return code;
  }

  /**
   * The flags given in {@code args}, by flag; a repeatable flag's values joined with commas.
   *
   * @throws UsageException on an unknown flag, a missing value or a stray word
   */
  static Map<Flag, String> parse(String... args) {
    Map<Flag, String> given = new EnumMap<>(Flag.class);
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("-")) {
        throw new UsageException("Unmatched argument at index " + i + ": '" + arg + "'");
      }
      int eq = arg.indexOf('=');
      String name = eq < 0 ? arg : arg.substring(0, eq);
      Flag flag = byOption(name);
      if (flag == null) {
        throw new UsageException("Unknown option: '" + arg + "'" + suggestion(name));
      }
      String value;
      if (eq >= 0) {
        value = arg.substring(eq + 1);
      } else if (flag.isSwitch()) {
        boolean next = i + 1 < args.length && !args[i + 1].startsWith("-");
        value = next ? args[++i] : "true";
      } else if (i + 1 < args.length) {
        value = args[++i];
      } else {
        throw new UsageException(
            "Missing required parameter for option '"
                + flag.option()
                + "' ("
                + flag.paramLabel()
                + ")");
      }
      given.merge(flag, value, (old, added) -> flag.isRepeatable() ? old + "," + added : added);
    }
    return given;
  }

  /**
   * The value after {@code args[i]}, a flag that needs one.
   *
   * @throws UsageException when there is none
   */
  public static String valueAfter(List<String> args, int i) {
    if (i + 1 >= args.size()) {
      throw new UsageException("Missing required parameter for option '" + args.get(i) + "'");
    }
    return args.get(i + 1);
  }

  private static Flag byOption(String option) {
    for (Flag flag : Flag.values()) {
      if (flag.option().equals(option)) {
        return flag;
      }
    }
    return null;
  }

  /** ", did you mean --backoff-limit?" for a flag one or two edits away, else nothing. */
  private static String suggestion(String name) {
    for (Flag flag : Flag.values()) {
      if (distance(name, flag.option()) <= 2) {
        return "\nDid you mean: " + flag.option() + "?";
      }
    }
    return "";
  }

  private static int distance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    Arrays.setAll(previous, j -> j);
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[b.length()];
  }

  /** The root command's help: usage, every flag with its default and variable, the commands. */
  String help() {
    StringBuilder s = new StringBuilder();
    s.append("Usage: ")
        .append(Flags.COMMAND_NAME)
        .append(" [-hV] [FLAGS...]")
        .append(subcommands.isEmpty() ? "" : " [COMMAND]")
        .append('\n')
        .append(Flags.DESCRIPTION)
        .append("\n\n");
    for (Flag flag : Flag.values()) {
      String shownDefault = flag.defaultValue().isEmpty() ? "none" : flag.defaultValue();
      s.append("      ")
          .append(flag.option())
          .append(flag.isSwitch() ? "[=" + flag.paramLabel() + "]" : "=" + flag.paramLabel())
          .append('\n')
          .append("          ")
          .append(flag.description())
          .append('\n')
          .append("          Default: ")
          .append(shownDefault.replace("`", ""))
          .append(". Env: ")
          .append(flag.envVar())
          .append(".\n");
    }
    s.append("  -h, --help\n          Show this help message and exit.\n");
    s.append("  -V, --version\n          Print version information and exit.\n");
    if (!subcommands.isEmpty()) {
      s.append("Commands:\n");
      subcommands
          .values()
          .forEach(
              c -> s.append("  ").append(c.name()).append("  ").append(c.summary()).append('\n'));
    }
    s.append('\n').append(Flags.FOOTER).append('\n');
    return s.toString();
  }
}
