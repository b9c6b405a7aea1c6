package dev.openfga.operator.controller;

import dev.openfga.operator.model.EventReason;
import dev.openfga.operator.model.Names;
import dev.openfga.operator.model.Timestamps;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
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

  /** Returns whether the Event is new (not a repeat of a transition already reported). */
  public boolean emit(
      Deployment deployment, EventReason reason, String message, String key, Instant now) {
    String uid = deployment.getMetadata().getUid();
    String name = Names.event(deployment.getMetadata().getName(), uid + "/" + reason + "/" + key);
    if (!emitted.add(deployment.getMetadata().getNamespace() + "/" + name)) {
      return false;
    }
    String time = Timestamps.format(now);
    Event event =
        new EventBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(deployment.getMetadata().getNamespace())
            .endMetadata()
            .withNewInvolvedObject()
            .withApiVersion("apps/v1")
            .withKind("Deployment")
            .withName(deployment.getMetadata().getName())
            .withNamespace(deployment.getMetadata().getNamespace())
            .withUid(uid)
            .endInvolvedObject()
            .withReason(reason.name())
            .withMessage(
                message.length() > MESSAGE_MAX ? message.substring(0, MESSAGE_MAX) : message)
            .withType(reason.type())
            .withFirstTimestamp(time)
            .withLastTimestamp(time)
            .withCount(1)
            .withNewSource()
            .withComponent(COMPONENT)
            .endSource()
            .withReportingComponent(COMPONENT)
            .withReportingInstance(instance)
            .build();
    try {
      client.v1().events().inNamespace(event.getMetadata().getNamespace()).resource(event).create();
      LOG.debug("Event {} {}: {}", reason.type(), reason, event.getMessage());
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        emitted.remove(deployment.getMetadata().getNamespace() + "/" + name);
        LOG.warn(
            "could not record Event {} on deployment {}: {}",
            reason,
            deployment.getMetadata().getName(),
            e.getMessage());
      }
      return false;
    }
  }
}
