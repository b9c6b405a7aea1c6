package dev.openfga.operator.kube;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;

/**
 * Writes the status of a custom resource: a JSON patch of {@code /status} guarded by the
 * resourceVersion the reconcile read, only when it changed ({@link Conditions#sameStatus}).
 */
public final class StatusWrites {
  private StatusWrites() {}

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
    if (!Conditions.sameStatus(old, next) && !written(client, resource, next)) {
      R newer = client.resource(resource).get();
      if (newer == null
          || !Conditions.sameStatus(old, newer.getStatus())
          || !written(client, newer, next)) {
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
}
