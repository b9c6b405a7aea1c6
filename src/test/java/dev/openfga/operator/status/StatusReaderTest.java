package dev.openfga.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.testing.MockCluster;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import org.junit.jupiter.api.Test;

/** What the status command reads of a namespace's Events. */
class StatusReaderTest {

  @Test
  void eventsAreReadInPagesAndOnlyThoseAboutDeploymentsAndJobsAreKept() {
    try (MockCluster cluster = MockCluster.withoutControllers()) {
      for (String kind : new String[] {"Deployment", "Job", "Pod", "ReplicaSet"}) {
        cluster
            .client()
            .v1()
            .events()
            .inNamespace(MockCluster.NS)
            .resource(
                new EventBuilder()
                    .withNewMetadata()
                    .withName("about-" + kind.toLowerCase())
                    .withNamespace(MockCluster.NS)
                    .endMetadata()
                    .withNewInvolvedObject()
                    .withKind(kind)
                    .withName("openfga")
                    .withNamespace(MockCluster.NS)
                    .endInvolvedObject()
                    .withReason("Something")
                    .build())
            .create();
      }

      assertThat(StatusReader.deploymentAndJobEvents(cluster.client(), MockCluster.NS))
          .extracting(Event::getInvolvedObject)
          .extracting(o -> o.getKind())
          .containsExactlyInAnyOrder("Deployment", "Job");
      assertThat(cluster.requests())
          .filteredOn(r -> r.method().equals("GET") && r.path().contains("/events"))
          .isNotEmpty()
          .allSatisfy(r -> assertThat(r.path()).contains("limit=500"));
    }
  }
}
