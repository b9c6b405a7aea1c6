package dev.openfga.operator.fga;

import dev.openfga.operator.model.Timestamps;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** The status conditions of the FGAStore and FGAModel resources, Kubernetes style. */
final class Conditions {
  private static final int MESSAGE_MAX = 1024;

  private Conditions() {}

  /**
   * Sets the condition {@code type}; the transition time moves only when its status changes.
   * Returns whether anything about it changed.
   */
  static boolean set(
      FgaStatus status, String type, boolean value, String reason, String message, Instant now) {
    String text = message.length() > MESSAGE_MAX ? message.substring(0, MESSAGE_MAX) : message;
    String s = value ? "True" : "False";
    List<Condition> conditions = status.getConditions();
    Condition existing =
        conditions.stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
    if (existing != null
        && s.equals(existing.getStatus())
        && reason.equals(existing.getReason())
        && text.equals(existing.getMessage())
        && Objects.equals(existing.getObservedGeneration(), status.getObservedGeneration())) {
      return false;
    }
    String since =
        existing != null && s.equals(existing.getStatus())
            ? existing.getLastTransitionTime()
            : Timestamps.format(now);
    Condition next =
        new ConditionBuilder()
            .withType(type)
            .withStatus(s)
            .withReason(reason)
            .withMessage(text)
            .withObservedGeneration(status.getObservedGeneration())
            .withLastTransitionTime(since)
            .build();
    if (existing != null) {
      conditions.set(conditions.indexOf(existing), next);
    } else {
      conditions.add(next);
    }
    return existing == null
        || !s.equals(existing.getStatus())
        || !reason.equals(existing.getReason())
        || !text.equals(existing.getMessage());
  }

  static List<Condition> copy(List<Condition> conditions) {
    List<Condition> copy = new ArrayList<>();
    if (conditions != null) {
      conditions.forEach(c -> copy.add(new ConditionBuilder(c).build()));
    }
    return copy;
  }

  /** Whether two statuses say the same (then nothing is written). */
  static boolean sameStatus(Object a, Object b) {
    return Serialization.asJson(a).equals(Serialization.asJson(b));
  }
}
