package dev.openfga.operator.models;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.Optional;

/**
 * A call an FGAModel's plan asks for ({@link ModelPlan.Call}). Each is answered by a {@link
 * ModelAnswer}, which joins the observation before the planner decides again; one that fails is
 * answered by {@link ModelAnswer.Failed}.
 */
public sealed interface ModelStep {
  /**
   * Read the credentials, make the API client for the store's server (the calls below use it), and
   * list the store's models, newest first, every page.
   */
  record ListModels(String storeId) implements ModelStep {}

  /**
   * Run the tests of {@code key} against {@code model}, each in a scratch store, or go on where a
   * run of them that yielded its slot stands; a run yields again once it has held the slot a while
   * and someone waits for one.
   */
  record RunTests(String key, JsonNode model, JsonNode tests) implements ModelStep {}

  /** Write the model to the store. */
  record WriteModel(String storeId, JsonNode model) implements ModelStep {}

  /**
   * Publish {@code modelId}: the ConfigMap {@code configMap} (if any) with {@code data}, then the
   * pod template of every Deployment labelled with the FGAModel's name.
   */
  record Publish(String modelId, Optional<String> configMap, Map<String, String> data)
      implements ModelStep {}
}
