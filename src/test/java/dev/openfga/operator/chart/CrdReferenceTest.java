package dev.openfga.operator.chart;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import dev.openfga.operator.fga.FGAModel;
import dev.openfga.operator.fga.FGAStore;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The CRDs the chart installs, the Java classes the operator reads them into, and the field
 * reference in docs/crd-reference.md agree field by field: no field the API server accepts is
 * dropped by the operator, none the operator writes is refused, none is undocumented.
 */
class CrdReferenceTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\| `([^`]+)` \\|.*\\|$");

  private static CustomResourceDefinition crd(String name) {
    return chart()
        .values("storesAndModels: {enabled: true}\n")
        .render()
        .all(CustomResourceDefinition.class)
        .stream()
        .filter(c -> c.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  /** path → type of every field of the schema below spec and status. */
  private static Map<String, String> schemaFields(CustomResourceDefinition crd) {
    JSONSchemaProps root = crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema();
    Map<String, String> fields = new TreeMap<>();
    for (String top : new String[] {"spec", "status"}) {
      walk(top, root.getProperties().get(top), fields);
    }
    return fields;
  }

  private static void walk(String path, JSONSchemaProps schema, Map<String, String> out) {
    if ("array".equals(schema.getType())) {
      JSONSchemaProps items = schema.getItems().getSchema();
      out.put(path, "array");
      if (items.getProperties() != null && !items.getProperties().isEmpty()) {
        items.getProperties().forEach((k, v) -> walk(path + "[]." + k, v, out));
      }
      return;
    }
    out.put(path, schema.getType());
    if (schema.getProperties() != null) {
      schema.getProperties().forEach((k, v) -> walk(path + "." + k, v, out));
    }
  }

  /**
   * path → what the reference must say of the field's constraints: {@code required}, and its length
   * ({@code 1 to 253 characters}, {@code at most 2048 characters}).
   */
  private static Map<String, List<String>> constraints(CustomResourceDefinition crd) {
    JSONSchemaProps root = crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema();
    Map<String, List<String>> out = new TreeMap<>();
    for (String top : new String[] {"spec", "status"}) {
      constraints(top, root.getProperties().get(top), root.getRequired().contains(top), out);
    }
    return out;
  }

  private static void constraints(
      String path, JSONSchemaProps schema, boolean required, Map<String, List<String>> out) {
    List<String> said = new ArrayList<>();
    if (required) {
      said.add("required");
    }
    if (schema.getMaxLength() != null) {
      said.add(
          schema.getMinLength() != null
              ? schema.getMinLength() + " to " + schema.getMaxLength() + " characters"
              : "at most " + schema.getMaxLength() + " characters");
    }
    out.put(path, said);
    JSONSchemaProps holder = schema;
    String prefix = path;
    if ("array".equals(schema.getType())) {
      holder = schema.getItems().getSchema();
      prefix = path + "[]";
    }
    if (holder.getProperties() != null) {
      List<String> req = holder.getRequired() == null ? List.of() : holder.getRequired();
      String p = prefix;
      holder.getProperties().forEach((k, v) -> constraints(p + "." + k, v, req.contains(k), out));
    }
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
    return !t.isPrimitive() && !t.isEnumType() && !name.startsWith("java.") && !t.isMapLikeType();
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
  void bothCrdsAreKeptWhenTheChartIsUninstalled() {
    for (String name : new String[] {"fgastores.openfga.dev", "fgamodels.openfga.dev"}) {
      assertThat(crd(name).getMetadata().getAnnotations())
          .containsEntry("helm.sh/resource-policy", "keep");
    }
    assertThat(chart().render().all(CustomResourceDefinition.class)).as("off by default").isEmpty();
  }

  @Test
  void aSecondReleaseUsesTheCrdsTheFirstInstalled() {
    // Helm stamps a CRD as one release's: another release may not install it again
    var second = chart().values("storesAndModels: {enabled: true, installCRDs: false}\n").render();

    assertThat(second.all(CustomResourceDefinition.class)).isEmpty();
    assertThat(second.args()).contains("--stores-and-models=true");
  }

  @Test
  void theReferenceDocumentsEveryFieldWithItsType() throws IOException {
    String doc = Files.readString(Path.of("docs/crd-reference.md"));
    for (String kind : new String[] {"fgastores.openfga.dev", "fgamodels.openfga.dev"}) {
      String section =
          doc.substring(
              doc.indexOf("<!-- " + kind + ":start -->"), doc.indexOf("<!-- " + kind + ":end -->"));
      Map<String, String> documented = new TreeMap<>();
      Map<String, String> rows = new TreeMap<>();
      for (String line : section.lines().toList()) {
        Matcher row = ROW.matcher(line);
        if (row.matches()) {
          assertThat(documented.put(row.group(1), row.group(2)))
              .as("twice: " + row.group(1))
              .isNull();
          rows.put(row.group(1), line);
        }
      }
      assertThat(documented).as(kind).containsExactlyEntriesOf(schemaFields(crd(kind)));
      constraints(crd(kind))
          .forEach(
              (field, said) -> {
                for (String words : said) {
                  assertThat(rows.get(field)).as(kind + " " + field).contains(words);
                }
                if (!said.contains("required")) {
                  assertThat(rows.get(field)).as(kind + " " + field).doesNotContain("required");
                }
              });
    }
  }
}
