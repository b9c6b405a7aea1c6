package dev.openfga.operator.kube;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.stores.StoreReason;
import dev.openfga.operator.testing.MockCluster;
import dev.openfga.operator.testing.TestStores;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The status writes of the custom resources against the mock API server. */
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
    Conditions.set(
        s, Conditions.READY, true, StoreReason.StoreReady.name(), "ready", Instant.EPOCH);
    return s;
  }
}
