package dev.openfga.operator.config;

import java.net.InetSocketAddress;

/**
 * A listen address in the Go style of the upstream flags: {@code :8081} (every interface), {@code
 * 0.0.0.0:8081}, {@code 127.0.0.1:0} (an ephemeral port) or {@code [::1]:8081}.
 *
 * @param host the host or IP address; empty for every interface
 * @param port 0 to 65535; 0 picks a free port
 */
public record BindAddress(String host, int port) {

  /** What {@link #parse} accepts, for error messages. */
  public static final String FORMAT = "[host]:port with a port from 0 to 65535";

  public BindAddress {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port out of range: " + port);
    }
  }

  /**
   * Parses {@code [host]:port}.
   *
   * @throws IllegalArgumentException when the text is not of that form
   */
  public static BindAddress parse(String text) {
    String trimmed = text.strip();
    int colon = trimmed.lastIndexOf(':');
    if (colon < 0) {
      throw new IllegalArgumentException("missing ':' before the port: " + text);
    }
    String host = trimmed.substring(0, colon);
    String port = trimmed.substring(colon + 1);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
      if (host.isEmpty()) {
        throw new IllegalArgumentException("empty IPv6 address: " + text);
      }
    } else if (host.contains(":")) {
      throw new IllegalArgumentException("IPv6 addresses need brackets, as in [::1]:8081: " + text);
    }
    if (host.chars().anyMatch(Character::isWhitespace)) {
      throw new IllegalArgumentException("blank in host: " + text);
    }
    if (port.isEmpty() || !port.chars().allMatch(c -> c >= '0' && c <= '9') || port.length() > 5) {
      throw new IllegalArgumentException("port is not a number from 0 to 65535: " + text);
    }
    int number = Integer.parseInt(port);
    if (number > 65535) {
      throw new IllegalArgumentException("port is not a number from 0 to 65535: " + text);
    }
    return new BindAddress(host, number);
  }

  /** True when the address listens on every interface. */
  public boolean isWildcard() {
    return host.isEmpty();
  }

  /** The socket address to bind: the wildcard address when no host is given. */
  public InetSocketAddress toSocketAddress() {
    return isWildcard() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
  }

  /** Back to the flag's syntax, e.g. {@code :8081} or {@code [::1]:8081}. */
  @Override
  public String toString() {
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }
}
