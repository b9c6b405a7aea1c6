package dev.openfga.operator.tuples;

import dev.openfga.operator.kube.JsonPatch;
import dev.openfga.operator.kube.Names;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.tuples.TuplesObservation.Record;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * The ownership record of an FGATuples: the ConfigMap {@code <name>-tuples-record} in its namespace
 * that lists the tuples it created in its store (gzip'd, sorted, one key a line) and the ones it is
 * about to create. It has no owner reference while the FGATuples lives: a restore from a backup or
 * a re-created FGATuples (a new uid) adopts it instead of the garbage collector taking it (ADR
 * 0020). It is read with a GET when looked at, never cached.
 */
final class OwnershipRecord {
  /** The most bytes a record's data may take (a ConfigMap holds 1 MiB, with its metadata). */
  static final int MAX_BYTES = 900_000;

  static final String COMPONENT = "fgatuples-record";
  static final String FORMAT = "1";
  private static final PatchContext JSON_PATCH = PatchContext.of(PatchType.JSON);

  private static final com.fasterxml.jackson.databind.ObjectMapper SERIALIZER =
      new com.fasterxml.jackson.databind.ObjectMapper();

  private final KubernetesClient client;

  OwnershipRecord(KubernetesClient client) {
    this.client = client;
  }

  /** The record of {@code t}, as read now. */
  Record read(FGATuples t) {
    return readable(t, configMap(t));
  }

  private ConfigMap configMap(FGATuples t) {
    return client
        .configMaps()
        .inNamespace(t.getMetadata().getNamespace())
        .withName(Names.tuplesRecord(t.getMetadata().getName()))
        .get();
  }

  /** {@link #decode}, a record that does not read being {@link Record.Foreign}. */
  private static Record readable(FGATuples t, ConfigMap cm) {
    try {
      return decode(t, cm);
    } catch (IllegalStateException e) {
      return new Record.Foreign(
          "ConfigMap "
              + t.getMetadata().getNamespace()
              + "/"
              + Names.tuplesRecord(t.getMetadata().getName())
              + ": "
              + e.getMessage());
    }
  }

  /** The record a ConfigMap holds for {@code t} (null: none). */
  static Record decode(FGATuples t, ConfigMap cm) {
    if (cm == null) {
      return new Record.Absent();
    }
    String where =
        "ConfigMap " + cm.getMetadata().getNamespace() + "/" + cm.getMetadata().getName();
    Map<String, String> labels =
        cm.getMetadata().getLabels() == null ? Map.of() : cm.getMetadata().getLabels();
    Map<String, String> data = cm.getData() == null ? Map.of() : cm.getData();
    if (!Keys.MANAGED_BY_OPERATOR.equals(labels.get(Keys.MANAGED_BY))
        || !COMPONENT.equals(labels.get(Keys.COMPONENT))
        || !t.getMetadata().getName().equals(data.get("fgatuples"))) {
      return new Record.Foreign(
          where + " exists and is not the ownership record of this FGATuples: rename or delete it");
    }
    boolean handedOver =
        cm.getMetadata().getOwnerReferences() != null
            && cm.getMetadata().getOwnerReferences().stream()
                .anyMatch(r -> !r.getUid().equals(t.getMetadata().getUid()));
    if (cm.getMetadata().getDeletionTimestamp() != null || handedOver) {
      return new Record.Collecting();
    }
    if (!FORMAT.equals(data.get("format")) || data.get("storeId") == null) {
      return new Record.Foreign(where + " is a record of a format this operator does not read");
    }
    Map<String, String> binary = cm.getBinaryData() == null ? Map.of() : cm.getBinaryData();
    Optional<java.time.Instant> since =
        Optional.ofNullable(data.get("pendingSince")).flatMap(Timestamps::parse);
    Optional<java.time.Instant> created = Timestamps.parse(cm.getMetadata().getCreationTimestamp());
    if (since.isPresent()
        && created.isPresent()
        && since.get().isBefore(created.get().minus(Ledger.CLOCK_SKEW))) {
      // no intent is older than its record (give or take the clocks): a forged one would claim
      // every tuple written since
      return new Record.Foreign(where + " says tuples were pending before it was created");
    }
    return new Record.Own(
        data.get("storeId"),
        keys(binary.get("owned.gz")),
        keys(binary.get("pending.gz")),
        since,
        data.getOrDefault("uid", ""),
        cm.getMetadata().getResourceVersion());
  }

  /** Writes the record of a {@link TuplesStep.WriteRecord}; the answer. */
  TuplesAnswer write(FGATuples t, TuplesStep.WriteRecord step) {
    String ns = t.getMetadata().getNamespace();
    String name = Names.tuplesRecord(t.getMetadata().getName());
    Map<String, String> data = new LinkedHashMap<>();
    data.put("format", FORMAT);
    data.put("fgatuples", t.getMetadata().getName());
    data.put("uid", t.getMetadata().getUid());
    data.put("storeId", step.storeId());
    data.put("owned", Integer.toString(step.owned().size()));
    step.pendingSince().ifPresent(s -> data.put("pendingSince", Timestamps.format(s)));
    Map<String, String> binary = new LinkedHashMap<>();
    binary.put("owned.gz", encode(step.owned()));
    binary.put("pending.gz", encode(step.pending()));
    int bytes = binary.values().stream().mapToInt(v -> v.length() * 3 / 4).sum();
    if (bytes > MAX_BYTES) {
      return new TuplesAnswer.RecordRefused(
          TuplesReason.TooManyTuples,
          "the ownership record "
              + name
              + " would take "
              + bytes
              + " bytes, over "
              + MAX_BYTES
              + ": declare fewer (or shorter) tuples per FGATuples");
    }
    try {
      ConfigMap written;
      if (step.resourceVersion().isEmpty()) {
        written =
            client
                .configMaps()
                .inNamespace(ns)
                .resource(
                    new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withNamespace(ns)
                        .addToLabels(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR)
                        .addToLabels(Keys.COMPONENT, COMPONENT)
                        .endMetadata()
                        .withData(data)
                        .withBinaryData(binary)
                        .build())
                .create();
      } else {
        ConfigMap observed =
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(ns)
                .withResourceVersion(step.resourceVersion().get())
                .endMetadata()
                .build();
        written =
            client
                .configMaps()
                .inNamespace(ns)
                .withName(name)
                .patch(
                    JSON_PATCH,
                    JsonPatch.guardedBy(observed)
                        .add("/data", data)
                        .add("/binaryData", binary)
                        // an earlier FGATuples of the name handed it to the collector: no more
                        .add("/metadata/ownerReferences", List.of())
                        .json());
      }
      return new TuplesAnswer.RecordWritten(step, written.getMetadata().getResourceVersion());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 || e.getCode() == 404) {
        // created, changed or deleted by someone since it was read (the patch names the
        // resourceVersion read: a newer one is a conflict)
        return new TuplesAnswer.RecordChanged();
      }
      return new TuplesAnswer.RecordRefused(
          TuplesReason.OpenFGARequestFailed,
          "the API server refused the ownership record "
              + name
              + ": HTTP "
              + e.getCode()
              + " "
              + Optional.ofNullable(e.getStatus()).map(s -> s.getMessage()).orElse(""));
    }
  }

  /**
   * Adds the tuples of {@code step} to the record of the FGATuples {@code step.holder()} in {@code
   * ns}, which still declares them; the record is made when the holder has none. Guarded by the
   * resourceVersion read, as the holder's own writes: whichever writes second reads again. A holder
   * that is gone or being deleted, before or after the write, or a record with an owner reference
   * (handed to the garbage collector) is no holder now ({@link TuplesAnswer.HandOverLater}): the
   * next look, without it among the declarers, deletes the tuples instead.
   */
  TuplesAnswer handOver(String ns, TuplesStep.HandOver step) {
    FGATuples holder =
        client.resources(FGATuples.class).inNamespace(ns).withName(step.holder()).get();
    if (holder == null || holder.getMetadata().getDeletionTimestamp() != null) {
      return later(step, "it is gone or being deleted");
    }
    ConfigMap cm = configMap(holder);
    if (cm != null
        && cm.getMetadata().getOwnerReferences() != null
        && !cm.getMetadata().getOwnerReferences().isEmpty()) {
      return later(step, "its ownership record is handed to the garbage collector");
    }
    Record r = readable(holder, cm);
    TuplesStep.WriteRecord write;
    if (r instanceof Record.Absent) {
      write =
          new TuplesStep.WriteRecord(
              step.storeId(), step.keys(), new TreeSet<>(), Optional.empty(), Optional.empty());
    } else if (r instanceof Record.Own own && own.storeId().equals(step.storeId())) {
      if (own.owned().containsAll(step.keys())) {
        return new TuplesAnswer.HandedOver(step.holder(), step.keys());
      }
      SortedSet<TupleKey> owned = new TreeSet<>(own.owned());
      owned.addAll(step.keys());
      if (owned.size() > TuplesPlanner.MAX_TUPLES) {
        return new TuplesAnswer.HandOverRefused(
            step.holder(),
            step.keys(),
            "its ownership record would list more than " + TuplesPlanner.MAX_TUPLES + " tuples");
      }
      write =
          new TuplesStep.WriteRecord(
              step.storeId(),
              owned,
              own.pending(),
              own.pendingSince(),
              Optional.of(own.resourceVersion()));
      // the uid of whoever wrote it last stays: the holder still sees an earlier one's record as
      // adopted
      holder = named(holder, own.uid());
    } else if (r instanceof Record.Collecting) {
      return later(step, "its ownership record is being deleted");
    } else {
      return new TuplesAnswer.HandOverRefused(
          step.holder(),
          step.keys(),
          r instanceof Record.Foreign f
              ? f.why()
              : "its ownership record is for store " + ((Record.Own) r).storeId());
    }
    TuplesAnswer written = write(holder, write);
    if (written instanceof TuplesAnswer.RecordRefused refused) {
      return new TuplesAnswer.HandOverRefused(step.holder(), step.keys(), refused.message());
    }
    if (!(written instanceof TuplesAnswer.RecordWritten)) {
      return later(step, "its ownership record changed since it was read");
    }
    // deleted since it was read: its cleanup may have read its record before this write, so the
    // tuples are not left to it (the record written stays behind, its tuples deleted by this one)
    return alive(ns, step.holder())
        ? new TuplesAnswer.HandedOver(step.holder(), step.keys())
        : later(step, "it is being deleted");
  }

  private static TuplesAnswer later(TuplesStep.HandOver step, String why) {
    return new TuplesAnswer.HandOverLater(step.holder(), step.keys(), why);
  }

  /** Whether the FGATuples {@code name} exists and is not being deleted. */
  private boolean alive(String ns, String name) {
    FGATuples t = client.resources(FGATuples.class).inNamespace(ns).withName(name).get();
    return t != null && t.getMetadata().getDeletionTimestamp() == null;
  }

  /** {@code t}'s name and namespace, with {@code uid}. */
  private static FGATuples named(FGATuples t, String uid) {
    FGATuples as = new FGATuples();
    as.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName(t.getMetadata().getName())
            .withNamespace(t.getMetadata().getNamespace())
            .withUid(uid)
            .build());
    return as;
  }

  /** Hands the record to the garbage collector: owned by {@code t}, which is being deleted. */
  TuplesAnswer giveAway(FGATuples t) {
    String ns = t.getMetadata().getNamespace();
    String name = Names.tuplesRecord(t.getMetadata().getName());
    var ref =
        new OwnerReferenceBuilder()
            .withApiVersion(t.getApiVersion())
            .withKind(t.getKind())
            .withName(t.getMetadata().getName())
            .withUid(t.getMetadata().getUid())
            .build();
    try {
      client
          .configMaps()
          .inNamespace(ns)
          .withName(name)
          .patch(
              PatchContext.of(PatchType.JSON_MERGE),
              SERIALIZER.writeValueAsString(
                  Map.of("metadata", Map.of("ownerReferences", List.of(ref)))));
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    return new TuplesAnswer.RecordGivenAway();
  }

  static String encode(SortedSet<TupleKey> keys) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
      for (TupleKey k : keys) {
        gz.write(k.text().getBytes(StandardCharsets.UTF_8));
        gz.write('\n');
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return Base64.getEncoder().encodeToString(bytes.toByteArray());
  }

  /**
   * The most bytes a record's list may unpack to: every declared tuple at OpenFGA's longest key
   * (object 256, relation 50, user 512). More is not a record this operator wrote.
   */
  static final int MAX_UNPACKED = (TuplesPlanner.MAX_TUPLES + 1) * 822;

  static SortedSet<TupleKey> keys(String base64) {
    SortedSet<TupleKey> keys = new TreeSet<>();
    if (base64 == null || base64.isEmpty()) {
      return keys;
    }
    try (GZIPInputStream gz =
        new GZIPInputStream(new ByteArrayInputStream(Base64.getDecoder().decode(base64)))) {
      // bounded: a forged record must not unpack a gigabyte into the operator's heap
      byte[] text = gz.readNBytes(MAX_UNPACKED + 1);
      if (text.length > MAX_UNPACKED) {
        throw new IllegalStateException("its list unpacks to more than " + MAX_UNPACKED + " bytes");
      }
      for (String line : new String(text, StandardCharsets.UTF_8).split("\n")) {
        if (!line.isEmpty()) {
          keys.add(TupleKey.parse(line));
        }
      }
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalStateException("the ownership record does not read: " + e.getMessage(), e);
    }
    if (keys.size() > TuplesPlanner.MAX_TUPLES) {
      throw new IllegalStateException(
          "the ownership record lists more than " + TuplesPlanner.MAX_TUPLES + " tuples");
    }
    return keys;
  }
}
