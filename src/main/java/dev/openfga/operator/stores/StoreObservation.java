package dev.openfga.operator.stores;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Everything one FGAStore decision looks at: the FGAStore (as read, or as the intent write left
 * it), every FGAStore of the watched namespaces as the informer cache has them, the stores this
 * process confirmed a moment ago ({@link Claims}, whose FGAStores' statuses may not be in the cache
 * yet), the time, and the answers of the calls made so far in this reconcile. Read-only.
 */
public record StoreObservation(
    FGAStore store,
    List<FGAStore> cached,
    List<Claims.Entry> confirmed,
    Instant now,
    List<StoreAnswer> answers) {

  public StoreObservation {
    cached = List.copyOf(cached);
    confirmed = List.copyOf(confirmed);
    answers = List.copyOf(answers);
  }

  /** Before any call. */
  public StoreObservation(
      FGAStore store, List<FGAStore> cached, List<Claims.Entry> confirmed, Instant now) {
    this(store, cached, confirmed, now, List.of());
  }

  /** With the answer of a call; an intent recorded is the FGAStore from then on. */
  public StoreObservation with(StoreAnswer answer) {
    List<StoreAnswer> all = new ArrayList<>(answers);
    all.add(answer);
    FGAStore now = answer instanceof StoreAnswer.IntentRecorded r ? r.store() : store;
    return new StoreObservation(now, cached, confirmed, this.now, all);
  }

  /** The answer of that kind, if a call gave one. */
  public <A extends StoreAnswer> Optional<A> answer(Class<A> kind) {
    return answers.stream().filter(kind::isInstance).map(kind::cast).findFirst();
  }
}
