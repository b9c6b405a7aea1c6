package dev.openfga.operator.openfga;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * At most {@value #SLOTS} FGAStore and FGAModel reconciles at a time, of the operator's four
 * reconcile threads, which the migration controller shares: an OpenFGA server that hangs (each call
 * may take its timeouts and retries, about 40 s) never holds every thread while a Deployment waits
 * for its migration. A reconcile that finds no free slot is looked at again after {@link
 * #BUSY_AGAIN}, without waiting on the thread; it is counted ({@link #turnedAway}), so that a
 * long-running holder (an FGAModel's tests) can see that someone waits and yield its slot.
 */
public final class OpenFgaCallLimit {
  public static final int SLOTS = 2;
  public static final Duration BUSY_AGAIN = Duration.ofSeconds(2);

  private final Semaphore free = new Semaphore(SLOTS);
  private final AtomicLong turnedAway = new AtomicLong();

  /** {@code work} in a slot, or {@code busy} at once when none is free. */
  public <T> T inSlot(Supplier<T> work, Supplier<T> busy) {
    if (!free.tryAcquire()) {
      turnedAway.incrementAndGet();
      return busy.get();
    }
    try {
      return work.get();
    } finally {
      free.release();
    }
  }

  /**
   * How many reconciles found no free slot so far: when it has grown since a holder took its slot,
   * someone is waiting for one.
   */
  public long turnedAway() {
    return turnedAway.get();
  }
}
