package dev.openfga.operator.kube;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The status conditions of the operator's custom resources, Kubernetes style, and the condition
 * types they use: pure, computed on a copy of the status the reconcile read ({@link #copy}),
 * written by {@link StatusWrites}.
 */
public final class Conditions {
  /** Condition type of both kinds: the resource stands for what its spec declares. */
  public static final String READY = "Ready";

  /** Condition type of an FGAModel: the store's newest model is the one it stands for. */
  public static final String IN_SYNC = "InSync";

  private static final int MESSAGE_MAX = 1024;

  private Conditions() {}

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
    Condition existing = find(conditions, type).orElse(null);
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

  /**
   * {@code Ready=False} with this reason. When that is news, the key of the Warning Event about it:
   * one per problem and spell of not being ready, keyed by the minute {@code Ready} turned False —
   * the same problem after a ready spell is news again, one coming back within the spell is not,
   * nor a look again a second later after a refused status write (from the same copy).
   */
  public static Optional<String> block(
      ConditionedStatus next, String reason, String message, Instant now) {
    if (!set(next, READY, false, reason, message, now)) {
      return Optional.empty();
    }
    String since =
        find(next.getConditions(), READY)
            .map(Condition::getLastTransitionTime)
            .flatMap(Timestamps::parse)
            .map(t -> t.truncatedTo(ChronoUnit.MINUTES).toString())
            .orElse("");
    return Optional.of(reason + "/" + Names.shortHash(message) + "/" + since);
  }

  /** The condition {@code type}, if there is one. */
  public static Optional<Condition> find(List<Condition> conditions, String type) {
    return conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
  }

  /** Whether the condition {@code type} is there and {@code True}. */
  public static boolean isTrue(List<Condition> conditions, String type) {
    return find(conditions, type).map(c -> "True".equals(c.getStatus())).orElse(false);
  }

  /** A deep copy of a status to change ({@code empty} when there is none yet). */
  public static <S> S copy(S old, Supplier<S> empty) {
    return old == null ? empty.get() : Serialization.clone(old);
  }

  /** Whether two statuses say the same (then nothing is written). */
  public static boolean sameStatus(Object a, Object b) {
    return Serialization.asJson(a).equals(Serialization.asJson(b));
  }
}
