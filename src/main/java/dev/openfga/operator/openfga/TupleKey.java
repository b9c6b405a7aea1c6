package dev.openfga.operator.openfga;

/**
 * A relationship tuple's key: what OpenFGA identifies a tuple by (its condition is not part of it).
 * Ordered by {@link #text()}, the form OpenFGA prints: {@code object#relation@user}.
 */
public record TupleKey(String object, String relation, String user)
    implements Comparable<TupleKey> {

  public TupleKey {
    if (object == null || relation == null || user == null) {
      throw new IllegalArgumentException("a tuple needs object, relation and user");
    }
  }

  /** {@code object#relation@user}, as OpenFGA names a tuple in its messages. */
  public String text() {
    return object + "#" + relation + "@" + user;
  }

  /**
   * The key of {@link #text()}; the first {@code #} ends the object, the next {@code @} the
   * relation.
   */
  public static TupleKey parse(String text) {
    int hash = text.indexOf('#');
    int at = hash < 0 ? -1 : text.indexOf('@', hash);
    if (hash <= 0 || at <= hash + 1 || at == text.length() - 1) {
      throw new IllegalArgumentException("not a tuple key (object#relation@user): " + text);
    }
    return new TupleKey(
        text.substring(0, hash), text.substring(hash + 1, at), text.substring(at + 1));
  }

  @Override
  public int compareTo(TupleKey other) {
    int c = object.compareTo(other.object);
    if (c != 0) {
      return c;
    }
    c = relation.compareTo(other.relation);
    return c != 0 ? c : user.compareTo(other.user);
  }

  @Override
  public String toString() {
    return text();
  }
}
