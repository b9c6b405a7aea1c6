package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Step.Emit;
import io.fabric8.kubernetes.api.model.Container;
import java.util.Optional;

/**
 * Rule 3: the desired version is the container image's tag, or its digest when pinned by digest
 * ({@link ImageVersion}). An image that cannot be parsed blocks, with a Warning.
 */
final class ImageRule {
  private ImageRule() {}

  static Optional<Plan> decide(Facts f) {
    if (f.desired().isPresent()) {
      return Optional.empty();
    }
    Container c = f.migrating();
    String problem = Messages.unparseableImage(c.getImage(), c.getName(), f.ref());
    return Optional.of(
        f.blocked(
            problem, new Emit(EventReason.InvalidConfiguration, problem, "image/" + problem)));
  }
}
