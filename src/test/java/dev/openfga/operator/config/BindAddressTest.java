package dev.openfga.operator.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class BindAddressTest {

  static Stream<Arguments> addresses() {
    return Stream.of(
        Arguments.of(":8081", "", 8081, ":8081"),
        Arguments.of("0.0.0.0:8081", "0.0.0.0", 8081, "0.0.0.0:8081"),
        Arguments.of("127.0.0.1:0", "127.0.0.1", 0, "127.0.0.1:0"),
        Arguments.of("localhost:65535", "localhost", 65535, "localhost:65535"),
        Arguments.of("[::1]:8080", "::1", 8080, "[::1]:8080"),
        Arguments.of(" :9090 ", "", 9090, ":9090"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("addresses")
  void parsesGoStyleListenAddresses(String text, String host, int port, String shown) {
    BindAddress address = BindAddress.parse(text);

    assertThat(address.host()).isEqualTo(host);
    assertThat(address.port()).isEqualTo(port);
    assertThat(address).hasToString(shown);
  }

  @ParameterizedTest(name = "\"{0}\"")
  @ValueSource(
      strings = {
        "",
        "8080",
        ":",
        ":http",
        ":-1",
        ":65536",
        ":123456",
        "::1:8080",
        "[]:80",
        "a b:80"
      })
  void rejectsMalformedAddresses(String text) {
    assertThatThrownBy(() -> BindAddress.parse(text)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void emptyHostListensOnEveryInterface() {
    assertThat(BindAddress.parse(":8081").toSocketAddress().getAddress().isAnyLocalAddress())
        .isTrue();
    assertThat(BindAddress.parse(":8081").isWildcard()).isTrue();
  }
}
