package dev.openfga.operator.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.model.EventReason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The README's table of Events lists exactly the reasons the code emits, with their types. */
class ReadmeEventsTest {
  private static final Pattern ROW = Pattern.compile("(?m)^\\| `(\\w+)` \\| (Normal|Warning) \\|");

  @Test
  void theEventsTableMatchesEventReason() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    String table =
        readme.substring(
            readme.indexOf("### Events on the Deployment"), readme.indexOf("### Flags"));
    Matcher m = ROW.matcher(table);
    List<String> rows = new java.util.ArrayList<>();
    while (m.find()) {
      rows.add(m.group(1) + " " + m.group(2));
    }
    assertThat(rows)
        .containsExactlyInAnyOrderElementsOf(
            Arrays.stream(EventReason.values()).map(r -> r.name() + " " + r.type()).toList());
  }
}
