package dev.openfga.operator.config;

import java.util.List;

/** The flags (or their environment fallbacks) hold one or more invalid values. */
public final class InvalidFlagsException extends Exception {

  private final List<String> problems;

  public InvalidFlagsException(List<String> problems) {
    super(String.join(System.lineSeparator(), problems));
    if (problems.isEmpty()) {
      throw new IllegalArgumentException("at least one problem");
    }
    this.problems = List.copyOf(problems);
  }

  /** One line per problem, each naming the flag, the value and what is allowed. */
  public List<String> problems() {
    return problems;
  }
}
