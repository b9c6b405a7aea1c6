package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Step.Emit;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.Optional;

/**
 * SPEC section 9, database proxies: the containers {@code openfga.dev/migration-sidecars} names
 * must be in the pod (containers or init containers); without them migrate cannot connect, so a
 * missing one blocks, with a Warning.
 */
final class SidecarRule {
  private SidecarRule() {}

  static Optional<Plan> decide(Facts f) {
    Deployment d = f.deployment();
    List<String> missing =
        MigrationPod.missingSidecars(d.getSpec().getTemplate().getSpec(), f.settings().sidecars());
    if (missing.isEmpty()) {
      return Optional.empty();
    }
    String problem = Messages.sidecarsNotFound(missing, f.ref(), Facts.containerNames(d));
    return Optional.of(
        f.blocked(problem, new Emit(EventReason.ContainerNotFound, problem, "sidecar/" + problem)));
  }
}
