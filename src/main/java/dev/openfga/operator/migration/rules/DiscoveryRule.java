package dev.openfga.operator.migration.rules;

import java.util.Optional;

/**
 * Rule 1: a Deployment without both discovery labels, or without the exact opt-in, is left alone —
 * no write of any kind. Checked again at every look, whatever woke it.
 */
final class DiscoveryRule {
  private DiscoveryRule() {}

  static Optional<Plan> decide(Facts f) {
    if (!DeploymentSettings.isDiscovered(f.deployment())) {
      return Optional.of(Plan.ignored(Messages.NOT_DISCOVERED));
    }
    if (!f.settings().optedIn()) {
      return Optional.of(Plan.ignored(Messages.NOT_OPTED_IN));
    }
    return Optional.empty();
  }
}
