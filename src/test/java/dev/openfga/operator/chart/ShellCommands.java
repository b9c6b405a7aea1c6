package dev.openfga.operator.chart;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The commands of a shell snippet from the docs, split into words the way a POSIX shell does before
 * it runs them: single quotes keep everything, double quotes keep all but {@code \"}, {@code \\},
 * {@code \$} and {@code \`}, an unquoted backslash keeps the next character (and a backslash before
 * a newline joins two lines), {@code #} at the start of a word begins a comment. So a test sees
 * what {@code helm} or {@code kubectl} would really receive, for example that an unquoted {@code
 * openfga\.dev} reaches Helm as {@code openfga.dev}. Expansions ({@code $x}, {@code $(...)}) are
 * not supported and fail the test, as do {@code |}, {@code &&} and {@code ;}.
 */
final class ShellCommands {
  private ShellCommands() {}

  /** Every command of the snippet, each as its words. */
  static List<List<String>> parse(String snippet) {
    List<List<String>> commands = new ArrayList<>();
    List<String> words = new ArrayList<>();
    StringBuilder word = null;
    int i = 0;
    while (i < snippet.length()) {
      char c = snippet.charAt(i);
      if (c == '\'') {
        int end = snippet.indexOf('\'', i + 1);
        if (end < 0) {
          throw new IllegalArgumentException("unclosed ' in: " + snippet);
        }
        word = (word == null ? new StringBuilder() : word).append(snippet, i + 1, end);
        i = end + 1;
      } else if (c == '"') {
        word = word == null ? new StringBuilder() : word;
        i++;
        while (i < snippet.length() && snippet.charAt(i) != '"') {
          char d = snippet.charAt(i);
          if (d == '$' || d == '`') {
            throw new IllegalArgumentException("expansion in: " + snippet);
          }
          if (d == '\\'
              && i + 1 < snippet.length()
              && "\"\\$`".indexOf(snippet.charAt(i + 1)) >= 0) {
            d = snippet.charAt(++i);
          }
          word.append(d);
          i++;
        }
        if (i >= snippet.length()) {
          throw new IllegalArgumentException("unclosed \" in: " + snippet);
        }
        i++;
      } else if (c == '\\') {
        if (i + 1 < snippet.length() && snippet.charAt(i + 1) == '\n') {
          i += 2; // line continuation
        } else if (i + 1 < snippet.length()) {
          word = (word == null ? new StringBuilder() : word).append(snippet.charAt(i + 1));
          i += 2;
        } else {
          i++;
        }
      } else if (c == ' ' || c == '\t') {
        if (word != null) {
          words.add(word.toString());
          word = null;
        }
        i++;
      } else if (c == '\n') {
        if (word != null) {
          words.add(word.toString());
          word = null;
        }
        if (!words.isEmpty()) {
          commands.add(words);
          words = new ArrayList<>();
        }
        i++;
      } else if (c == '#' && word == null) {
        while (i < snippet.length() && snippet.charAt(i) != '\n') {
          i++;
        }
      } else if (c == '$' || c == '`' || c == '|' || c == ';' || c == '&') {
        throw new IllegalArgumentException("'" + c + "' is not supported in: " + snippet);
      } else {
        word = (word == null ? new StringBuilder() : word).append(c);
        i++;
      }
    }
    if (word != null) {
      words.add(word.toString());
    }
    if (!words.isEmpty()) {
      commands.add(words);
    }
    return commands;
  }

  /** The fenced code blocks between two markers of a Markdown text, joined. */
  static String between(String text, String start, String end) {
    int from = text.indexOf(start);
    int to = text.indexOf(end, from + 1);
    if (from < 0 || to < 0) {
      throw new AssertionError("no " + start + " ... " + end);
    }
    StringBuilder code = new StringBuilder();
    Matcher m = FENCE.matcher(text.substring(from, to));
    while (m.find()) {
      code.append(m.group(1));
    }
    return code.toString();
  }

  private static final Pattern FENCE = Pattern.compile("(?s)```[a-z]*\\n(.*?)```");

  /**
   * The value of a flag in a command's words: {@code --flag value} or {@code --flag=value}; the
   * short form too when given. Null when absent.
   */
  static String flag(List<String> words, String name, String... aliases) {
    List<String> names = new ArrayList<>(List.of(aliases));
    names.add(name);
    for (int i = 0; i < words.size(); i++) {
      for (String n : names) {
        if (words.get(i).equals(n) && i + 1 < words.size()) {
          return words.get(i + 1);
        }
        if (words.get(i).startsWith(n + "=")) {
          return words.get(i).substring(n.length() + 1);
        }
      }
    }
    return null;
  }

  /** Every value of a repeatable flag, in order, with the flag each came with. */
  static List<Map.Entry<String, String>> flags(List<String> words, String... names) {
    List<Map.Entry<String, String>> found = new ArrayList<>();
    for (int i = 0; i < words.size(); i++) {
      for (String n : names) {
        if (words.get(i).equals(n) && i + 1 < words.size()) {
          found.add(Map.entry(n, words.get(i + 1)));
        } else if (words.get(i).startsWith(n + "=")) {
          found.add(Map.entry(n, words.get(i).substring(n.length() + 1)));
        }
      }
    }
    return found;
  }

  /** The words that are neither flags nor flag values (flags taking a value are listed). */
  static List<String> positional(List<String> words, List<String> flagsWithValues) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < words.size(); i++) {
      String w = words.get(i);
      if (w.startsWith("-")) {
        if (flagsWithValues.contains(w)) {
          i++;
        }
      } else {
        out.add(w);
      }
    }
    return out;
  }
}
