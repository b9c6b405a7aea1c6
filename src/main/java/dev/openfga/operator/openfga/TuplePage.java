package dev.openfga.operator.openfga;

import java.util.List;

/** One page of a Read: its tuples and the token of the next page ({@code ""} after the last). */
public record TuplePage(List<Tuple> tuples, String continuationToken) {

  public TuplePage {
    tuples = List.copyOf(tuples);
    continuationToken = continuationToken == null ? "" : continuationToken;
  }

  public boolean last() {
    return continuationToken.isEmpty();
  }
}
