package dev.openfga.operator.models;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.stores.FGAStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Everything one FGAModel decision looks at: the FGAModel, the time, its model normalised and its
 * tests parsed (or why they cannot be), the FGAStore it names (read for a usable model only),
 * whether this process's FGAStore controller confirmed that FGAStore for its store ({@code
 * Claims}), until when its tests wait after an error or a yield (held in memory between
 * reconciles), and the answers of the calls made so far in this reconcile. Read-only.
 */
public record ModelObservation(
    FGAModel model,
    Instant now,
    Desired desired,
    Optional<FGAStore> store,
    boolean confirmed,
    Optional<Instant> testsNotBefore,
    List<ModelAnswer> answers) {

  public ModelObservation {
    answers = List.copyOf(answers);
  }

  /** The model the spec declares and its tests, as read; or why they cannot be used. */
  public sealed interface Desired {
    /**
     * The model normalised; the tests parsed, if any, with their key ({@link ModelAssertions#key}:
     * {@code status.testedKey} once they ran).
     */
    record Valid(ModelJson.Normalised model, Optional<JsonNode> tests, Optional<String> testsKey)
        implements Desired {}

    /** The model or the tests cannot be read; the message says where. */
    record Invalid(String message) implements Desired {}
  }

  /** With the answer of a call. */
  public ModelObservation with(ModelAnswer answer) {
    List<ModelAnswer> all = new ArrayList<>(answers);
    all.add(answer);
    return new ModelObservation(model, now, desired, store, confirmed, testsNotBefore, all);
  }

  /** The answer of that kind, if a call gave one. */
  public <A extends ModelAnswer> Optional<A> answer(Class<A> kind) {
    return answers.stream().filter(kind::isInstance).map(kind::cast).findFirst();
  }
}
