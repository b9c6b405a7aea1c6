package dev.openfga.operator.config;

import java.util.Objects;

/**
 * Everything the flags decide: the operator's configuration and how it logs.
 *
 * @param operator what the operator watches and how it builds migration Jobs
 * @param logging log format and level
 */
public record StartupConfig(OperatorConfig operator, LoggingConfig logging) {

  public StartupConfig {
    Objects.requireNonNull(operator, "operator");
    Objects.requireNonNull(logging, "logging");
  }
}
