package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.kube.Timestamps;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The status ConfigMap {@code <deployment>-migration-status}: the version the database was last
 * migrated to. Deleting it makes the operator migrate again ({@code openfga migrate} is
 * idempotent).
 */
public final class StatusRecord {
  private StatusRecord() {}

  /** What the operator makes of an existing status ConfigMap. */
  public sealed interface Reading {
    /**
     * Ours and this Deployment's: the recorded version (may be empty), and whether the replicas of
     * the first install are still to be restored.
     */
    record Recorded(
        Optional<String> version,
        boolean ownerNeedsRepair,
        boolean restorePending,
        Optional<String> handledRequest)
        implements Reading {}

    /** Someone else's object holds the name: never read, never overwritten. */
    record Collision(String problem) implements Reading {}
  }

  public static Reading read(ConfigMap configMap, Deployment deployment) {
    String ref = configMap.getMetadata().getNamespace() + "/" + configMap.getMetadata().getName();
    Map<String, String> labels = configMap.getMetadata().getLabels();
    if (labels == null || !Keys.MANAGED_BY_OPERATOR.equals(labels.get(Keys.MANAGED_BY))) {
      return new Reading.Collision(Messages.recordNotManaged(ref));
    }
    Optional<OwnerReference> controller = Ownership.controller(configMap);
    boolean repair = false;
    if (controller.isPresent()) {
      OwnerReference owner = controller.get();
      boolean sameDeployment =
          Ownership.isDeployment(owner)
              && deployment.getMetadata().getName().equals(owner.getName());
      if (!sameDeployment) {
        return new Reading.Collision(
            Messages.recordControlledElsewhere(
                ref, owner.getKind(), owner.getName(), deployment.getMetadata().getName()));
      }
      repair = !deployment.getMetadata().getUid().equals(owner.getUid());
    }
    Map<String, String> data = configMap.getData();
    String version = data == null ? null : data.get(Keys.DATA_VERSION);
    boolean restorePending = data != null && "true".equals(data.get(Keys.DATA_RESTORE_REPLICAS));
    String handled = data == null ? null : data.get(Keys.DATA_HANDLED_REQUEST);
    return new Reading.Recorded(
        Optional.ofNullable(version).filter(v -> !v.isEmpty()),
        repair,
        restorePending,
        Optional.ofNullable(handled).filter(h -> !h.isEmpty()));
  }

  /** The labels the record must carry; unrelated labels on an existing record are kept. */
  public static Map<String, String> labels() {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(Keys.PART_OF, Keys.PART_OF_OPENFGA);
    labels.put(Keys.COMPONENT, Keys.COMPONENT_MIGRATION);
    labels.put(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR);
    return labels;
  }

  public static Map<String, String> data(String version, Instant migratedAt, String jobName) {
    Map<String, String> data = new LinkedHashMap<>();
    data.put(Keys.DATA_VERSION, version);
    data.put(Keys.DATA_MIGRATED_AT, Timestamps.format(migratedAt));
    data.put(Keys.DATA_JOB_NAME, jobName);
    return data;
  }

  /** A new record, controlled by the Deployment (garbage-collected with it). */
  public static ConfigMap build(Deployment deployment, Map<String, String> data) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName(Names.statusConfigMap(deployment.getMetadata().getName()))
        .withNamespace(deployment.getMetadata().getNamespace())
        .withLabels(labels())
        .withOwnerReferences(MigrationJob.ownerReference(deployment))
        .endMetadata()
        .withData(data)
        .build();
  }
}
