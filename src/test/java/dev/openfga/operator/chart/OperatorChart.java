package dev.openfga.operator.chart;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.marcnuri.helm.DryRun;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The chart {@code charts/openfga-operator} under test, driven through helm-java (Helm 3 in the
 * JVM): {@code helm lint}, {@code helm template} and a client-only dry-run install (for NOTES).
 * Values come from files (test resources under {@code chart/}) and inline YAML, applied in order.
 */
public final class OperatorChart {
  static final Path DIR = Path.of("charts", "openfga-operator").toAbsolutePath();
  static final String RELEASE = "openfga-operator";
  static final String NAMESPACE = "openfga-system";

  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {};

  private final List<Path> valuesFiles = new ArrayList<>();
  private String namespace = NAMESPACE;
  private String release = RELEASE;
  private Path chart = DIR;

  private OperatorChart() {}

  /** The chart with its defaults, release {@code openfga-operator} in {@code openfga-system}. */
  public static OperatorChart chart() {
    return new OperatorChart();
  }

  /** Path of a values file in the test resources ({@code chart/<name>}). */
  static Path resource(String name) {
    return Path.of("src", "test", "resources", "chart", name).toAbsolutePath();
  }

  /** Adds the test resource {@code chart/<name>} as a values file. */
  OperatorChart valuesFile(String name) {
    return valuesFile(resource(name));
  }

  OperatorChart valuesFile(Path file) {
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("no values file " + file);
    }
    valuesFiles.add(file);
    return this;
  }

  /** Adds values written as YAML. */
  public OperatorChart values(String yaml) {
    try {
      Path file = Files.createTempFile("values-", ".yaml");
      file.toFile().deleteOnExit();
      Files.writeString(file, yaml);
      valuesFiles.add(file);
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public OperatorChart namespace(String value) {
    namespace = value;
    return this;
  }

  public OperatorChart release(String value) {
    release = value;
    return this;
  }

  /** Renders another chart directory (e.g. a parent chart that depends on this one). */
  OperatorChart at(Path chartDir) {
    chart = chartDir;
    return this;
  }

  /**
   * {@code helm lint --strict}. helm-java's lint takes no values files, so with values files the
   * lint runs on a copy of the chart whose values.yaml is the chart's merged with them.
   */
  LintResult lint() {
    if (valuesFiles.isEmpty()) {
      return new Helm(chart).lint().strict().call();
    }
    Path dir = null;
    try {
      dir = Files.createTempDirectory("chart-lint-");
      Path copy = dir.resolve(chart.getFileName());
      try (var files = Files.walk(chart)) {
        for (Path source : (Iterable<Path>) files::iterator) {
          Path target = copy.resolve(chart.relativize(source).toString());
          if (Files.isDirectory(source)) {
            Files.createDirectories(target);
          } else {
            Files.copy(source, target);
          }
        }
      }
      Map<String, Object> values = YAML.readValue(chart.resolve("values.yaml").toFile(), MAP);
      for (Path file : valuesFiles) {
        merge(values, YAML.readValue(file.toFile(), MAP));
      }
      YAML.writeValue(copy.resolve("values.yaml").toFile(), values);
      return new Helm(copy).lint().strict().call();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      deleteTree(dir);
    }
  }

  /** Removes a temporary directory and what it holds (nothing when {@code null}). */
  private static void deleteTree(Path dir) {
    if (dir == null) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) paths.sorted(java.util.Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Helm's merge of values: maps merge key by key, anything else replaces. */
  @SuppressWarnings("unchecked")
  static void merge(Map<String, Object> into, Map<String, Object> from) {
    from.forEach(
        (key, value) -> {
          if (value instanceof Map<?, ?> map && into.get(key) instanceof Map<?, ?> existing) {
            merge((Map<String, Object>) existing, (Map<String, Object>) map);
          } else {
            into.put(key, value);
          }
        });
  }

  /** {@code helm template}; throws {@link IllegalStateException} with Helm's message on failure. */
  public Manifests render() {
    TemplateCommand template =
        new Helm(chart).template().withName(release).withNamespace(namespace);
    for (Path file : valuesFiles) {
      template = template.withValuesFile(file);
    }
    String yaml;
    try {
      yaml = template.call();
    } catch (RuntimeException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
    return new Manifests(yaml, parse(yaml));
  }

  /** Helm's error for these values, or fails when they render. */
  String renderError() {
    try {
      render();
    } catch (IllegalStateException e) {
      return e.getMessage();
    }
    throw new AssertionError("the chart rendered, but an error was expected");
  }

  /** The rendered NOTES.txt (a client-only dry-run install prints them). */
  String notes() {
    InstallCommand install =
        new Helm(chart)
            .install()
            .withName(release)
            .withNamespace(namespace)
            .clientOnly()
            .withDryRunOption(DryRun.CLIENT);
    for (Path file : valuesFiles) {
      install = install.withValuesFile(file);
    }
    String output = install.call().getOutput();
    int notes = output.indexOf("NOTES:\n");
    if (notes < 0) {
      throw new AssertionError("no NOTES in:\n" + output);
    }
    return output.substring(notes + "NOTES:\n".length());
  }

  private static List<HasMetadata> parse(String yaml) {
    List<HasMetadata> objects = new ArrayList<>();
    for (String doc : yaml.split("(?m)^---\\s*$")) {
      if (doc.lines().allMatch(l -> l.isBlank() || l.startsWith("#"))) {
        continue;
      }
      Object parsed = new KubernetesSerialization().unmarshal(doc);
      if (!(parsed instanceof HasMetadata object)) {
        throw new AssertionError("not a Kubernetes object:\n" + doc);
      }
      objects.add(object);
    }
    return objects;
  }

  /** What {@code helm template} printed, and the same parsed into the Kubernetes model. */
  public record Manifests(String yaml, List<HasMetadata> objects) {

    public <T extends HasMetadata> List<T> all(Class<T> kind) {
      return objects.stream().filter(kind::isInstance).map(kind::cast).toList();
    }

    <T extends HasMetadata> List<T> all(Class<T> kind, Predicate<T> filter) {
      return all(kind).stream().filter(filter).toList();
    }

    /** The only object of the kind; fails when there are none or several. */
    public <T extends HasMetadata> T one(Class<T> kind) {
      return one(kind, o -> true);
    }

    /** The only object of the kind that passes the filter. */
    <T extends HasMetadata> T one(Class<T> kind, Predicate<T> filter) {
      List<T> found = all(kind, filter);
      if (found.size() != 1) {
        throw new AssertionError(
            "expected one " + kind.getSimpleName() + ", found " + found.size() + " in\n" + yaml);
      }
      return found.get(0);
    }

    public Deployment deployment() {
      return one(Deployment.class);
    }

    /** The operator container. */
    public Container operator() {
      return deployment().getSpec().getTemplate().getSpec().getContainers().stream()
          .filter(c -> "operator".equals(c.getName()))
          .findFirst()
          .orElseThrow(() -> new AssertionError("no container named operator"));
    }

    public List<String> args() {
      return operator().getArgs();
    }

    /** The environment of the operator container as a pod in {@code podNamespace} sees it. */
    public Map<String, String> env(String podNamespace, String podName) {
      Map<String, String> env = new java.util.LinkedHashMap<>();
      for (var variable : operator().getEnv()) {
        if (variable.getValue() != null) {
          env.put(variable.getName(), variable.getValue());
          continue;
        }
        var from = variable.getValueFrom();
        if (from == null || from.getFieldRef() == null) {
          throw new AssertionError("env " + variable.getName() + " comes from outside the pod");
        }
        String field = from.getFieldRef().getFieldPath();
        switch (field) {
          case "metadata.namespace" -> env.put(variable.getName(), podNamespace);
          case "metadata.name" -> env.put(variable.getName(), podName);
          default -> throw new AssertionError("unexpected downward API field " + field);
        }
      }
      return env;
    }
  }
}
