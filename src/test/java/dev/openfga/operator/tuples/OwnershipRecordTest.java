package dev.openfga.operator.tuples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleCondition;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.tuples.TuplesObservation.Record;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.ByteArrayOutputStream;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/** The ownership record as a ConfigMap: read back as written, and what is not trusted. */
class OwnershipRecordTest {
  private static FGATuples tuples() {
    FGATuples t = new FGATuples();
    t.setMetadata(
        new ObjectMetaBuilder().withNamespace("team-a").withName("base").withUid("uid-1").build());
    return t;
  }

  private static ConfigMapBuilder record(Map<String, String> binary, String pendingSince) {
    ConfigMapBuilder cm =
        new ConfigMapBuilder()
            .withNewMetadata()
            .withNamespace("team-a")
            .withName("base-tuples-record")
            .withCreationTimestamp("2026-12-04T10:00:00Z")
            .withResourceVersion("7")
            .addToLabels(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR)
            .addToLabels(Keys.COMPONENT, OwnershipRecord.COMPONENT)
            .endMetadata()
            .addToData("format", "1")
            .addToData("fgatuples", "base")
            .addToData("uid", "uid-1")
            .addToData("storeId", "01STORE")
            .withBinaryData(binary);
    if (pendingSince != null) {
      cm.addToData("pendingSince", pendingSince);
    }
    return cm;
  }

  @Test
  void keysWithUsersetsAndAddressesReadBackAsWritten() {
    TreeSet<TupleKey> owned = new TreeSet<>();
    owned.add(new TupleKey("org:acme", "admin", "group:eng#member"));
    owned.add(new TupleKey("org:acme", "viewer", "user:anne@example.com"));
    owned.add(new TupleKey("doc:a@b", "viewer", "user:*"));
    ConfigMap cm =
        record(Map.of("owned.gz", OwnershipRecord.encode(owned), "pending.gz", ""), null).build();

    Record read = OwnershipRecord.decode(tuples(), cm);

    assertThat(read).isInstanceOf(Record.Own.class);
    assertThat(((Record.Own) read).owned()).containsExactlyElementsOf(owned);
    assertThat(((Record.Own) read).resourceVersion()).isEqualTo("7");
    // the same set always encodes to the same bytes (nothing written when nothing changed)
    assertThat(OwnershipRecord.encode(new TreeSet<>(owned)))
        .isEqualTo(OwnershipRecord.encode(owned));
  }

  @Test
  void aListThatUnpacksToMoreThanAnyRecordIsNotTrusted() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
      byte[] zeros = new byte[1 << 20];
      for (int i = 0; i <= OwnershipRecord.MAX_UNPACKED >> 20; i++) {
        gz.write(zeros);
      }
    }
    String bomb = Base64.getEncoder().encodeToString(bytes.toByteArray());

    assertThat(bomb.length()).isLessThan(OwnershipRecord.MAX_BYTES);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> OwnershipRecord.keys(bomb))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("unpacks to more than");
  }

  @Test
  void aPendingListOlderThanItsRecordIsNotTrusted() {
    TreeSet<TupleKey> pending = new TreeSet<>(List.of(new TupleKey("org:acme", "admin", "user:a")));
    ConfigMap forged =
        record(
                Map.of("owned.gz", "", "pending.gz", OwnershipRecord.encode(pending)),
                "1970-01-01T00:00:00Z")
            .build();
    ConfigMap fair =
        record(
                Map.of("owned.gz", "", "pending.gz", OwnershipRecord.encode(pending)),
                "2026-12-04T09:59:59Z")
            .build();

    assertThat(OwnershipRecord.decode(tuples(), forged)).isInstanceOf(Record.Foreign.class);
    assertThat(OwnershipRecord.decode(tuples(), fair)).isInstanceOf(Record.Own.class);
  }

  @Test
  void aRecordHandedToTheCollectorOrWithoutItsLabelsIsNotAdopted() {
    ConfigMap handedOver = record(Map.of(), null).build();
    handedOver
        .getMetadata()
        .setOwnerReferences(
            List.of(
                new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder()
                    .withUid("uid-0")
                    .withName("base")
                    .withKind("FGATuples")
                    .withApiVersion("openfga.dev/v1alpha1")
                    .build()));
    ConfigMap unlabelled = record(Map.of(), null).build();
    unlabelled.getMetadata().setLabels(Map.of());

    assertThat(OwnershipRecord.decode(tuples(), handedOver)).isInstanceOf(Record.Collecting.class);
    assertThat(OwnershipRecord.decode(tuples(), unlabelled)).isInstanceOf(Record.Foreign.class);
    assertThat(OwnershipRecord.decode(tuples(), null)).isInstanceOf(Record.Absent.class);
  }

  @Test
  void anInvalidBatchWithContextsNamesTheTupleButNotOpenFgasReason() throws Exception {
    String detail =
        "HTTP 400 validation_error: Invalid tuple 'org:acme#viewer@user:anne (condition in_hours)'."
            + " Reason: failed to convert context parameter 'hour': 's3cr3t'";
    Tuple withContext =
        Tuple.of(
            new TupleKey("org:acme", "viewer", "user:anne"),
            new TupleCondition(
                "in_hours",
                new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree("{\"hour\":\"s3cr3t\"}")));
    Tuple plain = Tuple.of(new TupleKey("org:acme", "viewer", "user:bob"), null);

    assertThat(TuplesCalls.refusal(List.of(withContext, plain), detail))
        .isEqualTo(
            "OpenFGA refused a batch of 2 tuples: Invalid tuple 'org:acme#viewer@user:anne"
                + " (condition in_hours)' (its reason is not shown: the batch carries condition"
                + " contexts)");
    assertThat(TuplesCalls.refusal(List.of(plain), detail)).endsWith(detail);
  }
}
