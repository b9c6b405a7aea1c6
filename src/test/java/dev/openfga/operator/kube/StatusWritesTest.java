package dev.openfga.operator.kube;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.stores.StorePlanner;
import dev.openfga.operator.testing.MockCluster;
import dev.openfga.operator.testing.TestStores;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The status writes of the FGAStore and FGAModel controllers against the mock API server. */
class StatusWritesTest {
  private final MockCluster cluster = MockCluster.withoutControllers();

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void aStatusWrittenFromAnOlderCopyThanTheServersIsRefusedAndLookedAtAgain() {
    FGAStore stale = TestStores.create(cluster, "app", "app", null);

    // one reconcile created the store and wrote so
    FGAStore.Status created = status("01HVMMBCMGZNT3SED4Z17ECXCA", true);
    UpdateControl<FGAStore> first =
        StatusWrites.update(cluster.client(), stale, null, created, Duration.ofMinutes(5));
    assertThat(first.getScheduleDelay()).contains(Duration.ofMinutes(5).toMillis());

    // another ran on the copy from before that write: it would adopt the store instead
    FGAStore.Status adopted = status("01HVMMBCMGZNT3SED4Z17ECXCA", false);
    UpdateControl<FGAStore> second =
        StatusWrites.update(cluster.client(), stale, null, adopted, Duration.ofMinutes(5));

    assertThat(second.getScheduleDelay()).contains(StatusWrites.CONFLICT_AGAIN.toMillis());
    FGAStore now = TestStores.get(cluster, "app");
    assertThat(now.getStatus().getCreatedByOperator()).isTrue();
    assertThat(now.getStatus().getStoreId()).isEqualTo("01HVMMBCMGZNT3SED4Z17ECXCA");
  }

  @Test
  void theSameProblemComingBackAfterReadyIsAWarningEventAgain() {
    FGAStore store = TestStores.create(cluster, "app", "app", null);
    var events = new dev.openfga.operator.kube.EventRecorder(cluster.client(), "test");
    var log = org.slf4j.LoggerFactory.getLogger(StatusWritesTest.class);
    FGAStore.Status status = new FGAStore.Status();
    Instant t0 = Instant.parse("2026-12-03T10:00:00Z");
    String down = "GET http://openfga:8080/stores: connection refused";

    StatusWrites.block(events, log, store, status, "OpenFGARequestFailed", down, true, t0);
    // looked at again, still down: no news, no Event
    StatusWrites.block(
        events, log, store, status, "OpenFGARequestFailed", down, true, t0.plusSeconds(10));
    StatusWrites.set(status, "Ready", true, "StoreReady", "store s", t0.plusSeconds(60));
    // days later, the same failure
    StatusWrites.block(
        events, log, store, status, "OpenFGARequestFailed", down, true, t0.plusSeconds(86_400));

    assertThat(
            cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems().stream()
                .filter(e -> "OpenFGARequestFailed".equals(e.getReason())))
        .hasSize(2);

    // a reconcile whose status write was refused (409) looks again a second later from the same
    // ready copy: the same problem is not a new Warning
    FGAStore.Status ready = new FGAStore.Status();
    StatusWrites.set(ready, "Ready", true, "StoreReady", "store s", t0.plusSeconds(200_000));
    String refused = "GET http://openfga:8080/stores: HTTP 500";
    for (int look = 0; look < 2; look++) {
      StatusWrites.block(
          events,
          log,
          store,
          StatusWrites.copy(ready, FGAStore.Status::new),
          "OpenFGARequestFailed",
          refused,
          true,
          t0.plusSeconds(200_100 + look));
    }
    assertThat(
            cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems().stream()
                .filter(e -> e.getMessage().equals(refused)))
        .hasSize(1);

    // within one spell of not being ready, a problem that comes back after another is not news
    String other = "GET http://openfga:8080/stores: HTTP 503";
    Instant later = t0.plusSeconds(100_000);
    StatusWrites.block(events, log, store, status, "OpenFGARequestFailed", other, true, later);
    StatusWrites.block(
        events, log, store, status, "OpenFGARequestFailed", down, true, later.plusSeconds(10));
    StatusWrites.block(
        events, log, store, status, "OpenFGARequestFailed", other, true, later.plusSeconds(20));
    assertThat(
            cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems().stream()
                .filter(e -> e.getMessage().equals(down)))
        .as("one per spell of not being ready")
        .hasSize(2);
    assertThat(
            cluster.client().v1().events().inNamespace(MockCluster.NS).list().getItems().stream()
                .filter(e -> e.getMessage().equals(other)))
        .hasSize(1);
  }

  @Test
  void aStatusIsStillWrittenWhenOnlyALabelChangedSinceTheRead() {
    FGAStore read = TestStores.create(cluster, "app", "app", null);
    // while the reconcile created the store, a GitOps tool labelled the resource
    TestStores.edit(
        cluster, "app", s -> s.getMetadata().setLabels(java.util.Map.of("team", "payments")));

    UpdateControl<FGAStore> control =
        StatusWrites.update(
            cluster.client(),
            read,
            null,
            status("01HVMMBCMGZNT3SED4Z17ECXCA", true),
            Duration.ofMinutes(5));

    assertThat(control.getScheduleDelay()).contains(Duration.ofMinutes(5).toMillis());
    FGAStore now = TestStores.get(cluster, "app");
    assertThat(now.getStatus().getCreatedByOperator()).isTrue();
    assertThat(now.getMetadata().getLabels()).containsEntry("team", "payments");
  }

  private static FGAStore.Status status(String id, boolean created) {
    FGAStore.Status s = new FGAStore.Status();
    s.setStoreId(id);
    s.setCreatedByOperator(created);
    StatusWrites.set(s, "Ready", true, StorePlanner.READY, "ready", Instant.EPOCH);
    return s;
  }
}
