package dev.openfga.operator.kube;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This instance's part in leader election: whether it leads, what happens when it stops leading,
 * and the release of the Lease when the process is asked to stop.
 *
 * <ul>
 *   <li>Losing the Lease while running (another instance took it, the API server was unreachable
 *       past the renew deadline) ends the process, so it restarts as a follower instead of acting
 *       next to the new leader.
 *   <li>Stopping (SIGTERM) ends leadership too, but must not call {@code System.exit}: that runs
 *       inside the shutdown hook and would wait for the hook itself, forever.
 *   <li>At the stop, a leader writes the Lease back with no holder (as client-go's {@code
 *       ReleaseOnCancel} does), so another instance takes over within its retry period instead of
 *       waiting for the lease duration. JOSDK does not release it.
 * </ul>
 */
public final class Leadership {
  private static final Logger LOG = LoggerFactory.getLogger(Leadership.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final String identity;
  private final boolean exitOnStopLeading;
  private final AtomicBoolean stopping = new AtomicBoolean();
  private final AtomicBoolean wasLeader = new AtomicBoolean();

  public Leadership(
      KubernetesClient client,
      String namespace,
      String name,
      String identity,
      boolean exitOnStopLeading) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
    this.identity = identity;
    this.exitOnStopLeading = exitOnStopLeading;
  }

  public String namespace() {
    return namespace;
  }

  /** The Lease's name. */
  public String name() {
    return name;
  }

  public LeaderCallbacks callbacks() {
    return new LeaderCallbacks(
        () -> {
          wasLeader.set(true);
          LOG.atInfo().addKeyValue("identity", identity).log("Leading");
        },
        this::stoppedLeading,
        leader -> {});
  }

  /** The process is stopping: stopping to lead from now on is expected. */
  public void stopping() {
    stopping.set(true);
  }

  private void stoppedLeading() {
    if (stopping.get()) {
      return;
    }
    LOG.atWarn().addKeyValue("identity", identity).log("Lost the leader-election Lease");
    if (exitOnStopLeading) {
      // not on this thread: the exit runs the shutdown hook, which stops the elector calling us
      Thread exit = new Thread(() -> System.exit(1), "exit-after-lost-lease");
      exit.start();
    }
  }

  /**
   * Writes the Lease back without a holder if this instance still holds it: a conditional update,
   * read and tried again up to three times on a conflict (this instance's own renewal, cut off by
   * the stop on this side, can still land on the server after the read); after that the Lease
   * simply expires.
   */
  public void release() {
    if (!wasLeader.get()) {
      return;
    }
    for (int attempt = 1; ; attempt++) {
      try {
        releaseOnce();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 3) {
          LOG.atWarn()
              .addKeyValue("lease", name)
              .addKeyValue("code", e.getCode())
              .log("Could not release the leader-election Lease; it expires by itself");
          return;
        }
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private void releaseOnce() {
    Lease lease = client.leases().inNamespace(namespace).withName(name).get();
    if (lease == null
        || lease.getSpec() == null
        || !identity.equals(lease.getSpec().getHolderIdentity())) {
      return;
    }
    ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
    lease.getSpec().setHolderIdentity(null);
    lease.getSpec().setLeaseDurationSeconds(1);
    lease.getSpec().setRenewTime(now);
    lease.getSpec().setAcquireTime(now);
    client.leases().inNamespace(namespace).resource(lease).update();
    LOG.atInfo().addKeyValue("lease", name).log("Released the leader-election Lease");
  }
}
