package dev.openfga.operator.models;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The publication of an FGAModel's id, pure: what is published where (the ConfigMap {@code
 * publish.configMapName} with the server, store and model ids, and the pod template of the
 * Deployments labelled {@value FGAModel#MODEL}), and what a publication that failed means.
 */
final class ModelPublication {
  private ModelPublication() {}

  /** The publication of {@code modelId}: the ConfigMap's data, and the Deployments. */
  static ModelStep.Publish step(ModelObservation o, String modelId, String storeId, String url) {
    Map<String, String> data = new LinkedHashMap<>();
    data.put("FGA_API_URL", url);
    data.put("FGA_STORE_ID", storeId);
    data.put("FGA_MODEL_ID", modelId);
    return new ModelStep.Publish(modelId, configMap(o.model()), data);
  }

  private static Optional<String> configMap(FGAModel model) {
    return Optional.ofNullable(model.getSpec().getPublish())
        .map(FGAModel.Publish::getConfigMapName);
  }

  static Optional<ModelAnswer> answer(ModelObservation o) {
    return o.answers().stream()
        .filter(
            a ->
                a instanceof ModelAnswer.Published
                    || a instanceof ModelAnswer.PublishConflict
                    || a instanceof ModelAnswer.PublishRefused)
        .findFirst();
  }

  /**
   * Why the model id was not published: {@link ModelReason#PublishConflict} (a ConfigMap of that
   * name the operator does not own) or {@link ModelReason#PublishFailed} (a write the API server
   * refused); the message names the object.
   */
  record Unpublished(ModelReason reason, String message) {}

  static Optional<Unpublished> unpublished(ModelObservation o, ModelAnswer answer, String modelId) {
    FGAModel model = o.model();
    if (answer instanceof ModelAnswer.PublishConflict conflict) {
      return Optional.of(
          new Unpublished(
              ModelReason.PublishConflict,
              "ConfigMap "
                  + model.getMetadata().getNamespace()
                  + "/"
                  + conflict.configMap()
                  + " (publish.configMapName) exists and is not this FGAModel's; rename or delete"
                  + " it"));
    }
    if (answer instanceof ModelAnswer.PublishRefused refused) {
      return Optional.of(
          new Unpublished(
              ModelReason.PublishFailed,
              "could not publish model "
                  + modelId
                  + configMap(model).map(c -> " to ConfigMap " + c).orElse("")
                  + " or the Deployments labelled "
                  + FGAModel.MODEL
                  + "="
                  + model.getMetadata().getName()
                  + ": HTTP "
                  + refused.code()
                  + refused.message().map(m -> " " + m).orElse("")));
    }
    return Optional.empty();
  }
}
