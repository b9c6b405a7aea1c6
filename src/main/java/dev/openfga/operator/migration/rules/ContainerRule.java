package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Step.Emit;
import java.util.Optional;

/**
 * Rule 2: the container to migrate with, named by {@code openfga.dev/container-name} (default
 * {@code openfga}). An unusable name or a missing container blocks, with a Warning.
 */
final class ContainerRule {
  private ContainerRule() {}

  static Optional<Plan> decide(Facts f) {
    DeploymentSettings s = f.settings();
    if (s.containerName() == null) {
      // the annotation's problem is among the notes' Events already
      return Optional.of(f.blocked(Messages.inDeployment(f.ref(), s.problems().get(0))));
    }
    if (f.container().isEmpty()) {
      String problem =
          Messages.containerNotFound(
              s.containerName(), f.ref(), Facts.containerNames(f.deployment()));
      return Optional.of(
          f.blocked(
              problem, new Emit(EventReason.ContainerNotFound, problem, "container/" + problem)));
    }
    return Optional.empty();
  }
}
