package dev.openfga.operator.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The conditions of the custom resources, as plain functions: when a condition moves, and which
 * {@code Ready=False} is news worth a Warning Event (its key names the Event: one Event per key).
 */
class ConditionsTest {
  private static final Instant T0 = Instant.parse("2026-12-03T10:00:00Z");
  private static final String REASON = "OpenFGARequestFailed";

  /** The Events sent so far: one per key. */
  private final Set<String> events = new LinkedHashSet<>();

  private void block(ConditionedStatus status, String message, Instant now) {
    Conditions.block(status, REASON, message, now).ifPresent(events::add);
  }

  private long eventsAbout(String message) {
    return events.stream().filter(k -> k.contains("/" + Names.shortHash(message) + "/")).count();
  }

  @Test
  void theSameProblemComingBackAfterReadyIsAWarningEventAgain() {
    ConditionedStatus status = new ConditionedStatus();
    String down = "GET http://openfga:8080/stores: connection refused";

    block(status, down, T0);
    // looked at again, still down: no news, no Event
    block(status, down, T0.plusSeconds(10));
    Conditions.set(status, Conditions.READY, true, "StoreReady", "store s", T0.plusSeconds(60));
    // days later, the same failure
    block(status, down, T0.plusSeconds(86_400));

    assertThat(events).hasSize(2).allMatch(k -> k.startsWith(REASON + "/"));

    // a reconcile whose status write was refused (409) looks again a second later from the same
    // ready copy: the same problem is not a new Warning
    ConditionedStatus ready = new ConditionedStatus();
    Conditions.set(ready, Conditions.READY, true, "StoreReady", "store s", T0.plusSeconds(200_000));
    String refused = "GET http://openfga:8080/stores: HTTP 500";
    for (int look = 0; look < 2; look++) {
      block(
          Conditions.copy(ready, ConditionedStatus::new), refused, T0.plusSeconds(200_100 + look));
    }
    assertThat(eventsAbout(refused)).isEqualTo(1);

    // within one spell of not being ready, a problem that comes back after another is not news
    String other = "GET http://openfga:8080/stores: HTTP 503";
    Instant later = T0.plusSeconds(100_000);
    block(status, other, later);
    block(status, down, later.plusSeconds(10));
    block(status, other, later.plusSeconds(20));
    assertThat(eventsAbout(down)).as("one per spell of not being ready").isEqualTo(2);
    assertThat(eventsAbout(other)).isEqualTo(1);
  }

  @Test
  void theTransitionTimeMovesOnlyWhenTheStatusChanges() {
    ConditionedStatus status = new ConditionedStatus();
    assertThat(Conditions.set(status, Conditions.READY, false, "A", "a", T0)).isTrue();
    assertThat(Conditions.set(status, Conditions.READY, false, "A", "a", T0.plusSeconds(5)))
        .isFalse();
    assertThat(Conditions.set(status, Conditions.READY, false, "B", "b", T0.plusSeconds(10)))
        .isTrue();
    assertThat(status.getConditions().get(0).getLastTransitionTime())
        .isEqualTo(Timestamps.format(T0));
    assertThat(Conditions.set(status, Conditions.READY, true, "C", "c", T0.plusSeconds(20)))
        .isTrue();
    assertThat(status.getConditions()).hasSize(1);
    assertThat(status.getConditions().get(0).getLastTransitionTime())
        .isEqualTo(Timestamps.format(T0.plusSeconds(20)));
    assertThat(Conditions.isTrue(status.getConditions(), Conditions.READY)).isTrue();
    assertThat(Conditions.isTrue(status.getConditions(), Conditions.IN_SYNC)).isFalse();
  }
}
