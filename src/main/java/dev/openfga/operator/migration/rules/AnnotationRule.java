package dev.openfga.operator.migration.rules;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.Optional;

/**
 * What the Job was asked to run with but cannot be given: a migration ServiceAccount or Secret
 * whose name is not valid, database proxies ({@code openfga.dev/migration-sidecars}) that cannot be
 * told from the value. Never fall back silently to the runtime's account, credentials or a Job
 * without its proxies (which could not reach the database): blocked (SPEC section 10).
 */
final class AnnotationRule {
  private AnnotationRule() {}

  static Optional<Plan> decide(Facts f) {
    DeploymentSettings s = f.settings();
    Deployment d = f.deployment();
    if (given(d, Keys.MIGRATION_SERVICE_ACCOUNT) && s.serviceAccount().isEmpty()) {
      return Optional.of(f.blocked(Messages.invalidServiceAccount(f.ref())));
    }
    if (given(d, Keys.MIGRATION_SECRET) && s.migrationSecret().isEmpty()) {
      return Optional.of(f.blocked(Messages.invalidSecret(f.ref())));
    }
    return s.problems().stream()
        .filter(p -> Messages.concerns(p, Keys.MIGRATION_SIDECARS))
        .findFirst()
        .map(problem -> f.blocked(Messages.inDeployment(f.ref(), problem)));
  }

  private static boolean given(Deployment d, String key) {
    var annotations = d.getMetadata().getAnnotations();
    String value = annotations == null ? null : annotations.get(key);
    return value != null && !value.isBlank();
  }
}
