package dev.openfga.operator.kube;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class NamesTest {

  private static final String DNS_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
  private static final String DNS_SUBDOMAIN = DNS_LABEL + "(\\." + DNS_LABEL + ")*";

  @ParameterizedTest
  @ValueSource(strings = {"openfga", "my-openfga", "a", "openfga.prod"})
  void keepsShortNamesUnchanged(String deployment) {
    assertThat(Names.job(deployment)).isEqualTo(deployment + "-migrate");
    assertThat(Names.statusConfigMap(deployment)).isEqualTo(deployment + "-migration-status");
  }

  @Test
  void keepsTheLongestNameThatStillFitsUnchanged() {
    String deployment = "a".repeat(63 - "-migrate".length());

    assertThat(Names.job(deployment)).isEqualTo(deployment + "-migrate").hasSize(63);
  }

  @Test
  void shortensTheJobNameOfASixtyThreeCharacterDeployment() {
    String deployment = "openfga-" + "x".repeat(55);

    String job = Names.job(deployment);

    assertThat(deployment).hasSize(63);
    assertThat(job)
        .hasSizeLessThanOrEqualTo(63)
        .matches(DNS_LABEL)
        .startsWith("openfga-xxxx")
        .endsWith("-" + Names.shortHash(deployment) + "-migrate");
  }

  @Test
  void keepsTheStatusNameOfASixtyThreeCharacterDeploymentWithinTheConfigMapLimit() {
    String deployment = "openfga-" + "x".repeat(55);

    assertThat(Names.statusConfigMap(deployment))
        .hasSizeLessThanOrEqualTo(253)
        .isEqualTo(deployment + "-migration-status");
  }

  @Test
  void shortensTheStatusNameOfTheLongestPossibleDeployment() {
    String deployment = ("a".repeat(62) + ".").repeat(4) + "b";

    String status = Names.statusConfigMap(deployment);

    assertThat(deployment).hasSize(253);
    assertThat(status)
        .hasSizeLessThanOrEqualTo(253)
        .matches(DNS_SUBDOMAIN)
        .endsWith("-" + Names.shortHash(deployment) + "-migration-status");
  }

  @Test
  void shortensDeterministically() {
    String deployment = "openfga-" + "y".repeat(60);

    assertThat(Names.job(deployment)).isEqualTo(Names.job(deployment));
    assertThat(Names.statusConfigMap(deployment + "z".repeat(200)))
        .isEqualTo(Names.statusConfigMap(deployment + "z".repeat(200)));
  }

  @Test
  void givesDifferentDeploymentsWithTheSamePrefixDifferentNames() {
    String prefix = "openfga-tenant-" + "p".repeat(45);
    String first = prefix + "-a1";
    String second = prefix + "-b2";

    assertThat(Names.job(first)).isNotEqualTo(Names.job(second));
    assertThat(Names.job(first).substring(0, 40)).isEqualTo(Names.job(second).substring(0, 40));
  }

  @Test
  void neverLeavesADashOrDotBeforeTheHash() {
    String deployment = "a".repeat(45) + "-." + "b".repeat(20);

    String job = Names.job(deployment);

    assertThat(job).hasSizeLessThanOrEqualTo(63).matches(DNS_LABEL).doesNotContain("--", "-.");
  }

  @ParameterizedTest
  @ValueSource(strings = {"-", "."})
  void givesEventsOfLongDeploymentsValidNamesWhereverTheCutFalls(String separator) {
    // valid Deployment names with the separator where a cut may fall: right after it (the old
    // rule cut at 200 characters; shortening keeps 227)
    for (int at : new int[] {199, 226}) {
      for (int length : new int[] {220, 237, 253}) {
        if (at + 2 > length) {
          continue;
        }
        String deployment = "a".repeat(at) + separator + "b".repeat(length - at - 1);

        String event = Names.event(deployment, "uid/MigrationStarted/started/v1.9.0");

        assertThat(event)
            .as("event name for a Deployment of %d characters", length)
            .hasSizeLessThanOrEqualTo(253)
            .matches(DNS_SUBDOMAIN);
        assertThat(Names.event(deployment, "another key")).isNotEqualTo(event);
      }
    }
  }

  @Test
  void keepsTheEventNameOfAShortDeploymentReadable() {
    assertThat(Names.event("openfga", "k"))
        .startsWith("openfga.")
        .hasSize("openfga.".length() + 16);
  }

  @Test
  void hashesWithEightHexCharacters() {
    assertThat(Names.shortHash("openfga")).matches("[0-9a-f]{8}");
  }
}
