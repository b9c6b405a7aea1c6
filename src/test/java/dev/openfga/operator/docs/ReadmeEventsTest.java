package dev.openfga.operator.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.EventReason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The reference's table of Events (docs/reference.md) lists exactly the reasons the code emits,
 * with their types; docs/stores-and-models.md names every FGAStore and FGAModel reason.
 */
class ReadmeEventsTest {
  private static final Pattern ROW = Pattern.compile("(?m)^\\| `(\\w+)` \\| (Normal|Warning) \\|");

  @Test
  void theEventsTableMatchesEventReason() throws IOException {
    String reference = Files.readString(Path.of("docs", "reference.md"));
    String table =
        reference.substring(
            reference.indexOf("## Events on the Deployment"), reference.indexOf("## Flags"));
    Matcher m = ROW.matcher(table);
    List<String> rows = new java.util.ArrayList<>();
    while (m.find()) {
      rows.add(m.group(1) + " " + m.group(2));
    }
    assertThat(rows)
        .containsExactlyInAnyOrderElementsOf(
            Arrays.stream(EventReason.values()).map(r -> r.name() + " " + r.type()).toList());
  }

  @Test
  void everyFgaStoreAndFgaModelReasonIsInTheReadme() throws Exception {
    String section = Files.readString(Path.of("docs", "stores-and-models.md"));
    List<String> reasons = new java.util.ArrayList<>();
    for (Class<?> c :
        List.of(
            dev.openfga.operator.stores.StorePlanner.class,
            dev.openfga.operator.models.ModelPlanner.class,
            dev.openfga.operator.models.ModelReconciler.class)) {
      for (java.lang.reflect.Field f : c.getDeclaredFields()) {
        int mods = f.getModifiers();
        if (java.lang.reflect.Modifier.isStatic(mods)
            && java.lang.reflect.Modifier.isFinal(mods)
            && f.getType() == String.class) {
          f.setAccessible(true);
          String value = (String) f.get(null);
          if (value.matches("[A-Z][A-Za-z]+")) {
            reasons.add(value);
          }
        }
      }
    }
    assertThat(reasons)
        .contains("StoreNotDeleted", "PublishFailed")
        .allSatisfy(r -> assertThat(section).as(r).contains("`" + r + "`"));
  }
}
