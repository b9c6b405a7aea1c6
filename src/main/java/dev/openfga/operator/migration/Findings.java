package dev.openfga.operator.migration;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a run of a plan found that the caches cannot show, for the Deployment's next reconcile to
 * observe (the run stops there and looks again soon; it never decides again on the spot):
 *
 * <ul>
 *   <li>a Job or record name taken by an object the caches do not hold (SPEC rules 5 and 7: a
 *       legacy Helm hook, a hand-made Job, someone else's ConfigMap, or the operator's own object
 *       the cache has not seen yet): read directly before each decision that needs it, instead of a
 *       create that fails again, until that read finds none or the cache holds the name;
 *   <li>the API server's refusal of the Job create (SPEC section 10): observed once, by the next
 *       decision, which reports it and blocks; the create is tried again after that.
 * </ul>
 */
final class Findings {
  private final Set<ResourceID> takenJobs = ConcurrentHashMap.newKeySet();
  private final Set<ResourceID> takenRecords = ConcurrentHashMap.newKeySet();
  private final Map<ResourceID, String> rejections = new ConcurrentHashMap<>();

  /** The create found the name taken. */
  void taken(StepRunner.NameTaken taken) {
    (taken.job ? takenJobs : takenRecords).add(taken.name);
  }

  boolean jobTaken(ResourceID job) {
    return takenJobs.contains(job);
  }

  boolean recordTaken(ResourceID record) {
    return takenRecords.contains(record);
  }

  /** A direct read found no object of that name, or the cache holds it: nothing to read. */
  void jobKnown(ResourceID job) {
    takenJobs.remove(job);
  }

  void recordKnown(ResourceID record) {
    takenRecords.remove(record);
  }

  /** The API server refused the Deployment's Job: its answer, credentials masked. */
  void rejected(ResourceID deployment, String rejection) {
    rejections.put(deployment, rejection);
  }

  /** The refusal found since the Deployment's last reconcile, once. */
  Optional<String> takeRejection(ResourceID deployment) {
    return Optional.ofNullable(rejections.remove(deployment));
  }

  /** The Deployment is gone. */
  void forget(ResourceID deployment) {
    rejections.remove(deployment);
  }
}
