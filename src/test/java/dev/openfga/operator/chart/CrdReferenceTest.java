package dev.openfga.operator.chart;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.models.ModelReason;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.stores.StoreReason;
import dev.openfga.operator.tuples.FGATuples;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The CRDs the chart installs, the Java classes the operator reads them into, and the field
 * reference in docs/crd-reference.md agree field by field: no field the API server accepts is
 * dropped by the operator, none the operator writes is refused, none is undocumented. The CRDs'
 * descriptions are the one source of the reference's tables ({@link #reference}), and every schema
 * node has one, for {@code kubectl explain}.
 */
class CrdReferenceTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path REFERENCE = Path.of("docs/crd-reference.md");
  private static final List<String> KINDS =
      List.of("fgastores.openfga.dev", "fgamodels.openfga.dev", "fgatuples.openfga.dev");

  private static CustomResourceDefinition crd(String name) {
    return chart()
        .values("storesAndModels: {enabled: true, servers: [http://openfga.openfga.svc:8080]}\n")
        .render()
        .all(CustomResourceDefinition.class)
        .stream()
        .filter(c -> c.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  /** A node of a schema: its path ({@code ""} the root, {@code []} an array's items). */
  private record Node(JSONSchemaProps schema, boolean required) {}

  /**
   * Every node of the CRD's schema by path, sorted: the root {@code ""}, then {@code spec}, {@code
   * status} and everything below them, an array's items as {@code path[]}.
   */
  private static Map<String, Node> nodes(CustomResourceDefinition crd) {
    Map<String, Node> out = new TreeMap<>();
    walk("", crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema(), false, out);
    return out;
  }

  private static void walk(
      String path, JSONSchemaProps schema, boolean required, Map<String, Node> out) {
    out.put(path, new Node(schema, required));
    if ("array".equals(schema.getType())) {
      walk(path + "[]", schema.getItems().getSchema(), false, out);
    }
    if (schema.getProperties() != null) {
      List<String> req = schema.getRequired() == null ? List.of() : schema.getRequired();
      String prefix = path.isEmpty() ? "" : path + ".";
      schema.getProperties().forEach((k, v) -> walk(prefix + k, v, req.contains(k), out));
    }
  }

  /** path → type of every field of the schema below spec and status (the root left out). */
  private static Map<String, String> schemaFields(CustomResourceDefinition crd) {
    Map<String, String> fields = new TreeMap<>();
    nodes(crd)
        .forEach(
            (path, node) -> {
              if (!path.isEmpty()) {
                fields.put(path, node.schema().getType());
              }
            });
    return fields;
  }

  /**
   * What the reference says of a field's constraints, from the schema: required, allowed values,
   * default, length, range, pattern, number of items, the keys of a map list.
   */
  private static List<String> constraints(Node node) {
    JSONSchemaProps s = node.schema();
    List<String> said = new ArrayList<>();
    if (node.required()) {
      said.add("required");
    }
    if (s.getEnum() != null && !s.getEnum().isEmpty()) {
      said.add(
          "one of "
              + s.getEnum().stream()
                  .map(v -> "`" + v.asText() + "`")
                  .collect(Collectors.joining(", ")));
    }
    if (s.getDefault() != null) {
      said.add("default `" + s.getDefault().asText() + "`");
    }
    if (s.getMaxLength() != null) {
      said.add(
          s.getMinLength() != null
              ? s.getMinLength() + " to " + s.getMaxLength() + " characters"
              : "at most " + s.getMaxLength() + " characters");
    } else if (s.getMinLength() != null) {
      said.add("at least " + s.getMinLength() + " characters");
    }
    if (s.getMinimum() != null && s.getMaximum() != null) {
      said.add(s.getMinimum().longValue() + " to " + s.getMaximum().longValue());
    } else if (s.getMinimum() != null) {
      said.add("at least " + s.getMinimum().longValue());
    } else if (s.getMaximum() != null) {
      said.add("at most " + s.getMaximum().longValue());
    }
    if (s.getPattern() != null) {
      said.add("pattern `" + s.getPattern() + "`");
    }
    if (s.getMaxItems() != null) {
      said.add("at most " + s.getMaxItems() + " items");
    }
    if ("map".equals(s.getXKubernetesListType())) {
      said.add(
          "no two items with the same "
              + String.join(
                  ", ", s.getXKubernetesListMapKeys().stream().map(k -> "`" + k + "`").toList()));
    }
    return said;
  }

  /**
   * The part of docs/crd-reference.md generated from a CRD: its description, printer columns and
   * validation rules, and a table of its fields with their types, descriptions and constraints.
   */
  private static String reference(CustomResourceDefinition crd) {
    var version = crd.getSpec().getVersions().get(0);
    Map<String, Node> nodes = nodes(crd);
    StringBuilder out = new StringBuilder();
    out.append(nodes.get("").schema().getDescription()).append("\n\n");
    out.append("Printer columns: ")
        .append(
            version.getAdditionalPrinterColumns().stream()
                .map(CustomResourceColumnDefinition::getName)
                .collect(Collectors.joining(", ")))
        .append(".");
    List<String> rules = new ArrayList<>();
    nodes.forEach(
        (path, node) -> {
          var validations = node.schema().getXKubernetesValidations();
          if (validations != null && !validations.isEmpty()) {
            rules.add(
                (path.isEmpty() ? "on the object" : "on `" + path + "`")
                    + ": "
                    + validations.stream()
                        .map(v -> "\"" + v.getMessage() + "\"")
                        .collect(Collectors.joining("; ")));
          }
        });
    if (!rules.isEmpty()) {
      out.append(" Validation rules (CEL) ").append(String.join("; ", rules)).append(".");
    }
    out.append("\n\n");
    out.append("| Field | Type | Meaning |\n|---|---|---|\n");
    nodes.forEach(
        (path, node) -> {
          if (path.isEmpty()) {
            return;
          }
          List<String> said = constraints(node);
          String meaning =
              Objects.toString(node.schema().getDescription(), "").replace('\n', ' ')
                  + (said.isEmpty() ? "" : " (" + String.join("; ", said) + ")");
          out.append("| `")
              .append(path)
              .append("` | `")
              .append(node.schema().getType())
              .append("` | ")
              .append(meaning.replace("|", "\\|"))
              .append(" |\n");
        });
    return out.toString();
  }

  /** path of every property the Java class reads and writes (Jackson's view of it). */
  private static TreeSet<String> javaFields(String path, JavaType type, TreeSet<String> out) {
    for (BeanPropertyDefinition p :
        JSON.getSerializationConfig().introspect(type).findProperties()) {
      if (p.getName().equals("additionalProperties")) {
        continue;
      }
      String child = path + "." + p.getName();
      out.add(child);
      JavaType t = p.getPrimaryType();
      if (t.isCollectionLikeType()) {
        JavaType element = t.getContentType();
        out.add(child + "[]");
        if (isBean(element)) {
          javaFields(child + "[]", element, out);
        }
      } else if (isBean(t)) {
        javaFields(child, t, out);
      }
    }
    return out;
  }

  private static boolean isBean(JavaType t) {
    String name = t.getRawClass().getName();
    // a JsonNode (a condition's context) is free JSON: a leaf of the schema, not a bean
    return !t.isPrimitive()
        && !t.isEnumType()
        && !name.startsWith("java.")
        && !t.isMapLikeType()
        && !JsonNode.class.isAssignableFrom(t.getRawClass());
  }

  private static TreeSet<String> javaFields(Class<?> spec, Class<?> status) {
    TreeSet<String> out = new TreeSet<>();
    javaFields("spec", JSON.constructType(spec), out);
    javaFields("status", JSON.constructType(status), out);
    out.add("spec");
    out.add("status");
    return out;
  }

  @Test
  void theFgaStoreSchemaAndItsJavaClassesHaveTheSameFields() {
    assertThat(schemaFields(crd("fgastores.openfga.dev")).keySet())
        .containsExactlyElementsOf(javaFields(FGAStore.Spec.class, FGAStore.Status.class));
  }

  @Test
  void theFgaModelSchemaAndItsJavaClassesHaveTheSameFields() {
    assertThat(schemaFields(crd("fgamodels.openfga.dev")).keySet())
        .containsExactlyElementsOf(javaFields(FGAModel.Spec.class, FGAModel.Status.class));
  }

  @Test
  void theFgaTuplesSchemaAndItsJavaClassesHaveTheSameFields() {
    assertThat(schemaFields(crd("fgatuples.openfga.dev")).keySet())
        .containsExactlyElementsOf(javaFields(FGATuples.Spec.class, FGATuples.Status.class));
  }

  /**
   * A condition's context is free JSON the operator passes on to OpenFGA: the API server keeps
   * every field of it instead of pruning them as unknown.
   */
  @Test
  void aTuplesConditionContextKeepsEveryField() {
    JSONSchemaProps context =
        nodes(crd("fgatuples.openfga.dev")).get("spec.tuples[].condition.context").schema();

    assertThat(context.getType()).isEqualTo("object");
    assertThat(context.getXKubernetesPreserveUnknownFields()).isTrue();
  }

  @Test
  void everyCrdIsKeptWhenTheChartIsUninstalledAndNeverPruned() {
    for (String name : KINDS) {
      assertThat(crd(name).getMetadata().getAnnotations())
          .as(name)
          // helm uninstall, and Argo CD at an Application's deletion
          .containsEntry("helm.sh/resource-policy", "keep")
          // no longer rendered (storesAndModels.enabled false): not pruned by a sync
          .containsEntry("argocd.argoproj.io/sync-options", "Prune=false")
          .containsEntry("kustomize.toolkit.fluxcd.io/prune", "disabled");
    }
    assertThat(chart().render().all(CustomResourceDefinition.class)).as("off by default").isEmpty();
  }

  @Test
  void aSecondReleaseUsesTheCrdsTheFirstInstalled() {
    // Helm stamps a CRD as one release's: another release may not install it again
    var second =
        chart()
            .values(
                "storesAndModels: {enabled: true, installCRDs: false, servers: [http://openfga.openfga.svc:8080]}\n")
            .render();

    assertThat(second.all(CustomResourceDefinition.class)).isEmpty();
    assertThat(second.args()).contains("--stores-and-models=true");
  }

  @Test
  void everySchemaNodeHasADescription() {
    for (String kind : KINDS) {
      assertThat(
              nodes(crd(kind)).entrySet().stream()
                  .filter(
                      e -> Objects.toString(e.getValue().schema().getDescription(), "").isBlank())
                  .map(e -> e.getKey().isEmpty() ? "(the root)" : e.getKey()))
          .as(kind + ": nodes without a description (kubectl explain shows it)")
          .isEmpty();
    }
  }

  /**
   * docs/crd-reference.md carries, between its markers, exactly what {@link #reference} generates
   * from the CRDs: their descriptions are the one source. {@code -Dcrd.reference.update=true}
   * writes it.
   */
  @Test
  void theReferenceIsGeneratedFromTheCrds() throws IOException {
    String doc = Files.readString(REFERENCE);
    String generated = doc;
    for (String kind : KINDS) {
      String start = "<!-- " + kind + ":start -->\n";
      String end = "<!-- " + kind + ":end -->";
      int from = generated.indexOf(start);
      int to = generated.indexOf(end);
      assertThat(from).as(start).isNotNegative();
      assertThat(to).as(end).isGreaterThan(from);
      generated =
          generated.substring(0, from + start.length())
              + reference(crd(kind))
              + generated.substring(to);
    }
    if (Boolean.getBoolean("crd.reference.update")) {
      Files.writeString(REFERENCE, generated);
    }
    // line by line: a failure names the lines that differ
    assertThat(Files.readString(REFERENCE).lines())
        .as(
            "docs/crd-reference.md differs from the CRDs; regenerate it:"
                + " ./mvnw test -Dtest=CrdReferenceTest -Dcrd.reference.update=true")
        .containsExactlyElementsOf(generated.lines().toList());
  }

  /**
   * The reasons a condition's {@code reason} description lists are the code's: every one of them is
   * a reason constant, and no reason of the kind's conditions is left out.
   */
  @Test
  void theReasonsTheCrdsListAreTheCodes() throws IllegalAccessException {
    List<String> store =
        Arrays.stream(StoreReason.values()).filter(StoreReason::condition).map(Enum::name).toList();
    List<String> model =
        Arrays.stream(ModelReason.values()).filter(ModelReason::condition).map(Enum::name).toList();

    assertThat(listedReasons("fgastores.openfga.dev")).containsExactlyInAnyOrderElementsOf(store);
    assertThat(listedReasons("fgamodels.openfga.dev")).containsExactlyInAnyOrderElementsOf(model);
  }

  /** The CamelCase words of {@code status.conditions[].reason}'s description, but the types. */
  private static List<String> listedReasons(String kind) {
    String description =
        nodes(crd(kind)).get("status.conditions[].reason").schema().getDescription();
    Matcher word = Pattern.compile("\\b[A-Z][a-z]+[A-Z][A-Za-z]*\\b").matcher(description);
    List<String> listed = new ArrayList<>();
    while (word.find()) {
      if (!word.group().equals("InSync")) {
        listed.add(word.group());
      }
    }
    return listed;
  }
}
