package dev.openfga.operator.openfga;

import java.time.Instant;

/**
 * A relationship tuple: its key, its condition (null: none), and, for a tuple read from a store,
 * when OpenFGA wrote it (null for a declared one).
 */
public record Tuple(TupleKey key, TupleCondition condition, Instant timestamp) {

  public Tuple {
    if (key == null) {
      throw new IllegalArgumentException("a tuple needs a key");
    }
  }

  /** A declared tuple (no timestamp). */
  public static Tuple of(TupleKey key, TupleCondition condition) {
    return new Tuple(key, condition, null);
  }
}
