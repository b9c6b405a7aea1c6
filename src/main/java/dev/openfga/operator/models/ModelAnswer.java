package dev.openfga.operator.models;

import dev.openfga.operator.openfga.CallFailure;
import dev.openfga.operator.openfga.Model;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** What a {@link ModelStep} found or did. */
public sealed interface ModelAnswer {
  /** {@link ModelStep.ListModels}: the store's models, newest first. */
  record Models(List<Model> models) implements ModelAnswer {}

  /** {@link ModelStep.RunTests}: every test ran; the first assertion that failed, if any. */
  record TestsRan(Optional<String> failure) implements ModelAnswer {}

  /** {@link ModelStep.RunTests}: the run gave its slot up at {@code at}, to go on later. */
  record TestsYielded(long requestsMade, Instant at) implements ModelAnswer {}

  /**
   * {@link ModelStep.RunTests}: an error that is not OpenFGA's answer, the {@code errorsInARow}-th
   * in a row, at {@code at}; the run starts over next time.
   */
  record TestsErred(String message, int errorsInARow, Instant at) implements ModelAnswer {}

  /** {@link ModelStep.WriteModel}: the new model's id. */
  record Written(String modelId) implements ModelAnswer {}

  /** {@link ModelStep.WriteModel}: OpenFGA refused the model (HTTP 400); what it answered. */
  record WriteRefused(String detail) implements ModelAnswer {}

  /** {@link ModelStep.Publish}: the ConfigMap and every labelled Deployment have the id. */
  record Published() implements ModelAnswer {}

  /** {@link ModelStep.Publish}: a ConfigMap of that name exists that is not this FGAModel's. */
  record PublishConflict(String configMap) implements ModelAnswer {}

  /** {@link ModelStep.Publish}: the API server refused a write: its HTTP code and message. */
  record PublishRefused(int code, Optional<String> message) implements ModelAnswer {}

  /** A call to OpenFGA (or for its credentials) failed. */
  record Failed(CallFailure failure) implements ModelAnswer {}
}
