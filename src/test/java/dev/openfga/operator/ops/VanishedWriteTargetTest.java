package dev.openfga.operator.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.config.LoggingConfig;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.testing.FakeJobController.Script;
import dev.openfga.operator.testing.Fixtures;
import dev.openfga.operator.testing.MockCluster;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A write whose target is gone (404: the failed Job deleted by a person to retry at once, as the
 * README says) is looked at again, quietly: no WARN with a stack trace in the operator's log.
 */
class VanishedWriteTargetTest {

  @Test
  void aJobDeletedBeforeItsPatchIsLookedAtAgainWithoutAWarning() {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    Logging.configure(LoggingConfig.DEFAULT, new PrintStream(log, true, StandardCharsets.UTF_8));
    try (MockCluster cluster = new MockCluster()) {
      cluster.jobs().script(j -> Script.FAIL);
      // the failure's Job patch finds the Job gone, once
      cluster.failNextAt("PATCH", "/jobs/openfga-migrate", 404, 1);
      cluster.create(Fixtures.openfga().version("v1.9.0").build());
      cluster.startOperator(MockCluster.config(Duration.ofSeconds(60), 300), "operator-a");

      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> cluster.job("openfga-migrate"),
              j ->
                  j != null
                      && j.getMetadata().getAnnotations() != null
                      && j.getMetadata().getAnnotations().containsKey(Keys.RETAIN_UNTIL));
      assertThat(
              cluster.requests().stream()
                  .filter(
                      r -> r.method().equals("PATCH") && r.path().contains("/jobs/openfga-migrate"))
                  .count())
          .as("the patch that found nothing, then the one that worked")
          .isGreaterThanOrEqualTo(2);
      String text = log.toString(StandardCharsets.UTF_8);
      assertThat(text).contains("migration to v1.9.0 failed");
      assertThat(text).doesNotContain("Uncaught error", "KubernetesClientException");
    } finally {
      Logging.configure(LoggingConfig.DEFAULT, null);
    }
  }
}
