package dev.openfga.operator.models;

import dev.openfga.operator.kube.JsonPatch;
import dev.openfga.operator.migration.rules.Keys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out a {@link ModelStep.Publish}: the ConfigMap created with an owner reference to the
 * FGAModel or patched when its data differs, then every Deployment labelled {@value FGAModel#MODEL}
 * with the FGAModel's name that lacks the id in its pod template, each write guarded by the
 * resourceVersion read. A ConfigMap of that name the operator does not own is a conflict.
 */
final class Publication {
  private static final Logger LOG = LoggerFactory.getLogger(Publication.class);
  private static final PatchContext JSON_PATCH = PatchContext.of(PatchType.JSON);

  /** Deployments listed per request when looking for those labelled {@value FGAModel#MODEL}. */
  static final long PAGE = 100;

  /** Publications tried at once when a ConfigMap or Deployment changed between read and write. */
  static final int ATTEMPTS = 3;

  private static final int MAX_LABEL_VALUE = 63;

  private final KubernetesClient client;

  Publication(KubernetesClient client) {
    this.client = client;
  }

  /**
   * Publishes; a write the API server refuses (e.g. a forbidden or invalid one) is answered, not
   * thrown, so that the status (the model written) is still recorded and the model is not written
   * or tested again at the next reconcile.
   */
  ModelAnswer publish(FGAModel model, ModelStep.Publish step) {
    for (int attempt = 1; ; attempt++) {
      try {
        return publishOnce(model, step);
      } catch (KubernetesClientException e) {
        if (e.getCode() == 409 && attempt < ATTEMPTS) {
          // the ConfigMap or a Deployment changed (or the ConfigMap was created) since it was
          // read: published again from a new read and list, skipping what already has the id
          continue;
        }
        return new ModelAnswer.PublishRefused(
            e.getCode(),
            Optional.ofNullable(e.getStatus())
                .map(io.fabric8.kubernetes.api.model.Status::getMessage));
      }
    }
  }

  private ModelAnswer publishOnce(FGAModel model, ModelStep.Publish step) {
    String ns = model.getMetadata().getNamespace();
    if (step.configMap().isPresent()) {
      String name = step.configMap().get();
      ConfigMap existing = client.configMaps().inNamespace(ns).withName(name).get();
      if (existing == null) {
        client.configMaps().inNamespace(ns).resource(configMap(model, name, step.data())).create();
      } else if (!ownedBy(existing, model)) {
        return new ModelAnswer.PublishConflict(name);
      } else if (!step.data().equals(existing.getData())) {
        client
            .resource(existing)
            .patch(JSON_PATCH, JsonPatch.guardedBy(existing).add("/data", step.data()).json());
      }
    }
    // the Deployments labelled with the model's name: the API server selects them, a page at a
    // time, so a namespace's other Deployments are neither sent nor held (a name longer than a
    // label value may be cannot be on any; the CRD refuses such names)
    String name = model.getMetadata().getName();
    String next = null;
    while (name.length() <= MAX_LABEL_VALUE) {
      DeploymentList page =
          client
              .apps()
              .deployments()
              .inNamespace(ns)
              .withLabel(FGAModel.MODEL, name)
              .list(new ListOptionsBuilder().withLimit(PAGE).withContinue(next).build());
      for (Deployment d : page.getItems()) {
        publishTo(d, model, step.modelId());
      }
      next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
      if (next == null || next.isEmpty()) {
        break;
      }
    }
    return new ModelAnswer.Published();
  }

  private static ConfigMap configMap(FGAModel model, String name, Map<String, String> data) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(model.getMetadata().getNamespace())
        .addToLabels(Keys.MANAGED_BY, Keys.MANAGED_BY_OPERATOR)
        .withOwnerReferences(owner(model))
        .endMetadata()
        .withData(data)
        .build();
  }

  /**
   * Sets the pod-template annotation {@value FGAModel#MODEL_ID} of {@code d} to {@code modelId}
   * unless it has it, by a patch guarded by its resourceVersion; one changed since it was listed
   * (its controller writes its status all the time) throws the conflict, and {@link #publish}
   * publishes again from a new list.
   */
  private void publishTo(Deployment d, FGAModel model, String modelId) {
    Map<String, String> pod =
        d.getSpec().getTemplate().getMetadata() == null
            ? null
            : d.getSpec().getTemplate().getMetadata().getAnnotations();
    if (pod != null && modelId.equals(pod.get(FGAModel.MODEL_ID))) {
      return;
    }
    if (pod != null && pod.isEmpty()) {
      pod = null; // the client reads an absent map as an empty one; the patch must create it
    }
    JsonPatch patch = JsonPatch.guardedBy(d);
    if (d.getSpec().getTemplate().getMetadata() == null) {
      patch.add(
          "/spec/template/metadata", Map.of("annotations", Map.of(FGAModel.MODEL_ID, modelId)));
    } else {
      patch.put("/spec/template/metadata/annotations", pod, FGAModel.MODEL_ID, modelId);
    }
    client.resource(d).patch(JSON_PATCH, patch.json());
    LOG.atInfo()
        .addKeyValue(
            "fgamodel", d.getMetadata().getNamespace() + "/" + model.getMetadata().getName())
        .addKeyValue("deployment", d.getMetadata().getName())
        .log("published model {} to the pod template: its pods roll", modelId);
  }

  private static OwnerReference owner(FGAModel model) {
    return new OwnerReferenceBuilder()
        .withApiVersion(model.getApiVersion())
        .withKind(model.getKind())
        .withName(model.getMetadata().getName())
        .withUid(model.getMetadata().getUid())
        .withController(true)
        .build();
  }

  private static boolean ownedBy(ConfigMap cm, FGAModel model) {
    Map<String, String> labels = cm.getMetadata().getLabels();
    return labels != null
        && Keys.MANAGED_BY_OPERATOR.equals(labels.get(Keys.MANAGED_BY))
        && cm.getMetadata().getOwnerReferences().stream()
            .anyMatch(o -> model.getMetadata().getUid().equals(o.getUid()));
  }
}
