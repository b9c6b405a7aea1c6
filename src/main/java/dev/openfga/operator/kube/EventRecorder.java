package dev.openfga.operator.kube;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts Kubernetes Events on Deployments, once per transition: the key of a transition names the
 * Event ({@code <deployment>.<hash>}), so a repeat (a retried reconcile, a restarted operator) is
 * skipped in memory or rejected by the API as already existing. Best effort: a failure to record an
 * Event is logged and never stops a migration.
 */
public final class EventRecorder {
  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
  static final String COMPONENT = "openfga-operator";
  private static final int MESSAGE_MAX = 4096;
  private static final int REMEMBERED = 4096;

  private final KubernetesClient client;
  private final String instance;
  private final Set<String> emitted =
      Collections.newSetFromMap(
          Collections.synchronizedMap(
              new LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                  return size() > REMEMBERED;
                }
              }));

  public EventRecorder(KubernetesClient client, String instance) {
    this.client = client;
    this.instance = instance;
  }

  /** What became of an Event. */
  public enum Outcome {
    /** Created now. */
    SENT,
    /** Sent before: by this process, or (AlreadyExists) by an earlier one. */
    KNOWN,
    /** The API server did not take it (logged); the next attempt sends it again. */
    FAILED
  }

  /**
   * The Event on a Deployment, and what became of it. A Deployment from the trimmed cache carries
   * no apiVersion and kind: they are given here.
   */
  public Outcome send(
      Deployment deployment,
      String reason,
      boolean warning,
      String message,
      String key,
      Instant now) {
    return emit(deployment, "apps/v1", "Deployment", reason, warning, message, key, now);
  }

  /**
   * The same for any object (the FGAStore and FGAModel controllers): an Event of this reason,
   * {@code Warning} or {@code Normal}, on it.
   */
  public boolean emit(
      HasMetadata object, String reason, boolean warning, String message, String key, Instant now) {
    return emit(
            object, object.getApiVersion(), object.getKind(), reason, warning, message, key, now)
        == Outcome.SENT;
  }

  /** The Event {@code name} on {@code object}: one occurrence, at {@code now}. */
  public static Event event(
      HasMetadata object,
      String apiVersion,
      String kind,
      String name,
      String reason,
      String type,
      String message,
      Instant now,
      String instance) {
    String namespace = object.getMetadata().getNamespace();
    String time = Timestamps.format(now);
    return new EventBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .endMetadata()
        .withNewInvolvedObject()
        .withApiVersion(apiVersion)
        .withKind(kind)
        .withName(object.getMetadata().getName())
        .withNamespace(namespace)
        .withUid(object.getMetadata().getUid())
        .endInvolvedObject()
        .withReason(reason)
        .withMessage(message.length() > MESSAGE_MAX ? message.substring(0, MESSAGE_MAX) : message)
        .withType(type)
        .withFirstTimestamp(time)
        .withLastTimestamp(time)
        .withCount(1)
        .withNewSource()
        .withComponent(COMPONENT)
        .endSource()
        .withReportingComponent(COMPONENT)
        .withReportingInstance(instance)
        .build();
  }

  private Outcome emit(
      HasMetadata object,
      String apiVersion,
      String kind,
      String reason,
      boolean warning,
      String message,
      String key,
      Instant now) {
    String uid = object.getMetadata().getUid();
    String namespace = object.getMetadata().getNamespace();
    String name = Names.event(object.getMetadata().getName(), uid + "/" + reason + "/" + key);
    if (!emitted.add(namespace + "/" + name)) {
      return Outcome.KNOWN;
    }
    String type = warning ? "Warning" : "Normal";
    Event event = event(object, apiVersion, kind, name, reason, type, message, now, instance);
    try {
      client.v1().events().inNamespace(namespace).resource(event).create();
      LOG.debug("Event {} {}: {}", type, reason, event.getMessage());
      return Outcome.SENT;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return Outcome.KNOWN;
      }
      emitted.remove(namespace + "/" + name);
      LOG.warn(
          "could not record Event {} on {} {}: {}",
          reason,
          kind,
          object.getMetadata().getName(),
          e.getMessage());
      return Outcome.FAILED;
    }
  }
}
