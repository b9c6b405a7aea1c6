package dev.openfga.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.EventListBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the status command reads of a namespace's Events. */
class StatusReaderTest {
  private static final String EVENTS = "/api/v1/namespaces/openfga/events?limit=500";

  @Test
  void eventsAreReadPageByPageAndOnlyThoseAboutDeploymentsAndJobsAreKept() throws Exception {
    KubernetesMockServer server = new KubernetesMockServer(false);
    server.init();
    try (KubernetesClient client = server.createClient()) {
      server
          .expect()
          .get()
          .withPath(EVENTS)
          .andReturn(
              200,
              new EventListBuilder()
                  .withNewMetadata()
                  .withContinue("page-2")
                  .endMetadata()
                  .withItems(about("Deployment", "a"), about("Pod", "b"))
                  .build())
          .once();
      server
          .expect()
          .get()
          .withPath("/api/v1/namespaces/openfga/events?continue=page-2&limit=500")
          .andReturn(
              200,
              new EventListBuilder()
                  .withNewMetadata()
                  .endMetadata()
                  .withItems(about("ReplicaSet", "c"), about("Job", "d"))
                  .build())
          .once();

      List<Event> kept = StatusReader.deploymentAndJobEvents(client, "openfga");

      assertThat(kept).extracting(e -> e.getMetadata().getName()).containsExactly("a", "d");
      assertThat(server.getRequestCount()).isEqualTo(2);
    } finally {
      server.destroy();
    }
  }

  private static Event about(String kind, String name) {
    return new EventBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("openfga")
        .endMetadata()
        .withNewInvolvedObject()
        .withKind(kind)
        .withName("openfga")
        .withNamespace("openfga")
        .endInvolvedObject()
        .withReason("Something")
        .build();
  }
}
