package dev.openfga.operator.models;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.models.ModelChoice.Choice;
import dev.openfga.operator.models.ModelChoice.Entry;
import dev.openfga.operator.models.ModelChoice.Known;
import dev.openfga.operator.openfga.Model;
import dev.openfga.operator.openfga.ModelJson;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Every rule of the model decision: no model is ever written twice. */
class ModelChoiceTest {
  private static final String V1 =
      "model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n";
  private static final String V2 = V1 + "    define editor: [user]\n";

  private static ModelJson.Normalised model(String dsl) throws Exception {
    return ModelJson.fromDsl(dsl);
  }

  private static Model inStore(String id, String dsl) throws Exception {
    return new Model(id, model(dsl).json());
  }

  @Test
  void anUnchangedModelIsNotWrittenAgain() throws Exception {
    var v1 = model(V1);
    Known known = new Known(Optional.of(new Entry(v1.hash(), "M1")), List.of());
    assertThat(ModelChoice.choose(v1, known, List.of(inStore("M1", V1))))
        .isEqualTo(new Choice.Use("M1", "unchanged", Optional.empty()));
  }

  @Test
  void aNewerModelWrittenOutOfBandIsReportedNotFought() throws Exception {
    var v1 = model(V1);
    Known known = new Known(Optional.of(new Entry(v1.hash(), "M1")), List.of());
    Choice plan = ModelChoice.choose(v1, known, List.of(inStore("M9", V2), inStore("M1", V1)));
    assertThat(plan).isEqualTo(new Choice.Use("M1", "unchanged", Optional.of("M9")));
  }

  @Test
  void aRevertReusesTheEarlierIdAndWritesNothing() throws Exception {
    var v1 = model(V1);
    var v2 = model(V2);
    Known known =
        new Known(Optional.of(new Entry(v2.hash(), "M2")), List.of(new Entry(v1.hash(), "M1")));
    Choice plan = ModelChoice.choose(v1, known, List.of(inStore("M2", V2), inStore("M1", V1)));
    assertThat(plan).isEqualTo(new Choice.Use("M1", "revert", Optional.empty()));
  }

  @Test
  void aModelAlreadyInTheStoreIsAdoptedWhenTheStatusIsLost() throws Exception {
    Known lost = new Known(Optional.empty(), List.of());
    Choice plan =
        ModelChoice.choose(model(V2), lost, List.of(inStore("M2", V2), inStore("M1", V1)));
    assertThat(plan).isEqualTo(new Choice.Use("M2", "adopted", Optional.empty()));
  }

  @Test
  void adoptingAnOlderModelStillReportsANewerForeignOne() throws Exception {
    Known lost = new Known(Optional.empty(), List.of());
    Choice plan =
        ModelChoice.choose(model(V1), lost, List.of(inStore("M2", V2), inStore("M1", V1)));
    assertThat(plan).isEqualTo(new Choice.Use("M1", "adopted", Optional.of("M2")));
  }

  @Test
  void aWhitespaceOnlyEditIsTheSameModel() throws Exception {
    var v1 = model(V1);
    Known known = new Known(Optional.of(new Entry(v1.hash(), "M1")), List.of());
    String reformatted = V1.replace("type doc", "\n\ntype doc   # documents");
    assertThat(ModelChoice.choose(model(reformatted), known, List.of(inStore("M1", V1))))
        .isEqualTo(new Choice.Use("M1", "unchanged", Optional.empty()));
  }

  @Test
  void aNewModelIsWritten() throws Exception {
    var v1 = model(V1);
    Known known = new Known(Optional.of(new Entry(v1.hash(), "M1")), List.of());
    assertThat(ModelChoice.choose(model(V2), known, List.of(inStore("M1", V1))))
        .isEqualTo(new Choice.Write());
    assertThat(ModelChoice.choose(model(V2), new Known(Optional.empty(), List.of()), List.of()))
        .isEqualTo(new Choice.Write());
  }

  @Test
  void theHistoryKeepsEachEntryOnceNewestFirstUpToTheLimit() {
    Entry a = new Entry("h1", "M1");
    Entry b = new Entry("h2", "M2");
    Entry c = new Entry("h3", "M3");
    Known known = new Known(Optional.of(c), List.of(b, a));
    assertThat(ModelChoice.history(known, new Entry("h4", "M4"), 10)).containsExactly(c, b, a);
    assertThat(ModelChoice.history(known, new Entry("h4", "M4"), 2)).containsExactly(c, b);
    // going back to a: it leaves the history, c goes in
    assertThat(ModelChoice.history(known, a, 10)).containsExactly(c, b);
    assertThat(ModelChoice.history(known, a, 0)).containsExactly(c);
  }
}
