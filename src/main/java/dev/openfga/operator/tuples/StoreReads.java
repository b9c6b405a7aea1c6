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
 * about as many pages as the set fills (a store that holds mostly these tuples); else by groups of
 * three tuples or more, page by page within the same kind of budget (a group with many run-time
 * tuples gets exact reads instead): by object, or by user and object type when that makes fewer
 * groups; the rest by exact reads. Every read asks for the primary's answer ({@code
 * HIGHER_CONSISTENCY}).
 */
final class StoreReads {
  /** Tuples a group must have in the set to be read as a group rather than one by one. */
  static final int BY_GROUP = 3;

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
    // by object, or by user and object type: whichever makes fewer reads (100 objects of 100
    // users each: 100 reads by object; 10,000 objects of one group each: 1 read by user)
    Map<String, List<TupleKey>> byObject = new TreeMap<>();
    Map<String, List<TupleKey>> byUser = new TreeMap<>();
    for (TupleKey k : keys) {
      byObject.computeIfAbsent(k.object(), o -> new ArrayList<>()).add(k);
      byUser.computeIfAbsent(type(k) + " " + k.user(), u -> new ArrayList<>()).add(k);
    }
    boolean users = reads(byUser) < reads(byObject);
    for (List<TupleKey> wanted : (users ? byUser : byObject).values()) {
      TupleKey first = wanted.get(0);
      Page pages =
          users
              ? token -> api.tuples().readUserOfType(storeId, type(first), first.user(), token)
              : token -> api.tuples().readObject(storeId, first.object(), token);
      if (wanted.size() < BY_GROUP || !group(pages, wanted, present)) {
        for (TupleKey k : wanted) {
          Optional<Tuple> t = api.tuples().readOne(storeId, k);
          t.ifPresent(found -> present.put(k, found));
        }
      }
    }
    return present;
  }

  /** One page of a group's reads, from a continuation token. */
  private interface Page {
    TuplePage read(String token) throws IOException, InterruptedException;
  }

  private static String type(TupleKey k) {
    return k.object().substring(0, k.object().indexOf(':'));
  }

  /** The reads a grouping needs at best: a page per 100 of a group, one read per lone tuple. */
  private static long reads(Map<String, List<TupleKey>> groups) {
    long n = 0;
    for (List<TupleKey> g : groups.values()) {
      n += g.size() < BY_GROUP ? g.size() : g.size() / 100 + 1;
    }
    return n;
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

  /**
   * Reads one group within a budget (its tuples may be far more than those wanted: a run-time
   * group); whether it ended (then its tuples in {@code present}).
   */
  private static boolean group(Page pages, List<TupleKey> wanted, Map<TupleKey, Tuple> present)
      throws IOException, InterruptedException {
    int budget = wanted.size() / 100 + 2;
    Map<TupleKey, Tuple> found = new HashMap<>();
    String token = "";
    for (int page = 0; page < budget; page++) {
      TuplePage p = pages.read(token);
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
