package dev.openfga.operator.migration.rules;

import java.util.Optional;

/**
 * One rule of SPEC section 4: the decision for these facts, or none, and the next rule decides.
 * {@link Planner} composes the rules in their order; each is pure.
 */
@FunctionalInterface
interface Rule {
  Optional<Plan> decide(Facts f);
}
