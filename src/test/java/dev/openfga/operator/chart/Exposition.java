package dev.openfga.operator.chart;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A scrape in the Prometheus text format: the name of each sample (as PromQL selects it: a
 * counter's with {@code _total}, a histogram's {@code _bucket}, {@code _sum} and {@code _count}
 * lines, never the bare family name) and the label names its lines carry.
 */
public final class Exposition {
  /**
   * Labels Prometheus gives every series of a target: {@code job} and {@code instance}, and what a
   * Prometheus Operator ServiceMonitor adds.
   */
  static final Set<String> TARGET_LABELS =
      Set.of("job", "instance", "namespace", "service", "pod", "container", "endpoint");

  /** Series Prometheus writes itself for every target: they are in no scrape. */
  static final Set<String> SYNTHETIC =
      Set.of(
          "up",
          "scrape_duration_seconds",
          "scrape_samples_scraped",
          "scrape_samples_post_metric_relabeling",
          "scrape_series_added");

  private final Map<String, Set<String>> labels;

  private Exposition(Map<String, Set<String>> labels) {
    this.labels = labels;
  }

  /** Reads the text format; throws {@link IllegalArgumentException} on a line it cannot read. */
  public static Exposition parse(String text) {
    Map<String, Set<String>> labels = new LinkedHashMap<>();
    for (String line : text.lines().toList()) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int end = 0;
      while (end < line.length() && line.charAt(end) != '{' && line.charAt(end) != ' ') {
        end++;
      }
      Set<String> names = labels.computeIfAbsent(line.substring(0, end), k -> new HashSet<>());
      if (end < line.length() && line.charAt(end) == '{') {
        int i = end + 1;
        while (line.charAt(i) != '}') {
          int eq = line.indexOf("=\"", i);
          if (eq < 0) {
            throw new IllegalArgumentException("cannot read: " + line);
          }
          names.add(line.substring(i, eq));
          i = eq + 2;
          while (line.charAt(i) != '"') {
            i += line.charAt(i) == '\\' ? 2 : 1;
          }
          i++;
          if (line.charAt(i) == ',') {
            i++;
          }
        }
      }
    }
    return new Exposition(labels);
  }

  /** The sample names. */
  public Set<String> samples() {
    return labels.keySet();
  }

  /**
   * What an expression names that this scrape does not have: a metric no sample has (unless
   * Prometheus writes it itself), a label of a selector its metric's lines never carry, and a label
   * of {@code by}, {@code without}, {@code on}, ... or of {@code alsoLabels} (those a legend or an
   * alert's text uses) that none of the selected metrics carries. Target labels count as carried.
   */
  public List<String> missing(PromQl.Names names, Set<String> alsoLabels) {
    List<String> missing = new ArrayList<>();
    Set<String> carried = new HashSet<>(TARGET_LABELS);
    for (PromQl.Selector selector : names.selectors()) {
      String metric = selector.metric();
      Set<String> its = new HashSet<>(TARGET_LABELS);
      if (metric == null) {
        labels.values().forEach(its::addAll);
      } else if (!SYNTHETIC.contains(metric)) {
        if (!labels.containsKey(metric)) {
          missing.add("metric " + metric);
          continue;
        }
        its.addAll(labels.get(metric));
      }
      for (String label : selector.labels()) {
        if (!its.contains(label)) {
          missing.add("label " + label + " of " + (metric == null ? "any metric" : metric));
        }
      }
      carried.addAll(its);
    }
    Set<String> others = new LinkedHashSet<>(names.groupingLabels());
    others.addAll(alsoLabels);
    for (String label : others) {
      if (!carried.contains(label)) {
        missing.add("label " + label + " (on none of " + names.metrics() + ")");
      }
    }
    return missing;
  }
}
