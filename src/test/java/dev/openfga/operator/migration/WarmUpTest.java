package dev.openfga.operator.migration;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.openfga.operator.kube.OperatorClient;
import dev.openfga.operator.migration.rules.Planner;
import dev.openfga.operator.migration.rules.Policy;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The warm-up after start runs the create path's writing and reading without a request, and the
 * operator's serialization (lazy deserializers, Blackbird's generated accessors) writes and reads a
 * Job exactly as fabric8's own does.
 */
class WarmUpTest {
  private final Planner planner = new Planner(Policy.DEFAULTS);

  @Test
  void theSampleMakesAJobAndEveryPartRuns() {
    assertThat(WarmUp.run(planner, OperatorClient.serialization())).isTrue();
  }

  @Test
  void theOperatorsSerializationWritesAndReadsAJobAsFabric8sOwnDoes() throws Exception {
    Job job = WarmUp.sampleJob(planner, Instant.now());
    KubernetesSerialization ours = OperatorClient.serialization();
    KubernetesSerialization fabric8 = new KubernetesSerialization();
    ObjectMapper tree = new ObjectMapper();

    String written = ours.asJson(job);
    JsonNode expected = tree.readTree(fabric8.asJson(job));
    assertThat(tree.readTree(written)).isEqualTo(expected);
    assertThat(written).contains("\"secretKeyRef\"", "\"volumeMounts\"", "\"resources\"");
    // read back by ours, written by fabric8: the same Job again, without its pod template (the
    // operator never reads it back, OperatorClient)
    ((com.fasterxml.jackson.databind.node.ObjectNode) expected.get("spec")).remove("template");
    assertThat(tree.readTree(fabric8.asJson(ours.unmarshal(written, Job.class))))
        .isEqualTo(expected);
  }

  @Test
  void theFinishedJobsStatusIsReadAsFabric8sOwnReadsIt() {
    Instant now = Instant.parse("2026-12-02T12:00:00Z");
    Job finished = WarmUp.finished(WarmUp.sampleJob(planner, now), now);
    KubernetesSerialization ours = OperatorClient.serialization();
    KubernetesSerialization fabric8 = new KubernetesSerialization();

    Job read = ours.unmarshal(fabric8.asJson(finished), Job.class);

    assertThat(read.getStatus()).isEqualTo(finished.getStatus());
    assertThat(read.getStatus().getConditions())
        .extracting(c -> c.getType() + "=" + c.getStatus())
        .containsExactly("SuccessCriteriaMet=True", "Complete=True");
    assertThat(read.getStatus().getCompletionTime()).isEqualTo("2026-12-02T12:00:00Z");
  }

  @Test
  void theFinishedJobIsReadAsTheWatchEventThatCarriesIt() {
    Instant now = Instant.parse("2026-12-02T12:00:00Z");
    Job finished = WarmUp.finished(WarmUp.sampleJob(planner, now), now);
    KubernetesSerialization ours = OperatorClient.serialization();

    WatchEvent event = ours.unmarshal(WarmUp.event(ours, finished), WatchEvent.class);

    assertThat(event.getType()).isEqualTo("MODIFIED");
    assertThat(event.getObject()).isInstanceOf(Job.class);
    assertThat(((Job) event.getObject()).getStatus()).isEqualTo(finished.getStatus());
  }
}
