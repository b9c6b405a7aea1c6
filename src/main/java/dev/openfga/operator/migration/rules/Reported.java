package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.migration.rules.Step.Emit;
import dev.openfga.operator.migration.rules.Step.MarkReported;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * SPEC section 5, one Event per transition, also across restarts: the Events about a lasting state
 * of the Deployment ({@link EventReason#standing()}: the sqlite skip, a rollback, a bad annotation,
 * a missing initContainer or container) come from every plan while that state holds. The operator
 * lists those it has sent on the Deployment ({@link Keys#REPORTED_EVENTS}, the ids that end the
 * Events' names), so a restarted operator sends none of them again and makes no request for a
 * Deployment whose state has not changed (SPEC section 8). The list is written only when the set of
 * such Events changes: at the transition itself, never on a steady pass.
 */
public final class Reported {
  private Reported() {}

  /**
   * The plan without the Events the Deployment lists as sent, and with a last {@link MarkReported}
   * when its Events about a lasting state differ from that list (an Event that stops being standing
   * leaves the list, so the same state coming back later is news again).
   */
  public static Plan settle(Deployment d, Plan plan) {
    Set<String> recorded = recorded(d);
    Set<String> standing = new LinkedHashSet<>();
    List<Step> steps = new ArrayList<>(plan.steps().size() + 1);
    for (Step step : plan.steps()) {
      if (step instanceof Emit e && e.reason().standing()) {
        String id = id(d, e);
        standing.add(id);
        if (recorded.contains(id)) {
          continue;
        }
      }
      steps.add(step);
    }
    if (!standing.equals(recorded)) {
      steps.add(new MarkReported(List.copyOf(standing)));
    }
    return new Plan(plan.state(), plan.summary(), steps, plan.next());
  }

  /** The ids the Deployment lists as sent; an unreadable entry is no id (and gets rewritten). */
  public static Set<String> recorded(Deployment d) {
    var annotations = d.getMetadata().getAnnotations();
    String value = annotations == null ? null : annotations.get(Keys.REPORTED_EVENTS);
    if (value == null || value.isBlank()) {
      return Set.of();
    }
    Set<String> ids = new LinkedHashSet<>();
    Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty()).forEach(ids::add);
    return ids;
  }

  /**
   * The id of the Event an {@link Emit} sends on the Deployment: the end of its name ({@link
   * Names#event}), from the Deployment's uid, the reason and the key, as the Event recorder names
   * it.
   */
  public static String id(Deployment d, Emit e) {
    return Names.eventId(d.getMetadata().getUid() + "/" + e.reason().name() + "/" + e.key());
  }
}
