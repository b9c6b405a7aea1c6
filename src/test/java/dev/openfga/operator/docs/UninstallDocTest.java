package dev.openfga.operator.docs;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.models.ModelReconciler;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.stores.StoreReconciler;
import dev.openfga.operator.tuples.FGATuples;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.javaoperatorsdk.operator.ReconcilerUtils;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/uninstall.md and the chart README's "Uninstall" name the finalizer the operator puts on
 * FGAStores, and the annotations the chart's CRDs carry.
 */
class UninstallDocTest {
  private static final List<Path> DOCS =
      List.of(Path.of("docs/uninstall.md"), Path.of("charts/openfga-operator/README.md"));
  private static final Pattern FINALIZER = Pattern.compile("[a-z0-9.-]+/finalizer\\b");

  @Test
  void theDocsNameTheFinalizersOfTheFgaStoreAndFgaTuplesControllers() throws IOException {
    // the FGAStore controller is registered without a finalizer name of its own: java-operator-sdk
    // uses its default for the kind (StoreScenarioTest sees it on an FGAStore); so will the
    // FGATuples controller, whose deletionPolicy Delete needs a Cleaner
    String store = ReconcilerUtils.getDefaultFinalizerName(FGAStore.class);
    String tuples = ReconcilerUtils.getDefaultFinalizerName(FGATuples.class);
    for (Path doc : DOCS) {
      assertThat(FINALIZER.matcher(Files.readString(doc)).results().map(MatchResult::group))
          .as(doc.toString())
          .containsOnly(store, tuples)
          .contains(store, tuples);
    }
    // java-operator-sdk adds a finalizer for a Cleaner only: FGAModels carry none, as the doc says
    assertThat(Cleaner.class.isAssignableFrom(StoreReconciler.class)).isTrue();
    assertThat(Cleaner.class.isAssignableFrom(ModelReconciler.class)).isFalse();
  }

  @Test
  void theDocsNameEveryAnnotationOfTheCrds() throws IOException {
    List<CustomResourceDefinition> crds =
        chart()
            .values(
                "storesAndModels: {enabled: true, servers: [http://openfga.openfga.svc:8080]}\n")
            .render()
            .all(CustomResourceDefinition.class);
    assertThat(crds).hasSize(3);
    for (Path doc : DOCS) {
      String text = Files.readString(doc);
      for (CustomResourceDefinition crd : crds) {
        crd.getMetadata()
            .getAnnotations()
            .forEach(
                (key, value) ->
                    assertThat(text).as(doc.toString()).contains("`" + key + ": " + value + "`"));
      }
    }
  }
}
