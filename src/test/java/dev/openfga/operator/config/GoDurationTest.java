package dev.openfga.operator.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class GoDurationTest {

  static Stream<Arguments> durations() {
    return Stream.of(
        Arguments.of("90s", Duration.ofSeconds(90)),
        Arguments.of("2m", Duration.ofMinutes(2)),
        Arguments.of("1h30m", Duration.ofMinutes(90)),
        Arguments.of("1.5h", Duration.ofMinutes(90)),
        Arguments.of("1m30s", Duration.ofSeconds(90)),
        Arguments.of("250ms", Duration.ofMillis(250)),
        Arguments.of("10us", Duration.ofNanos(10_000)),
        Arguments.of("10µs", Duration.ofNanos(10_000)),
        Arguments.of("7ns", Duration.ofNanos(7)),
        Arguments.of(".5s", Duration.ofMillis(500)),
        Arguments.of("+5s", Duration.ofSeconds(5)),
        Arguments.of("0", Duration.ZERO),
        Arguments.of("60", Duration.ofSeconds(60)),
        Arguments.of(" 45 ", Duration.ofSeconds(45)),
        Arguments.of("2562047h", Duration.ofHours(2562047)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("durations")
  void parsesGoStyleDurationsAndPlainSeconds(String text, Duration expected) {
    assertThat(GoDuration.parse(text)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "\"{0}\"")
  @ValueSource(strings = {"", " ", "s", "-5s", "5x", "1h 30m", "1.5", "h1", "5S", "2562048h"})
  void rejectsWhatIsNotADuration(String text) {
    assertThatThrownBy(() -> GoDuration.parse(text)).isInstanceOf(IllegalArgumentException.class);
  }

  static Stream<Arguments> formats() {
    return Stream.of(
        Arguments.of(Duration.ZERO, "0s"),
        Arguments.of(Duration.ofSeconds(60), "1m0s"),
        Arguments.of(Duration.ofMinutes(90), "1h30m0s"),
        Arguments.of(Duration.ofSeconds(59), "59s"),
        Arguments.of(Duration.ofMillis(1500), "1.5s"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("formats")
  void formatsLikeGo(Duration duration, String expected) {
    assertThat(GoDuration.format(duration)).isEqualTo(expected);
    assertThat(GoDuration.parse(expected)).isEqualTo(duration);
  }
}
