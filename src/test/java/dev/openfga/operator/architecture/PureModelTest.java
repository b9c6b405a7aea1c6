package dev.openfga.operator.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The house rule, enforced: {@code migration/rules/} is the pure decision — no Kubernetes client,
 * no framework, no clock, no I/O, no logging. It may use the Kubernetes object model (plain data
 * classes), the JDK's collections, text and time values, and itself.
 */
class PureModelTest {
  private static final Path MODEL = Path.of("src/main/java/dev/openfga/operator/migration/rules");

  /** The only imports allowed, as prefixes. */
  private static final List<String> ALLOWED =
      List.of(
          "dev.openfga.operator.migration.rules.",
          "dev.openfga.operator.kube.Names",
          "dev.openfga.operator.kube.Timestamps",
          "io.fabric8.kubernetes.api.model.",
          "java.util.",
          "java.time.Duration",
          "java.time.Instant",
          "java.time.OffsetDateTime",
          "java.time.ZoneOffset",
          "java.time.format.",
          "java.time.temporal.",
          "java.nio.charset.",
          "java.security.MessageDigest",
          "java.security.NoSuchAlgorithmException");

  /** Calls that read a clock or reach outside the process, whatever the imports. */
  private static final Pattern IMPURE =
      Pattern.compile(
          "\\b(Instant\\.now|System\\.currentTimeMillis|System\\.nanoTime|System\\.getenv"
              + "|System\\.getProperty|Clock\\.|LocalDateTime\\.now|OffsetDateTime\\.now"
              + "|ZonedDateTime\\.now|Thread\\.sleep|new Thread|Files\\.|new File)\\b");

  private static final Pattern IMPORT =
      Pattern.compile("(?m)^import (static )?([\\w.]+)(\\.\\*)?;");

  @Test
  void theModelImportsNoClientFrameworkClockOrIo() throws IOException {
    List<String> violations = new ArrayList<>();
    for (Path file : sources()) {
      String text = Files.readString(file);
      Matcher m = IMPORT.matcher(text);
      while (m.find()) {
        String imported = m.group(2);
        if (ALLOWED.stream().noneMatch(imported::startsWith)) {
          violations.add(file.getFileName() + " imports " + imported);
        }
      }
      Matcher impure = IMPURE.matcher(text);
      while (impure.find()) {
        violations.add(file.getFileName() + " calls " + impure.group(1));
      }
    }
    assertThat(violations).as("impure code in model/").isEmpty();
  }

  @Test
  void theRuleSeesTheWholeModel() throws IOException {
    // a rule that finds no sources would pass forever
    assertThat(sources()).extracting(p -> p.getFileName().toString()).contains("Planner.java");
  }

  private static List<Path> sources() throws IOException {
    try (Stream<Path> files = Files.list(MODEL)) {
      return files.filter(p -> p.toString().endsWith(".java")).sorted().toList();
    }
  }
}
