package dev.openfga.operator.ops;

import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.helpers.ThreadLocalMapOfStacks;
import org.slf4j.spi.MDCAdapter;

/**
 * The MDC: one map per thread, never inherited. (SLF4J's {@code BasicMDCAdapter} hands a thread's
 * MDC to the threads it starts, so a pool thread started during one Deployment's reconcile would
 * name that Deployment in its lines for good.)
 */
final class ThreadMdc implements MDCAdapter {
  private final ThreadLocal<Map<String, String>> maps = ThreadLocal.withInitial(HashMap::new);
  private final ThreadLocalMapOfStacks stacks = new ThreadLocalMapOfStacks();

  @Override
  public void put(String key, String value) {
    if (key == null) {
      throw new IllegalArgumentException("key cannot be null");
    }
    maps.get().put(key, value);
  }

  @Override
  public String get(String key) {
    return key == null ? null : maps.get().get(key);
  }

  @Override
  public void remove(String key) {
    if (key != null) {
      maps.get().remove(key);
    }
  }

  @Override
  public void clear() {
    maps.remove();
  }

  /** A copy (possibly empty), never {@code null}. */
  @Override
  public Map<String, String> getCopyOfContextMap() {
    return new HashMap<>(maps.get());
  }

  @Override
  public void setContextMap(Map<String, String> contextMap) {
    maps.set(contextMap == null ? new HashMap<>() : new HashMap<>(contextMap));
  }

  @Override
  public void pushByKey(String key, String value) {
    stacks.pushByKey(key, value);
  }

  @Override
  public String popByKey(String key) {
    return stacks.popByKey(key);
  }

  @Override
  public Deque<String> getCopyOfDequeByKey(String key) {
    return stacks.getCopyOfDequeByKey(key);
  }

  @Override
  public void clearDequeByKey(String key) {
    stacks.clearDequeByKey(key);
  }
}
