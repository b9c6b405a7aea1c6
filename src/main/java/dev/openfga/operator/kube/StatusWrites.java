package dev.openfga.operator.kube;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;

/** The status conditions of the FGAStore and FGAModel resources, Kubernetes style. */
public final class StatusWrites {
  private static final int MESSAGE_MAX = 1024;

  private StatusWrites() {}

  /**
   * Sets the condition {@code type}; the transition time moves only when its status changes.
   * Returns whether anything about it changed.
   */
  public static boolean set(
      ConditionedStatus status,
      String type,
      boolean value,
      String reason,
      String message,
      Instant now) {
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
  public static <S> S copy(S old, java.util.function.Supplier<S> empty) {
    return old == null ? empty.get() : Serialization.clone(old);
  }

  /**
   * Writes the status when it changed, by a JSON patch of {@code /status} guarded by the
   * resourceVersion the reconcile read; rescheduled after {@code again} (null: not). A reconcile
   * that ran on a cached copy older than another reconcile's status write (the watch event of that
   * write not in yet) is refused with a conflict and looked at again after {@link #CONFLICT_AGAIN}
   * on the newer object, instead of overwriting it (e.g. a {@code createdByOperator: true} with
   * false). When only something else changed (a label, an annotation: the status is still the one
   * the reconcile read), the status is written on the newer object instead, so that what this
   * reconcile did (e.g. create a store) is never lost.
   */
  public static <S, R extends CustomResource<?, S>> UpdateControl<R> update(
      KubernetesClient client, R resource, S old, S next, Duration again) {
    if (!sameStatus(old, next) && !written(client, resource, next)) {
      R newer = client.resource(resource).get();
      if (newer == null || !sameStatus(old, newer.getStatus()) || !written(client, newer, next)) {
        return UpdateControl.<R>noUpdate().rescheduleAfter(CONFLICT_AGAIN);
      }
    }
    UpdateControl<R> control = UpdateControl.noUpdate();
    return again == null ? control : control.rescheduleAfter(again);
  }

  /**
   * Writes {@code status} on {@code observed}'s version; false when the object has changed since.
   */
  private static <S, R extends CustomResource<?, S>> boolean written(
      KubernetesClient client, R observed, S status) {
    return writeNow(client, observed, status).isPresent();
  }

  /**
   * Writes {@code status} on {@code observed}'s version now (what must be recorded before the
   * reconcile goes on): the object as written, or empty when it has changed since.
   */
  public static <S, R extends CustomResource<?, S>> java.util.Optional<R> writeNow(
      KubernetesClient client, R observed, S status) {
    try {
      return java.util.Optional.of(
          client
              .resource(observed)
              .subresource("status")
              .patch(
                  PatchContext.of(PatchType.JSON),
                  JsonPatch.guardedBy(observed)
                      .add("/status", STATUS_JSON.valueToTree(status))
                      .json()));
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
      return java.util.Optional.empty();
    }
  }

  /** When a resource whose status write met a newer object is looked at again. */
  public static final Duration CONFLICT_AGAIN = Duration.ofSeconds(1);

  /** A status as JSON without its unset fields. */
  private static final ObjectMapper STATUS_JSON =
      new ObjectMapper().setDefaultPropertyInclusion(JsonInclude.Include.NON_NULL);

  /**
   * {@code Ready=False} with this reason; when that is news, a WARN log line and (with {@code
   * warn}) a Warning Event on the resource.
   */
  public static void block(
      EventRecorder events,
      Logger log,
      HasMetadata resource,
      ConditionedStatus next,
      String reason,
      String message,
      boolean warn,
      Instant now) {
    if (set(next, "Ready", false, reason, message, now)) {
      // one Event per problem and spell of not being ready, keyed by the minute Ready turned False:
      // the same problem after a ready spell is news again, one coming back within the spell is
      // not, nor a look again a second later after a refused status write (from the same copy)
      String since =
          next.getConditions().stream()
              .filter(c -> "Ready".equals(c.getType()))
              .map(Condition::getLastTransitionTime)
              .filter(Objects::nonNull)
              .map(Timestamps::parse)
              .flatMap(java.util.Optional::stream)
              .map(t -> t.truncatedTo(java.time.temporal.ChronoUnit.MINUTES).toString())
              .findFirst()
              .orElse("");
      log.atWarn()
          .addKeyValue(
              resource.getKind().toLowerCase(java.util.Locale.ROOT),
              resource.getMetadata().getNamespace() + "/" + resource.getMetadata().getName())
          .addKeyValue("reason", reason)
          .log(message);
      if (warn) {
        events.emit(
            resource,
            reason,
            true,
            message,
            reason + "/" + Names.shortHash(message) + "/" + since,
            now);
      }
    }
  }

  /** Whether two statuses say the same (then nothing is written). */
  public static boolean sameStatus(Object a, Object b) {
    return Serialization.asJson(a).equals(Serialization.asJson(b));
  }
}
