package dev.openfga.operator.chart;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The metric and label names a PromQL expression refers to — enough of PromQL to check the chart's
 * alerts and dashboard against a scrape, not a full parser. Read: identifiers that select series
 * (followed by {@code {}, {@code [}, whitespace, an operator or the end, and not a function, an
 * aggregation or a keyword), the label names of their matchers, the label names of {@code by},
 * {@code without}, {@code on}, {@code ignoring} and {@code group_left}/{@code group_right} lists,
 * and {@code {__name__="..."}} selectors. Skipped: strings, comments, numbers and durations, range
 * and subquery brackets, and Grafana's variables ({@code $job}, {@code ${job}}). An identifier
 * followed by {@code (} that is no PromQL function is an error, as Prometheus would say.
 */
public final class PromQl {
  private PromQl() {}

  /** A series selector: its metric name (null when it has none) and the labels it matches on. */
  public record Selector(String metric, Set<String> labels) {}

  /** What an expression refers to. */
  public record Names(List<Selector> selectors, Set<String> groupingLabels) {
    public Set<String> metrics() {
      Set<String> metrics = new LinkedHashSet<>();
      selectors.forEach(s -> metrics.add(s.metric()));
      metrics.remove(null);
      return metrics;
    }
  }

  static final Set<String> AGGREGATIONS =
      Set.of(
          "sum",
          "min",
          "max",
          "avg",
          "group",
          "stddev",
          "stdvar",
          "count",
          "count_values",
          "bottomk",
          "topk",
          "quantile",
          "limitk",
          "limit_ratio");

  static final Set<String> FUNCTIONS =
      Set.of(
          "abs",
          "absent",
          "absent_over_time",
          "acos",
          "acosh",
          "asin",
          "asinh",
          "atan",
          "atanh",
          "avg_over_time",
          "ceil",
          "changes",
          "clamp",
          "clamp_max",
          "clamp_min",
          "cos",
          "cosh",
          "count_over_time",
          "day_of_month",
          "day_of_week",
          "day_of_year",
          "days_in_month",
          "deg",
          "delta",
          "deriv",
          "double_exponential_smoothing",
          "end",
          "exp",
          "floor",
          "histogram_avg",
          "histogram_count",
          "histogram_fraction",
          "histogram_quantile",
          "histogram_stddev",
          "histogram_stdvar",
          "histogram_sum",
          "holt_winters",
          "hour",
          "idelta",
          "increase",
          "info",
          "irate",
          "label_join",
          "label_replace",
          "last_over_time",
          "ln",
          "log10",
          "log2",
          "mad_over_time",
          "max_over_time",
          "min_over_time",
          "minute",
          "month",
          "pi",
          "predict_linear",
          "present_over_time",
          "quantile_over_time",
          "rad",
          "rate",
          "resets",
          "round",
          "scalar",
          "sgn",
          "sin",
          "sinh",
          "sort",
          "sort_by_label",
          "sort_by_label_desc",
          "sort_desc",
          "sqrt",
          "start",
          "stddev_over_time",
          "stdvar_over_time",
          "sum_over_time",
          "tan",
          "tanh",
          "time",
          "timestamp",
          "vector",
          "year");

  /** Keywords followed by a list of label names in parentheses. */
  private static final Set<String> LABEL_LISTS =
      Set.of("by", "without", "on", "ignoring", "group_left", "group_right");

  /** Binary operators and modifiers written as words, and the number literals. */
  private static final Set<String> WORDS =
      Set.of("and", "or", "unless", "atan2", "bool", "offset", "inf", "nan");

  /**
   * The names {@code expr} refers to.
   *
   * @throws IllegalArgumentException for what this reader cannot make sense of (an unknown
   *     function, an unclosed string or bracket, a malformed matcher)
   */
  public static Names parse(String expr) {
    return new Reader(expr).read();
  }

  private static final class Reader {
    private final String s;
    private int i;
    private final List<Selector> selectors = new ArrayList<>();
    private final Set<String> grouping = new LinkedHashSet<>();

    Reader(String s) {
      this.s = s;
    }

    Names read() {
      while (i < s.length()) {
        char c = s.charAt(i);
        if (Character.isWhitespace(c)) {
          i++;
        } else if (c == '#') {
          while (i < s.length() && s.charAt(i) != '\n') {
            i++;
          }
        } else if (c == '"' || c == '\'' || c == '`') {
          string();
        } else if (c == '[') {
          int close = s.indexOf(']', i);
          if (close < 0) {
            throw error("unclosed [");
          }
          i = close + 1;
        } else if (c == '{') {
          Set<String> labels = new LinkedHashSet<>();
          String name = matchers(labels);
          selectors.add(new Selector(name, labels));
        } else if (c == '$') {
          variable();
        } else if (Character.isDigit(c)
            || (c == '.' && i + 1 < s.length() && Character.isDigit(s.charAt(i + 1)))) {
          number();
        } else if (isIdentifierStart(c)) {
          identifier();
        } else {
          i++; // an operator, a parenthesis, a comma, @
        }
      }
      return new Names(List.copyOf(selectors), Set.copyOf(grouping));
    }

    private void identifier() {
      String word = name();
      String lower = word.toLowerCase(Locale.ROOT);
      if (LABEL_LISTS.contains(lower)) {
        skipSpace();
        if (i < s.length() && s.charAt(i) == '(') {
          labelList();
        }
        return;
      }
      if (WORDS.contains(lower)) {
        return;
      }
      skipSpace();
      char next = i < s.length() ? s.charAt(i) : 0;
      if (AGGREGATIONS.contains(lower)
          && (next == '(' || startsWithWord("by") || startsWithWord("without"))) {
        return;
      }
      if (next == '(') {
        if (!FUNCTIONS.contains(word)) {
          throw error("unknown function " + word);
        }
        return;
      }
      Set<String> labels = new LinkedHashSet<>();
      if (next == '{') {
        matchers(labels);
      }
      selectors.add(new Selector(word, labels));
    }

    /**
     * The matchers from {@code {} to {@code }}; returns the {@code __name__} they select, if any.
     */
    private String matchers(Set<String> labels) {
      i++; // {
      String metric = null;
      while (true) {
        skipSpace();
        if (i >= s.length()) {
          throw error("unclosed {");
        }
        if (s.charAt(i) == '}') {
          i++;
          return metric;
        }
        if (!isIdentifierStart(s.charAt(i))) {
          throw error("a label name expected");
        }
        String label = name();
        skipSpace();
        String op =
            s.startsWith("=~", i) || s.startsWith("!~", i) || s.startsWith("!=", i)
                ? s.substring(i, i + 2)
                : s.startsWith("=", i) ? "=" : null;
        if (op == null) {
          throw error("a matcher operator expected after " + label);
        }
        i += op.length();
        skipSpace();
        String value = string();
        if (label.equals("__name__")) {
          if (op.equals("=")) {
            metric = value;
          }
        } else {
          labels.add(label);
        }
        skipSpace();
        if (i < s.length() && s.charAt(i) == ',') {
          i++;
        }
      }
    }

    private void labelList() {
      i++; // (
      while (true) {
        skipSpace();
        if (i >= s.length()) {
          throw error("unclosed (");
        }
        char c = s.charAt(i);
        if (c == ')') {
          i++;
          return;
        }
        if (c == ',') {
          i++;
        } else if (isIdentifierStart(c)) {
          grouping.add(name());
        } else {
          throw error("a label name expected");
        }
      }
    }

    /** A string literal; returns its text without the quotes (escapes left as they are). */
    private String string() {
      if (i >= s.length()) {
        throw error("a string expected");
      }
      char quote = s.charAt(i);
      if (quote != '"' && quote != '\'' && quote != '`') {
        throw error("a string expected");
      }
      int start = ++i;
      while (i < s.length() && s.charAt(i) != quote) {
        i += quote != '`' && s.charAt(i) == '\\' ? 2 : 1;
      }
      if (i >= s.length()) {
        throw error("unclosed string");
      }
      return s.substring(start, i++);
    }

    /** A Grafana variable: {@code $name} or {@code ${name}} (also {@code ${name:format}}). */
    private void variable() {
      i++;
      if (i < s.length() && s.charAt(i) == '{') {
        int close = s.indexOf('}', i);
        if (close < 0) {
          throw error("unclosed ${");
        }
        i = close + 1;
      } else {
        while (i < s.length() && isIdentifierPart(s.charAt(i))) {
          i++;
        }
      }
    }

    /** A number or a duration: 0.95, 1e-3, 0x1f, 5m, 1h30m. */
    private void number() {
      while (i < s.length()) {
        char c = s.charAt(i);
        char before = s.charAt(i - 1);
        if (Character.isLetterOrDigit(c)
            || c == '.'
            || c == '_'
            || ((c == '+' || c == '-') && (before == 'e' || before == 'E'))) {
          i++;
        } else {
          return;
        }
      }
    }

    private String name() {
      int start = i;
      while (i < s.length() && isIdentifierPart(s.charAt(i))) {
        i++;
      }
      return s.substring(start, i);
    }

    private boolean startsWithWord(String word) {
      int end = i + word.length();
      return s.regionMatches(true, i, word, 0, word.length())
          && (end == s.length() || !isIdentifierPart(s.charAt(end)));
    }

    private void skipSpace() {
      while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
        i++;
      }
    }

    private IllegalArgumentException error(String what) {
      return new IllegalArgumentException(what + " at " + i + " in: " + s);
    }

    private static boolean isIdentifierStart(char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    }

    private static boolean isIdentifierPart(char c) {
      return isIdentifierStart(c) || (c >= '0' && c <= '9');
    }
  }
}
