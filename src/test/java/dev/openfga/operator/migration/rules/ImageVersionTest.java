package dev.openfga.operator.migration.rules;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class ImageVersionTest {

  /** A Kubernetes label value: at most 63 characters, alphanumeric at both ends. */
  private static final String LABEL_VALUE = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

  private static final String DIGEST =
      "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    // upstream's TestExtractImageTag table
    "openfga/openfga:v1.14.0, v1.14.0",
    "openfga/openfga:latest, latest",
    "openfga/openfga, latest",
    "ghcr.io/openfga/openfga:v1.14.0, v1.14.0",
    "registry.example.com:5000/openfga/openfga:v1.14.0, v1.14.0",
    "openfga/openfga@sha256:abcdef1234567890, sha256:abcdef1234567890",
    // a tag and a digest: the digest wins (what actually runs)
    "openfga/openfga:v1.14.0@sha256:abcdef1234567890, sha256:abcdef1234567890",
    "ghcr.io/openfga/openfga:v1.14.0@sha256:abcdef1234567890, sha256:abcdef1234567890",
    // a registry port is not a tag
    "registry.example.com:5000/openfga/openfga, latest",
    "localhost:5000/openfga, latest",
    "localhost:5000/openfga:v1.9.5, v1.9.5",
    "localhost/openfga:v1.9.5, v1.9.5",
    "openfga, latest",
    "openfga:v1.18.3, v1.18.3",
    "docker.io/library/openfga:V1_RC-2, V1_RC-2",
  })
  void derivesTheVersionFromTheImageReference(String image, String version) {
    assertThat(ImageVersion.of(image)).contains(version);
  }

  @ParameterizedTest(name = "\"{0}\" cannot be parsed")
  @NullAndEmptySource
  @ValueSource(
      strings = {
        " ",
        " openfga/openfga:v1.14.0",
        "openfga/openfga:v1.14.0 ",
        "openfga/openfga:",
        "openfga/openfga:bad tag",
        "openfga/openfga:-leading-dash",
        "openfga/openfga@",
        "openfga/openfga@sha256",
        "openfga/openfga@sha256:",
        "openfga/openfga:v1@sha256:not hex",
        ":v1.14.0",
        "/openfga:v1.14.0",
        "openfga//openfga:v1.14.0",
        "OpenFGA/OpenFGA:v1.14.0",
        "openfga/openfga/:v1.14.0",
        "registry.example.com:port/openfga:v1.14.0",
        "@",
        "@@",
        ":",
        "/",
        "::",
        "openfga@sha256:abc@sha256:def",
        "openfga/openfga:v1\n",
      })
  void rejectsReferencesThatCannotBeParsed(String image) {
    assertThat(ImageVersion.of(image)).isEmpty();
  }

  @Test
  void acceptsTheLongestTagTheRegistryAllows() {
    String tag = "v" + "1".repeat(127);
    assertThat(ImageVersion.of("openfga/openfga:" + tag)).contains(tag);
    assertThat(ImageVersion.of("openfga/openfga:" + tag + "1")).isEmpty();
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "v1.14.0, v1.14.0",
    "latest, latest",
    "sha256:abcdef1234567890, sha256_abcdef1234567890",
    "_v1_, v1",
    "v1.0-, v1.0",
  })
  void sanitisesVersionsIntoLabelValues(String version, String label) {
    assertThat(ImageVersion.labelValue(version)).isEqualTo(label);
  }

  @Test
  void cutsAFullDigestToSixtyThreeCharacters() {
    String label = ImageVersion.labelValue(DIGEST);

    assertThat(label).hasSize(63).startsWith("sha256_0123456789abcdef").matches(LABEL_VALUE);
  }

  @Test
  void trimsACutThatWouldEndInAPunctuationMark() {
    String version = "a".repeat(62) + ".b";

    assertThat(ImageVersion.labelValue(version)).isEqualTo("a".repeat(62));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("versionsOfParsableImages")
  void everyVersionOfAParsableImageGivesAValidLabelValue(String image) {
    String version = ImageVersion.of(image).orElseThrow();

    String label = ImageVersion.labelValue(version);

    assertThat(label).hasSizeLessThanOrEqualTo(63).matches(LABEL_VALUE);
  }

  static Stream<String> versionsOfParsableImages() {
    return Stream.of(
        "openfga/openfga:v1.14.0",
        "openfga/openfga@" + DIGEST,
        "openfga/openfga:v1@sha512:" + "ab".repeat(64),
        "openfga/openfga@sha256+b64u:LCa0a2j_xo_5m0U8HTBBNBNCLXBkg7-g-YpeiGJm564",
        "openfga/openfga:" + "x".repeat(128),
        "openfga/openfga:___",
        "openfga/openfga:v1.-._.",
        "openfga/openfga:" + "a".repeat(62) + "-" + "b".repeat(10));
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource({
    "v1.8.16, v1.10.0, -1",
    "v1.10.0, v1.8.16, 1",
    "1.10.0, v1.10.0, 0",
    "v1.10.0-rc.1, v1.10.0, -1",
    "v1.10.0-rc.2, v1.10.0-rc.10, -1",
    "v1.10.0-alpha, v1.10.0-alpha.1, -1",
    "v1.10.0+build.5, v1.10.0, 0",
    "v2.0.0, v1.99.99, 1",
  })
  void ordersSemanticVersions(String a, String b, int sign) {
    assertThat(ImageVersion.compare(a, b))
        .hasValueSatisfying(c -> assertThat(Integer.signum(c)).isEqualTo(sign));
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource({
    "latest, v1.10.0",
    "v1.10, v1.10.0",
    "sha256:0123456789abcdef, v1.10.0",
    "v1.10.0, v01.2.3",
  })
  void doesNotOrderWhatIsNotASemanticVersion(String a, String b) {
    assertThat(ImageVersion.compare(a, b)).isEmpty();
  }
}
