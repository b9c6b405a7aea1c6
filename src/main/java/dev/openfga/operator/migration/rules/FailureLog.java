package dev.openfga.operator.migration.rules;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What of a failed {@code openfga migrate}'s log is worth copying into an Event, a condition and an
 * annotation, and the redaction that comes before any copy. Pure.
 *
 * <p>On failure {@code openfga migrate} prints one {@code Error: ...} line (sometimes with
 * tab-indented continuation lines) and then cobra's whole usage text ({@code Usage:}, {@code
 * Flags:}, ...), so the last lines of the log are the usage, not the error. The excerpt is the
 * {@code Error:} lines and the few lines before them, without the usage; a log without an {@code
 * Error:} line keeps its last lines.
 *
 * <p>The Deployment's status and Events are readable by far more people than its Secrets, and a
 * malformed URI makes {@code openfga migrate} print the whole URI, password included: so {@code
 * scheme://user:password@}, {@code password=...} and the literal datastore URI and password values
 * of the migration container are masked.
 */
public final class FailureLog {
  /** Lines kept before the first {@code Error:} line. */
  static final int CONTEXT_LINES = 3;

  /** A URI's {@code scheme://}. */
  private static final String SCHEME_TEXT = "[A-Za-z][A-Za-z0-9+.-]*://";

  /** What replaces a secret. */
  public static final String MASK = "***";

  /**
   * {@code scheme://user:} and everything up to the last {@code @} of the line: a password may hold
   * spaces, quotes (printed by Go as {@code \"}), {@code %} and {@code @} itself, and Go's URL
   * parser splits the user info at the last {@code @} too. More is masked than the password when
   * the line has another {@code @} after the URI; never less.
   */
  private static final Pattern USERINFO =
      Pattern.compile("(" + SCHEME_TEXT + ")([^:/@\\s\"']*):([^\\n]*)@");

  /**
   * {@code scheme://host:} and what follows up to the next delimiter, when that is not a port: a
   * password with a {@code #}, {@code /} or {@code ?} ends Go's authority early, so the user info
   * is printed as host and port ({@code parse "postgres://openfga:Xk9": invalid port ":Xk9" after
   * host}).
   */
  private static final Pattern HOST_PORT =
      Pattern.compile("(" + SCHEME_TEXT + "[^:/@\\s\"'?#\\[\\]]*:)([^\\s\"'/?#@]*)");

  /** A port, and more hosts with theirs ({@code 5432,b:5432}): nothing to mask. */
  private static final Pattern PORTS = Pattern.compile("\\d*(,[^,:\\[\\]]*(:\\d+)?)*");

  /**
   * The URI Go's URL parser quotes in its errors ({@code parse "..."}, {@code %q}: quotes and
   * spaces kept, {@code "} as {@code \"}), masked as Go reads it ({@link #maskParsedUri}). Written
   * as an unrolled loop of possessive quantifiers: no recursion however long the text.
   */
  private static final Pattern GO_PARSED =
      Pattern.compile("(parse \")([^\"\\\\]*+(?:\\\\.[^\"\\\\]*+)*+)(\")");

  private static final Pattern SCHEME = Pattern.compile(SCHEME_TEXT);

  /**
   * The parts of the URI Go's URL parser quotes in its errors ({@code invalid port ":Xk9" after
   * host}, {@code invalid URL escape "%zz"}, {@code invalid character "/" in host name}): from the
   * user info, when the password broke the parse.
   */
  private static final Pattern GO_QUOTED =
      Pattern.compile(
          "(invalid port |invalid URL escape |invalid character )\"([^\"\\\\]*+(?:\\\\.[^\"\\\\]*+)*+)\"");

  private static final Pattern PASSWORD =
      Pattern.compile("(?i)(password\\s*[=:]\\s*)('[^']*'|\"[^\"]*\"|[^\\s,;&]+)");

  /** The environment variables whose literal values are secrets. */
  private static final List<String> SECRET_ENV =
      List.of("OPENFGA_DATASTORE_URI", "OPENFGA_DATASTORE_PASSWORD");

  private FailureLog() {}

  /**
   * The lines of {@code log} to keep, at most {@code maxLines}: from {@link #CONTEXT_LINES} before
   * the first {@code Error:} line up to (not including) the usage text after it; without an {@code
   * Error:} line, the last lines.
   */
  public static String excerpt(String log, int maxLines) {
    List<String> lines = log.strip().lines().toList();
    int error = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith("Error: ")) {
        error = i;
        break;
      }
    }
    List<String> kept;
    if (error < 0) {
      kept = lines.subList(Math.max(0, lines.size() - maxLines), lines.size());
    } else {
      int end = error + 1;
      while (end < lines.size() && !isUsage(lines.get(end))) {
        end++;
      }
      int start = Math.max(0, error - CONTEXT_LINES);
      // the Error: lines win over the context when the lines are few
      start = Math.max(start, Math.min(error, end - maxLines));
      kept = lines.subList(start, Math.min(end, start + maxLines));
    }
    return String.join("\n", kept);
  }

  private static boolean isUsage(String line) {
    return line.equals("Usage:") || line.startsWith("Usage: ");
  }

  /** {@code text} with credentials and the given literal values masked. */
  public static String redact(String text, Collection<String> literals) {
    String out = text;
    // longest first: a URI is masked before the password inside it
    List<String> sorted = new ArrayList<>(literals);
    sorted.sort(Comparator.comparingInt(String::length).reversed());
    for (String literal : sorted) {
      // very short values would mask ordinary words
      if (literal.length() >= 4) {
        out = out.replace(literal, MASK);
      }
    }
    // first the URI Go quotes, as Go split it (an '@' after a '/' is not the user info's end)
    out =
        GO_PARSED
            .matcher(out)
            .replaceAll(
                m -> Matcher.quoteReplacement(m.group(1) + maskParsedUri(m.group(2)) + m.group(3)));
    out =
        GO_QUOTED
            .matcher(out)
            .replaceAll(
                m ->
                    Matcher.quoteReplacement(
                        m.group(1)
                            + '"'
                            + (m.group(2).matches(":?\\d*") ? m.group(2) : MASK)
                            + '"'));
    out =
        USERINFO
            .matcher(out)
            .replaceAll(m -> Matcher.quoteReplacement(m.group(1) + m.group(2) + ":" + MASK + "@"));
    out =
        HOST_PORT
            .matcher(out)
            .replaceAll(
                m ->
                    Matcher.quoteReplacement(
                        m.group(1) + (PORTS.matcher(m.group(2)).matches() ? m.group(2) : MASK)));
    return PASSWORD.matcher(out).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + MASK));
  }

  /**
   * A URI Go's URL parser refused, its password masked as Go splits it (the text before {@code #}
   * is all it quotes): the authority ends at the first {@code /} or {@code ?}, the user info at its
   * last {@code @}. When what follows is no list of hosts with numeric ports, a password was cut
   * short (by a {@code /}, {@code ?} or {@code #}), and everything from the authority's first
   * {@code :} to the end of the quoted text is masked.
   */
  static String maskParsedUri(String uri) {
    Matcher scheme = SCHEME.matcher(uri);
    if (!scheme.lookingAt()) {
      return uri;
    }
    int start = scheme.end();
    int end = start;
    while (end < uri.length() && uri.charAt(end) != '/' && uri.charAt(end) != '?') {
      end++;
    }
    String authority = uri.substring(start, end);
    int at = authority.lastIndexOf('@');
    String hosts = authority.substring(at + 1);
    if (Database.isHostList(hosts)) {
      // the hosts as Go read them: only a password before the last '@' is masked
      int colon = authority.indexOf(':');
      if (at < 0 || colon < 0 || colon > at) {
        return uri;
      }
      return uri.substring(0, start + colon + 1) + MASK + uri.substring(start + at);
    }
    // a "port" that is no number (or an '@' in it): a password cut short, masked from its first
    // ':' (a user name may hold an '@', Azure's user@server) to the end of the quoted text
    int colon = authority.indexOf(':');
    return colon < 0 ? uri : uri.substring(0, start + colon + 1) + MASK;
  }

  /**
   * The literal (not {@code valueFrom}) datastore URI and password of the container, and the
   * password inside a literal URI: the values that are never copied anywhere.
   */
  public static List<String> literalSecrets(Container container) {
    List<String> secrets = new ArrayList<>();
    if (container.getEnv() == null) {
      return secrets;
    }
    for (EnvVar env : container.getEnv()) {
      if (SECRET_ENV.contains(env.getName())
          && env.getValue() != null
          && !env.getValue().isBlank()) {
        secrets.add(env.getValue());
        Matcher userinfo = USERINFO.matcher(env.getValue());
        while (userinfo.find()) {
          if (!userinfo.group(3).isEmpty()) {
            secrets.add(userinfo.group(3));
          }
        }
      }
    }
    return secrets;
  }
}
