package dev.openfga.operator.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watch events that only show this process's own writes of its Jobs and records. The reconcile
 * that wrote already acted on what such an event shows, so the event need not wake the Deployment
 * again (JOSDK would run the reconcile once more as soon as it ends: two of the five reconciles of
 * an image change, docs/performance.md).
 *
 * <p>A write is announced before it is sent, because its event can arrive before its answer: a
 * create by the object's name, a guarded patch by the resourceVersion it replaces. An event is an
 * echo when it adds an announced name, or replaces an announced resourceVersion. Another write that
 * shows the same (somebody else's create of the name, or write of that version) makes ours fail
 * (AlreadyExists, or the resourceVersion's conflict), and the reconcile then reads or looks again
 * itself. Once the write's answer is in, its echo must also show the resourceVersion the write
 * made: after a watch broke and the informer listed again, an event can show our write and a later
 * one together, and that one must wake the reconcile (an event before the answer, a few
 * milliseconds, is judged by the name or the replaced resourceVersion alone; the Deployment's
 * periodic reconcile sees anything missed then). An announcement ends with its echo, when its write
 * fails, or after {@link #MEMORY}. Deletions are never echoes.
 */
public final class Echoes {
  private static final Logger LOG = LoggerFactory.getLogger(Echoes.class);

  /** How long an announced write waits for its echo. */
  static final Duration MEMORY = Duration.ofMinutes(1);

  /**
   * {@code from}: the resourceVersion a patch replaces, null for a create; {@code to}: the one the
   * write made, null until its answer is in.
   */
  private record Announced(String from, String to, Instant at) {}

  private final Map<String, Announced> announced = new ConcurrentHashMap<>();

  /** {@code desired} is about to be created in {@code namespace}. */
  public void create(HasMetadata desired, String namespace, Instant now) {
    forgetOld(now);
    announced.put(
        key(desired.getClass(), namespace, desired.getMetadata().getName()),
        new Announced(null, null, now));
  }

  /** {@code current} is about to be patched, guarded by its resourceVersion. */
  public void patch(HasMetadata current, Instant now) {
    forgetOld(now);
    announced.put(
        key(current), new Announced(current.getMetadata().getResourceVersion(), null, now));
  }

  /** The announced write succeeded: {@code result} is what the API server answered. */
  public void written(HasMetadata result) {
    String made = result.getMetadata().getResourceVersion();
    announced.computeIfPresent(key(result), (k, a) -> new Announced(a.from(), made, a.at()));
  }

  /** The announced write of {@code o} in {@code namespace} failed: no echo will come. */
  public void failed(HasMetadata o, String namespace) {
    announced.remove(key(o.getClass(), namespace, o.getMetadata().getName()));
  }

  /** Whether this added object is the echo of an announced create (which it then ends). */
  public boolean isEchoOfCreate(HasMetadata added) {
    return ends(added, a -> a.from() == null) && logged("create", added);
  }

  /** Whether this change is the echo of an announced patch (which it then ends). */
  public boolean isEchoOfPatch(HasMetadata newer, HasMetadata older) {
    return older != null
        && ends(
            newer,
            a -> a.from() != null && a.from().equals(older.getMetadata().getResourceVersion()))
        && logged("patch", newer);
  }

  /**
   * Ends, in one step, the announcement of {@code seen}'s object if {@code matches} and it made it.
   */
  private boolean ends(HasMetadata seen, Predicate<Announced> matches) {
    boolean[] echo = {false};
    announced.computeIfPresent(
        key(seen),
        (k, a) -> {
          echo[0] = matches.test(a) && made(a, seen);
          return echo[0] ? null : a;
        });
    return echo[0];
  }

  private static boolean logged(String write, HasMetadata echo) {
    LOG.debug(
        "the watch event of its own {} of {} {}/{} (resourceVersion {}) wakes nothing",
        write,
        echo.getKind(),
        echo.getMetadata().getNamespace(),
        echo.getMetadata().getName(),
        echo.getMetadata().getResourceVersion());
    return true;
  }

  /** Whether {@code seen} is the version the write made, or its answer is not in yet. */
  private static boolean made(Announced a, HasMetadata seen) {
    return a.to() == null || a.to().equals(seen.getMetadata().getResourceVersion());
  }

  private void forgetOld(Instant now) {
    announced.values().removeIf(a -> a.at().plus(MEMORY).isBefore(now));
  }

  private static String key(HasMetadata o) {
    return key(o.getClass(), o.getMetadata().getNamespace(), o.getMetadata().getName());
  }

  private static String key(Class<?> kind, String namespace, String name) {
    return kind.getSimpleName() + "/" + namespace + "/" + name;
  }
}
