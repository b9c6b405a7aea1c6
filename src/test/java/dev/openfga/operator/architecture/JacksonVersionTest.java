package dev.openfga.operator.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * One Jackson on the class path: openfga-language declares an older databind and YAML module than
 * fabric8's jackson-core, and Maven's nearest-wins would mix them (the pom pins them).
 */
class JacksonVersionTest {
  @Test
  void coreDatabindAndYamlAreTheSameVersion() {
    String core = com.fasterxml.jackson.core.json.PackageVersion.VERSION.toString();
    assertThat(com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION.toString())
        .isEqualTo(core);
    assertThat(com.fasterxml.jackson.dataformat.yaml.PackageVersion.VERSION.toString())
        .isEqualTo(core);
    assertThat(com.fasterxml.jackson.datatype.jsr310.PackageVersion.VERSION.toString())
        .isEqualTo(core);
    assertThat(com.fasterxml.jackson.module.blackbird.PackageVersion.VERSION.toString())
        .isEqualTo(core);
  }
}
