package dev.openfga.operator.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.EventReason;
import dev.openfga.operator.models.ModelReason;
import dev.openfga.operator.stores.StoreReason;
import dev.openfga.operator.tuples.TuplesReason;
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
  void everyFgaStoreAndFgaModelReasonIsInTheReadme() throws IOException {
    String section = Files.readString(Path.of("docs", "stores-and-models.md"));
    List<String> reasons = new java.util.ArrayList<>();
    Arrays.stream(StoreReason.values()).map(Enum::name).forEach(reasons::add);
    Arrays.stream(ModelReason.values()).map(Enum::name).forEach(reasons::add);
    assertThat(reasons)
        .contains("StoreNotDeleted", "PublishFailed")
        .allSatisfy(r -> assertThat(section).as(r).contains("`" + r + "`"));
  }

  /**
   * The FGAStore table of docs/stores-and-models.md has a row for each reason of its condition
   * {@code Ready}, and says "Warning" in its Event column exactly for a reason that is one.
   */
  @Test
  void theFgaStoreTableSaysWhichReasonIsAWarning() throws IOException {
    String doc = Files.readString(Path.of("docs", "stores-and-models.md"));
    String table =
        doc.substring(
            doc.indexOf("The condition `Ready` and its reasons:"), doc.indexOf("## FGAModel"));
    Matcher m =
        Pattern.compile("(?m)^\\| `(\\w+)` \\| (True|False) \\| [^|]+ \\| ([^|]+) \\|$")
            .matcher(table);
    List<String> rows = new java.util.ArrayList<>();
    while (m.find()) {
      StoreReason reason = StoreReason.valueOf(m.group(1));
      assertThat(m.group(3).strip().equals("Warning"))
          .as(reason.name())
          .isEqualTo(reason.warning());
      assertThat(m.group(2))
          .as(reason.name())
          .isEqualTo(reason == StoreReason.StoreReady ? "True" : "False");
      rows.add(reason.name());
    }
    assertThat(rows)
        .containsExactlyInAnyOrderElementsOf(
            Arrays.stream(StoreReason.values())
                .filter(StoreReason::condition)
                .map(Enum::name)
                .toList());
  }

  /**
   * The FGATuples table of docs/stores-and-models.md has a row for every reason, with the condition
   * it is a reason of (or none: an Event only) and "Warning" exactly for a Warning.
   */
  @Test
  void theFgaTuplesTableSaysEveryReasonAndWhichIsAWarning() throws IOException {
    String doc = Files.readString(Path.of("docs", "stores-and-models.md"));
    String table = doc.substring(doc.indexOf("## FGATuples"), doc.indexOf("## Upgrading from"));
    Matcher m =
        Pattern.compile(
                "(?m)^\\| `(\\w+)` \\| (Ready|InSync|—) \\| (True|False|—) \\| ([^|]+) \\|$")
            .matcher(table);
    List<String> rows = new java.util.ArrayList<>();
    while (m.find()) {
      TuplesReason reason = TuplesReason.valueOf(m.group(1));
      assertThat(m.group(2).equals("—")).as(reason.name()).isEqualTo(!reason.condition());
      assertThat(m.group(4).strip().startsWith("Warning"))
          .as(reason.name())
          .isEqualTo(reason.warning());
      assertThat(m.group(3).equals("True"))
          .as(reason.name())
          .isEqualTo(reason == TuplesReason.TuplesReady || reason == TuplesReason.TuplesInSync);
      rows.add(reason.name());
    }
    assertThat(rows)
        .containsExactlyInAnyOrderElementsOf(
            Arrays.stream(TuplesReason.values()).map(Enum::name).toList());
  }
}
