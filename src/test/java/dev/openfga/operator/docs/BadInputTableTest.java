package dev.openfga.operator.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/bad-input.md: at least 40 rows, and every test a row names exists — the class under
 * src/test/java, a test method of that name in it, and for {@code method[case]} the case's text in
 * that class (a parameterized test's argument).
 */
class BadInputTableTest {
  private static final Pattern TEST =
      Pattern.compile("`(\\w+)#(\\w+)(?:\\[([^\\]]+)\\])?`\\s*\\|\\s*$");

  @Test
  void everyRowNamesATestThatExists() throws IOException {
    String doc = Files.readString(Path.of("docs", "bad-input.md"));
    String table =
        doc.substring(
            doc.indexOf("<!-- bad-input:start -->"), doc.indexOf("<!-- bad-input:end -->"));
    Map<String, Path> classes = testClasses();
    List<String> rows = new ArrayList<>();
    for (String line : table.split("\n")) {
      if (!line.startsWith("| ") || line.startsWith("| Where ")) {
        continue;
      }
      rows.add(line);
      Matcher m = TEST.matcher(line);
      assertThat(m.find()).as("a row ends with `Class#method`: %s", line).isTrue();
      Path file = classes.get(m.group(1));
      assertThat(file).as("test class %s of: %s", m.group(1), line).isNotNull();
      String source = Files.readString(file);
      assertThat(source)
          .as("%s has a test method %s", m.group(1), m.group(2))
          .containsPattern(
              "(?s)@(Test|ParameterizedTest)\\b((?!\\bvoid\\b).)*\\bvoid " + m.group(2) + "\\(");
      if (m.group(3) != null) {
        assertThat(source).as("%s has the case %s", m.group(1), m.group(3)).contains(m.group(3));
      }
    }
    assertThat(rows).hasSizeGreaterThanOrEqualTo(40);
  }

  private static Map<String, Path> testClasses() {
    try (Stream<Path> files = Files.walk(Path.of("src", "test", "java"))) {
      return files
          .filter(p -> p.toString().endsWith(".java"))
          .collect(
              Collectors.toMap(
                  p -> p.getFileName().toString().replace(".java", ""), p -> p, (a, b) -> a));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
