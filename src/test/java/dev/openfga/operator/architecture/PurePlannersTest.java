package dev.openfga.operator.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The FGAStore and FGAModel decisions are pure: their planners, rules and the values they pass
 * (observations, plans, steps, answers) import no Kubernetes client, no framework, no clock, no
 * logging, no I/O, and none of the classes of their rooms that make the calls.
 */
class PurePlannersTest {
  private static final Path MAIN = Path.of("src/main/java/dev/openfga/operator");

  private static final List<String> PURE =
      List.of(
          "stores/StorePlanner.java",
          "stores/ClaimRule.java",
          "stores/StoreDeletion.java",
          "stores/MigrationGate.java",
          "stores/StoreChoice.java",
          "stores/StoreObservation.java",
          "stores/StorePlan.java",
          "stores/StoreStep.java",
          "stores/StoreAnswer.java",
          "models/ModelPlanner.java",
          "models/ModelChoice.java",
          "models/TestsGate.java",
          "models/ModelPublication.java",
          "models/ModelDraft.java",
          "models/ModelObservation.java",
          "models/ModelPlan.java",
          "models/ModelStep.java",
          "models/ModelAnswer.java");

  /** Imports refused, as prefixes. */
  private static final List<String> REFUSED =
      List.of(
          "io.fabric8.kubernetes.client.",
          "io.javaoperatorsdk.",
          "org.slf4j.",
          "java.io.",
          "java.net.http.",
          "java.nio.file.",
          "java.time.Clock",
          "java.util.concurrent.",
          "dev.openfga.operator.openfga.FgaApi",
          "dev.openfga.operator.openfga.Connector",
          "dev.openfga.operator.openfga.Credentials",
          "dev.openfga.operator.kube.StatusWrites",
          "dev.openfga.operator.kube.EventRecorder",
          "dev.openfga.operator.kube.OperatorClient");

  /** The classes of the rooms that make the calls (the same package: no import to see). */
  private static final Pattern CALLERS =
      Pattern.compile(
          "\\b(StoreCalls|StoreReconciler|ModelCalls|ModelReconciler|Publication|AssertionRunner"
              + "|TestRuns)\\b");

  private static final Pattern IMPURE =
      Pattern.compile(
          "\\b(Instant\\.now|System\\.currentTimeMillis|System\\.nanoTime|System\\.getenv"
              + "|System\\.getProperty|Clock\\.|Thread\\.sleep|new Thread|Files\\.|new File)\\b");

  private static final Pattern IMPORT =
      Pattern.compile("(?m)^import (static )?([\\w.]+)(\\.\\*)?;");

  @Test
  void theDecisionsImportNoClientClockLoggingOrIo() throws IOException {
    List<String> violations = new ArrayList<>();
    for (String name : PURE) {
      String text = Files.readString(MAIN.resolve(name));
      Matcher m = IMPORT.matcher(text);
      while (m.find()) {
        String imported = m.group(2);
        if (REFUSED.stream().anyMatch(imported::startsWith)) {
          violations.add(name + " imports " + imported);
        }
      }
      String code = text.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\n]*", "");
      for (Pattern p : List.of(CALLERS, IMPURE)) {
        Matcher found = p.matcher(code);
        while (found.find()) {
          violations.add(name + " uses " + found.group(1));
        }
      }
    }
    assertThat(violations).as("impure code in a planner").isEmpty();
  }
}
