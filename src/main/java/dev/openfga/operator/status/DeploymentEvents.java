package dev.openfga.operator.status;

import dev.openfga.operator.kube.Timestamps;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** Which of the Events the status view listed are about a Deployment, and which is the newest. */
final class DeploymentEvents {
  private DeploymentEvents() {}

  /**
   * The newest Event whose involved object is this Deployment (same kind, namespace and name; same
   * UID when both have one, so a deleted Deployment's Events do not count). Newest by {@link
   * #time}, then creation time, then resourceVersion, then list order.
   */
  static Optional<Event> last(List<Event> events, Deployment d) {
    List<Event> about = new ArrayList<>();
    for (Event e : events) {
      if (isAbout(e, d)) {
        about.add(e);
      }
    }
    Comparator<Event> newest =
        Comparator.comparing((Event e) -> time(e).orElse(Instant.MIN), Comparator.naturalOrder())
            .thenComparing(e -> created(e).orElse(Instant.MIN))
            .thenComparing(DeploymentEvents::resourceVersion);
    Event last = null;
    for (Event e : about) {
      if (last == null || newest.compare(e, last) >= 0) {
        last = e;
      }
    }
    return Optional.ofNullable(last);
  }

  private static boolean isAbout(Event e, Deployment d) {
    ObjectReference ref = e.getInvolvedObject();
    if (ref == null || !"Deployment".equals(ref.getKind())) {
      return false;
    }
    String namespace =
        ref.getNamespace() != null ? ref.getNamespace() : e.getMetadata().getNamespace();
    if (!Objects.equals(d.getMetadata().getName(), ref.getName())
        || !Objects.equals(d.getMetadata().getNamespace(), namespace)) {
      return false;
    }
    String uid = d.getMetadata().getUid();
    return uid == null || ref.getUid() == null || uid.equals(ref.getUid());
  }

  /** lastTimestamp, else eventTime, else firstTimestamp, else creationTimestamp. */
  static Optional<Instant> time(Event e) {
    return parse(e.getLastTimestamp())
        .or(() -> parse(e.getEventTime() == null ? null : e.getEventTime().getTime()))
        .or(() -> parse(e.getFirstTimestamp()))
        .or(() -> created(e));
  }

  private static Optional<Instant> created(Event e) {
    return parse(e.getMetadata() == null ? null : e.getMetadata().getCreationTimestamp());
  }

  private static long resourceVersion(Event e) {
    try {
      return Long.parseLong(e.getMetadata().getResourceVersion());
    } catch (RuntimeException notANumber) {
      return Long.MIN_VALUE;
    }
  }

  private static Optional<Instant> parse(String time) {
    return time == null || time.isBlank() ? Optional.empty() : Timestamps.parse(time);
  }
}
