package dev.openfga.operator.chart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The chart README's values table lists exactly the keys of values.yaml, with their defaults. */
class ChartReadmeTest {
  /** Kubernetes objects copied verbatim into the pod: documented as a whole. */
  private static final Set<String> WHOLE =
      Set.of("podSecurityContext", "securityContext", "resources");

  private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\| `(.*)` \\| (.+) \\|$");

  @Test
  void valuesTableListsEveryKeyOfValuesYamlWithItsDefault() throws IOException {
    Map<String, Object> values =
        OperatorChart.YAML.readValue(
            OperatorChart.DIR.resolve("values.yaml").toFile(), OperatorChart.MAP);
    Map<String, String> expected = new LinkedHashMap<>();
    flatten("", values, expected);

    Map<String, String> documented = new LinkedHashMap<>();
    String readme = Files.readString(OperatorChart.DIR.resolve("README.md"));
    String table =
        readme.substring(
            readme.indexOf("<!-- values:start -->"), readme.indexOf("<!-- values:end -->"));
    for (String line : table.lines().toList()) {
      Matcher row = ROW.matcher(line);
      if (row.matches()) {
        assertThat(documented.put(row.group(1), row.group(2)))
            .as("twice: " + row.group(1))
            .isNull();
      }
    }

    assertThat(documented.keySet()).containsExactlyElementsOf(expected.keySet());
    assertThat(documented).containsExactlyEntriesOf(expected);
  }

  @SuppressWarnings("unchecked")
  private static void flatten(String prefix, Map<String, Object> values, Map<String, String> out)
      throws IOException {
    for (var entry : values.entrySet()) {
      String key = prefix.isEmpty() ? entry.getKey() : prefix + "." + entry.getKey();
      if (entry.getValue() instanceof Map<?, ?> map && !map.isEmpty() && !WHOLE.contains(key)) {
        flatten(key, (Map<String, Object>) map, out);
      } else {
        out.put(
            key,
            new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(entry.getValue()));
      }
    }
  }
}
