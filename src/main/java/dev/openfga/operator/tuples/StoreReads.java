package dev.openfga.operator.tuples;

import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.openfga.TuplePage;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeMap;

/**
 * Which of a set of tuples are in a store, in few reads: the whole store first, when it ends within
 * about as many pages as the set fills (a store that holds mostly these tuples); else the objects
 * of three tuples or more page by page, within the same kind of budget (an object with many
 * run-time tuples gets exact reads instead), and the rest by exact reads. Every read asks for the
 * primary's answer ({@code HIGHER_CONSISTENCY}).
 */
final class StoreReads {
  /** Tuples an object must have in the set to be read by object rather than one by one. */
  static final int BY_OBJECT = 3;

  private StoreReads() {}

  static Map<TupleKey, Tuple> present(FgaApi api, String storeId, SortedSet<TupleKey> keys)
      throws IOException, InterruptedException {
    Map<TupleKey, Tuple> present = new HashMap<>();
    if (keys.isEmpty()) {
      return present;
    }
    if (whole(api, storeId, keys, present)) {
      return present;
    }
    present.clear();
    Map<String, List<TupleKey>> byObject = new TreeMap<>();
    keys.forEach(k -> byObject.computeIfAbsent(k.object(), o -> new ArrayList<>()).add(k));
    for (Map.Entry<String, List<TupleKey>> e : byObject.entrySet()) {
      List<TupleKey> wanted = e.getValue();
      if (wanted.size() < BY_OBJECT || !object(api, storeId, e.getKey(), wanted, present)) {
        for (TupleKey k : wanted) {
          Optional<Tuple> t = api.tuples().readOne(storeId, k);
          t.ifPresent(found -> present.put(k, found));
        }
      }
    }
    return present;
  }

  /** Reads the whole store within a budget; whether it ended (then {@code present} is complete). */
  private static boolean whole(
      FgaApi api, String storeId, SortedSet<TupleKey> keys, Map<TupleKey, Tuple> present)
      throws IOException, InterruptedException {
    int budget = keys.size() / 100 + 2;
    String token = "";
    for (int page = 0; page < budget; page++) {
      TuplePage p = api.tuples().readAll(storeId, token);
      for (Tuple t : p.tuples()) {
        if (keys.contains(t.key())) {
          present.put(t.key(), t);
        }
      }
      if (p.last()) {
        return true;
      }
      token = p.continuationToken();
    }
    return false;
  }

  /** Reads one object within a budget; whether it ended (then its tuples in {@code present}). */
  private static boolean object(
      FgaApi api,
      String storeId,
      String object,
      List<TupleKey> wanted,
      Map<TupleKey, Tuple> present)
      throws IOException, InterruptedException {
    int budget = wanted.size() / 100 + 2;
    Map<TupleKey, Tuple> found = new HashMap<>();
    String token = "";
    for (int page = 0; page < budget; page++) {
      TuplePage p = api.tuples().readObject(storeId, object, token);
      p.tuples().forEach(t -> found.put(t.key(), t));
      if (p.last()) {
        for (TupleKey k : wanted) {
          if (found.containsKey(k)) {
            present.put(k, found.get(k));
          }
        }
        return true;
      }
      token = p.continuationToken();
    }
    return false;
  }
}
