package dev.openfga.operator.chart;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Helm's {@code --set} and {@code --set-string} (its {@code strvals} package) for what the docs
 * use, written as a values file so that a chart can be rendered with exactly a documented command:
 * assignments separated by unescaped commas, keys split at unescaped dots ({@code \.} is a dot in
 * the key), and the value typed for {@code --set} ({@code true}, {@code false}, {@code null} and
 * 64-bit integers are not strings) or always a string for {@code --set-string}. List indexes
 * ({@code a[0]}) are not modelled and fail.
 */
final class HelmSetValues {
  private final Map<String, Object> values = new LinkedHashMap<>();

  /** Applies one {@code --set} ({@code typed}) or {@code --set-string} argument. */
  HelmSetValues apply(String argument, boolean typed) {
    for (String assignment : split(argument, ',')) {
      int eq = indexOfUnescaped(assignment, '=');
      if (eq < 0) {
        throw new IllegalArgumentException("key " + assignment + " has no value");
      }
      List<String> path = split(assignment.substring(0, eq), '.');
      Map<String, Object> at = values;
      for (String segment : path.subList(0, path.size() - 1)) {
        Object next = at.computeIfAbsent(unescape(segment), k -> new LinkedHashMap<>());
        if (!(next instanceof Map)) {
          at.put(unescape(segment), next = new LinkedHashMap<>());
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> map = (Map<String, Object>) next;
        at = map;
      }
      String key = unescape(path.get(path.size() - 1));
      if (key.contains("[")) {
        throw new IllegalArgumentException("list indexes are not modelled: " + key);
      }
      String raw = unescape(assignment.substring(eq + 1));
      at.put(key, typed ? typed(raw) : raw);
    }
    return this;
  }

  /** The values so far, as a YAML file in {@code dir}. */
  Path write(Path dir) {
    try {
      Path file = Files.createTempFile(dir, "set-", ".yaml");
      Files.writeString(file, OperatorChart.YAML.writeValueAsString(values));
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Map<String, Object> values() {
    return values;
  }

  private static Object typed(String raw) {
    switch (raw) {
      case "true":
        return Boolean.TRUE;
      case "false":
        return Boolean.FALSE;
      case "null":
        return null;
      default:
        try {
          return Long.parseLong(raw);
        } catch (NumberFormatException e) {
          return raw;
        }
    }
  }

  private static List<String> split(String s, char separator) {
    List<String> parts = new ArrayList<>();
    StringBuilder part = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        part.append(c).append(s.charAt(++i));
      } else if (c == separator) {
        parts.add(part.toString());
        part.setLength(0);
      } else {
        part.append(c);
      }
    }
    parts.add(part.toString());
    return parts;
  }

  private static int indexOfUnescaped(String s, char c) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) == '\\') {
        i++;
      } else if (s.charAt(i) == c) {
        return i;
      }
    }
    return -1;
  }

  private static String unescape(String s) {
    return s.replaceAll("\\\\(.)", "$1");
  }
}
