package dev.openfga.operator.tuples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.testing.MockCluster;
import dev.openfga.operator.tuples.TuplesObservation.Record;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An FGATuples deleted with {@code Delete} hands the tuples another one still declares to that
 * one's ownership record, against the mock API server: made when there is none, added to when there
 * is one (guarded like every record write), and refused when the ConfigMap is not a record.
 */
class OwnershipRecordHandOverTest {
  private static final String STORE = "01HVMMBCMGZNT3SED4Z17ECXCA";
  private static final TupleKey U1 = new TupleKey("org:acme", "admin", "user:u1");
  private static final TupleKey U2 = new TupleKey("org:acme", "admin", "user:u2");

  @RegisterExtension final MockCluster cluster = MockCluster.withoutControllers();

  private OwnershipRecord record() {
    return new OwnershipRecord(cluster.client());
  }

  private FGATuples holder() {
    FGATuples t = new FGATuples();
    t.setMetadata(new ObjectMetaBuilder().withName("b-team").withNamespace(MockCluster.NS).build());
    t.setSpec(new FGATuples.Spec());
    t.getSpec().setStoreRef(new FGAStore.NameRef("app"));
    return cluster.client().resources(FGATuples.class).resource(t).create();
  }

  private static SortedSet<TupleKey> keys(TupleKey... keys) {
    return new TreeSet<>(Set.of(keys));
  }

  private TuplesAnswer handOver(SortedSet<TupleKey> keys) {
    return record().handOver(MockCluster.NS, new TuplesStep.HandOver(STORE, "b-team", keys));
  }

  private ConfigMap read() {
    return cluster
        .client()
        .configMaps()
        .inNamespace(MockCluster.NS)
        .withName("b-team-tuples-record")
        .get();
  }

  @Test
  void aHolderWithoutARecordGetsOneListingThem() {
    FGATuples b = holder();

    TuplesAnswer answer = handOver(keys(U1, U2));

    assertThat(answer).isEqualTo(new TuplesAnswer.HandedOver("b-team", keys(U1, U2)));
    ConfigMap cm = read();
    assertThat(cm.getData())
        .containsEntry("fgatuples", "b-team")
        .containsEntry("uid", b.getMetadata().getUid())
        .containsEntry("storeId", STORE)
        .containsEntry("owned", "2");
    assertThat(cm.getMetadata().getOwnerReferences()).isEmpty();
    Record read = OwnershipRecord.decode(b, cm);
    assertThat(((Record.Own) read).owned()).containsExactly(U1, U2);
    assertThat(((Record.Own) read).pending()).isEmpty();
  }

  @Test
  void aHoldersRecordIsAddedToAndKeepsItsPendingTuplesAndItsWriter() {
    FGATuples b = holder();
    TupleKey pending = new TupleKey("org:acme", "admin", "user:p");
    // an intent is never older than its record
    Instant since = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    assertThat(
            record()
                .write(
                    withUid(b, "an-earlier-uid"),
                    new TuplesStep.WriteRecord(
                        STORE, keys(U1), keys(pending), Optional.of(since), Optional.empty())))
        .isInstanceOf(TuplesAnswer.RecordWritten.class);

    assertThat(handOver(keys(U2))).isEqualTo(new TuplesAnswer.HandedOver("b-team", keys(U2)));

    Record.Own own = (Record.Own) OwnershipRecord.decode(b, read());
    assertThat(own.owned()).containsExactly(U1, U2);
    assertThat(own.pending()).containsExactly(pending);
    assertThat(own.pendingSince()).contains(since);
    assertThat(own.uid()).isEqualTo("an-earlier-uid");

    // handed again (a deletion looked at twice): nothing written
    String version = read().getMetadata().getResourceVersion();
    assertThat(handOver(keys(U2))).isInstanceOf(TuplesAnswer.HandedOver.class);
    assertThat(read().getMetadata().getResourceVersion()).isEqualTo(version);
  }

  @Test
  void aConfigMapThatIsNoRecordOrARecordOfAnotherStoreIsNotWritten() {
    FGATuples b = holder();
    cluster
        .client()
        .configMaps()
        .inNamespace(MockCluster.NS)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("b-team-tuples-record")
                .endMetadata()
                .addToData("mine", "yes")
                .build())
        .create();

    TuplesAnswer foreign = handOver(keys(U1));

    assertThat(foreign).isInstanceOf(TuplesAnswer.HandOverRefused.class);
    assertThat(((TuplesAnswer.HandOverRefused) foreign).why())
        .contains("is not the ownership record of this FGATuples");
    assertThat(read().getData()).containsOnlyKeys("mine");

    cluster
        .client()
        .configMaps()
        .inNamespace(MockCluster.NS)
        .withName("b-team-tuples-record")
        .delete();
    record()
        .write(
            b,
            new TuplesStep.WriteRecord(
                "01OTHERSTORE", keys(U2), keys(), Optional.empty(), Optional.empty()));
    TuplesAnswer other = handOver(keys(U1));
    assertThat(((TuplesAnswer.HandOverRefused) other).why())
        .isEqualTo("its ownership record is for store 01OTHERSTORE");
    assertThat(((Record.Own) OwnershipRecord.decode(b, read())).owned()).containsExactly(U2);
  }

  @Test
  void aHolderThatIsGoneOrBeingDeletedIsNoHolder() {
    assertThat(handOver(keys(U1)))
        .isEqualTo(
            new TuplesAnswer.HandOverLater("b-team", keys(U1), "it is gone or being deleted"));
    assertThat(read()).isNull();

    FGATuples b = holder();
    b.getMetadata().setFinalizers(java.util.List.of("fgatuples.openfga.dev/finalizer"));
    cluster.client().resource(b).update();
    cluster.client().resource(b).delete();
    assertThat(
            cluster
                .client()
                .resources(FGATuples.class)
                .inNamespace(MockCluster.NS)
                .withName("b-team")
                .get()
                .getMetadata()
                .getDeletionTimestamp())
        .isNotNull();
    assertThat(handOver(keys(U1))).isInstanceOf(TuplesAnswer.HandOverLater.class);
    assertThat(read()).isNull();
  }

  @Test
  void aRecordHandedToTheCollectorIsNotWritten() {
    FGATuples b = holder();
    record()
        .write(
            b,
            new TuplesStep.WriteRecord(
                STORE, keys(U2), keys(), Optional.empty(), Optional.empty()));
    assertThat(record().giveAway(b)).isInstanceOf(TuplesAnswer.RecordGivenAway.class);
    String version = read().getMetadata().getResourceVersion();

    assertThat(handOver(keys(U1)))
        .isEqualTo(
            new TuplesAnswer.HandOverLater(
                "b-team", keys(U1), "its ownership record is handed to the garbage collector"));
    assertThat(read().getMetadata().getResourceVersion()).isEqualTo(version);
    assertThat(read().getMetadata().getOwnerReferences()).singleElement();
  }

  @Test
  void aHolderTooFullIsRefused() {
    FGATuples b = holder();
    SortedSet<TupleKey> full = new TreeSet<>();
    for (int i = 0; i < TuplesPlanner.MAX_TUPLES; i++) {
      full.add(new TupleKey("org:acme", "admin", "user:f" + i));
    }
    record()
        .write(
            b, new TuplesStep.WriteRecord(STORE, full, keys(), Optional.empty(), Optional.empty()));

    TuplesAnswer answer = handOver(keys(U1));

    assertThat(((TuplesAnswer.HandOverRefused) answer).why())
        .isEqualTo("its ownership record would list more than 20000 tuples");
  }

  private static FGATuples withUid(FGATuples t, String uid) {
    FGATuples copy = new FGATuples();
    copy.setMetadata(
        new ObjectMetaBuilder()
            .withName(t.getMetadata().getName())
            .withNamespace(t.getMetadata().getNamespace())
            .withUid(uid)
            .build());
    return copy;
  }
}
