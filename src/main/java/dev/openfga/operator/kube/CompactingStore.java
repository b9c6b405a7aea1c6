package dev.openfga.operator.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * An informer's store that keeps each object shaped ({@code shape}, in place) and then compacted
 * ({@link Compaction}), before the event handlers see it: nothing else holds it yet.
 *
 * <p>One instance serves one informer: JOSDK hands the same store to every namespace's informer
 * when several namespaces are watched, and an informer's relist removes whatever else is in its
 * store. It is therefore used only with a single informer (one namespace or all namespaces).
 */
public class CompactingStore<R extends HasMetadata> implements ItemStore<R> {
  private final BasicItemStore<R> store = new BasicItemStore<>(Cache::metaNamespaceKeyFunc);
  private final UnaryOperator<R> shape;

  public CompactingStore(UnaryOperator<R> shape) {
    this.shape = shape;
  }

  /** A store that keeps every object whole, compacted. */
  public CompactingStore() {
    this(UnaryOperator.identity());
  }

  @Override
  public String getKey(R obj) {
    return store.getKey(obj);
  }

  @Override
  public R put(String key, R obj) {
    return store.put(key, Compaction.compact(shape.apply(obj)));
  }

  @Override
  public R remove(String key) {
    return store.remove(key);
  }

  @Override
  public Stream<String> keySet() {
    return store.keySet();
  }

  @Override
  public Stream<R> values() {
    return store.values();
  }

  @Override
  public int size() {
    return store.size();
  }

  @Override
  public R get(String key) {
    return store.get(key);
  }
}
