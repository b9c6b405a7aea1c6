package dev.openfga.operator.migration;

import dev.openfga.operator.migration.rules.Ownership;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * What this process wrote that its caches may not show yet (read-after-write, ADR 0016): the Jobs
 * it created, and the status records it wrote. A watch event can arrive after the next reconcile;
 * without this, a Job just created would not hold its database, and a record just written would
 * look older than it is (a migration already recorded would run again once its Job is gone, e.g.
 * with {@code --ttl-seconds-after-finished=0}).
 *
 * <p>A record is remembered with the resourceVersions it replaced: while the cache still shows one
 * of them (or nothing, for a record this process created), the cache is behind and the written
 * record is the truth; once the cache shows anything else (this write or a later one), the cache
 * is. No resourceVersion is ever compared for order. Both memories end after {@link #MEMORY}.
 */
final class OwnWrites {
  /** How long a write counts even when the cache does not show it yet. */
  static final Duration MEMORY = Duration.ofMinutes(2);

  private static final String ABSENT = "";

  private record Created(Job job, Instant at) {}

  private record Written(ConfigMap record, Set<String> replaced, Instant at) {}

  private final Map<String, Created> jobs = new ConcurrentHashMap<>();
  private final Map<String, Written> records = new ConcurrentHashMap<>();

  void jobCreated(Job job, Instant now) {
    jobs.values().removeIf(c -> c.at().plus(MEMORY).isBefore(now));
    jobs.put(key(job), new Created(job, now));
  }

  /** The cache shows the Job: no need to remember it (a deleted one would still count). */
  void jobCached(String namespace, String name) {
    jobs.remove(namespace + "/" + name);
  }

  /** The Jobs created here, not long ago, that match. */
  List<Job> jobsCreated(Predicate<Job> matching, Instant now) {
    jobs.values().removeIf(c -> c.at().plus(MEMORY).isBefore(now));
    return jobs.values().stream().map(Created::job).filter(matching).toList();
  }

  /** A record was written: {@code before} is what the write replaced (null: it was created). */
  void recordWritten(ConfigMap before, ConfigMap after, Instant now) {
    records.values().removeIf(w -> w.at().plus(MEMORY).isBefore(now));
    String key = key(after);
    Set<String> replaced = new HashSet<>();
    Written previous = records.get(key);
    if (previous != null) {
      replaced.addAll(previous.replaced());
      replaced.add(previous.record().getMetadata().getResourceVersion());
    }
    replaced.add(before == null ? ABSENT : before.getMetadata().getResourceVersion());
    records.put(key, new Written(after, Set.copyOf(replaced), now));
  }

  /**
   * The record as this process knows it: the cached one, or a newer one it wrote for the Deployment
   * with this UID (one deleted and created again under the same name is another Deployment: the
   * garbage collector takes the old one's record).
   */
  Optional<ConfigMap> record(
      String namespace, String name, Optional<ConfigMap> cached, String ownerUid, Instant now) {
    String key = namespace + "/" + name;
    Written written = records.get(key);
    if (written == null) {
      return cached;
    }
    String shown = cached.map(c -> c.getMetadata().getResourceVersion()).orElse(ABSENT);
    boolean sameOwner =
        Ownership.controller(written.record())
            .map(r -> Objects.equals(r.getUid(), ownerUid))
            .orElse(true);
    if (sameOwner
        && !written.at().plus(MEMORY).isBefore(now)
        && written.replaced().contains(shown)) {
      return Optional.of(written.record());
    }
    records.remove(key, written);
    return cached;
  }

  /** {@code namespace/name}, the key of both memories. */
  static String key(HasMetadata o) {
    return o.getMetadata().getNamespace() + "/" + o.getMetadata().getName();
  }
}
