package dev.openfga.operator.config;

import java.util.Locale;

/**
 * How the operator logs, from {@code --log-format} and {@code --log-level}.
 *
 * @param format one human line per event, or one JSON object per event
 * @param level the least severe level written
 */
public record LoggingConfig(Format format, Level level) {

  public static final LoggingConfig DEFAULT = new LoggingConfig(Format.TEXT, Level.INFO);

  /** Output format of the log. */
  public enum Format {
    TEXT,
    JSON;

    /** The flag's spelling, e.g. {@code json}. */
    public String flagValue() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Log levels, least severe first. */
  public enum Level {
    TRACE,
    DEBUG,
    INFO,
    WARN,
    ERROR;

    /** The flag's spelling, e.g. {@code debug}. */
    public String flagValue() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** True for debug and trace, where library logs are let through too. */
    public boolean isVerbose() {
      return this == TRACE || this == DEBUG;
    }
  }
}
