package dev.openfga.operator.fga;

import dev.openfga.operator.controller.EventRecorder;
import dev.openfga.operator.model.Names;
import dev.openfga.operator.model.Timestamps;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;

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

  /** A deep copy of a status to change ({@code empty} when there is none yet). */
  static <S> S copy(S old, java.util.function.Supplier<S> empty) {
    return old == null ? empty.get() : Serialization.clone(old);
  }

  /**
   * The status patch when the status changed, else none; rescheduled after {@code again} (null:
   * not). The patch is the difference between the cached object and a copy with the new status, so
   * it touches {@code /status} only.
   */
  static <S, R extends CustomResource<?, S>> UpdateControl<R> update(
      KubernetesClient client, R resource, S old, S next, Duration again) {
    UpdateControl<R> control;
    if (sameStatus(old, next)) {
      control = UpdateControl.noUpdate();
    } else {
      R patched = client.getKubernetesSerialization().clone(resource);
      patched.setStatus(next);
      control = UpdateControl.patchStatus(patched);
    }
    return again == null ? control : control.rescheduleAfter(again);
  }

  /**
   * {@code Ready=False} with this reason; when that is news, a WARN log line and (with {@code
   * warn}) a Warning Event on the resource.
   */
  static void block(
      EventRecorder events,
      Logger log,
      HasMetadata resource,
      FgaStatus next,
      String reason,
      String message,
      boolean warn,
      Instant now) {
    if (set(next, "Ready", false, reason, message, now)) {
      log.atWarn()
          .addKeyValue(
              resource.getKind().toLowerCase(java.util.Locale.ROOT),
              resource.getMetadata().getNamespace() + "/" + resource.getMetadata().getName())
          .addKeyValue("reason", reason)
          .log(message);
      if (warn) {
        events.emit(resource, reason, true, message, reason + "/" + Names.shortHash(message), now);
      }
    }
  }

  /** Whether two statuses say the same (then nothing is written). */
  static boolean sameStatus(Object a, Object b) {
    return Serialization.asJson(a).equals(Serialization.asJson(b));
  }
}
