package dev.openfga.operator.migration.rules;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class DeploymentSettingsTest {

  @Test
  void usesTheDefaultsWhenOnlyTheOptInIsSet() {
    DeploymentSettings s = DeploymentSettings.of(Fixtures.deployment().build());

    assertThat(s.optedIn()).isTrue();
    assertThat(s.containerName()).isEqualTo("openfga");
    assertThat(s.desiredReplicas()).isEmpty();
    assertThat(s.serviceAccount()).isEmpty();
    assertThat(s.retryAfter()).isEmpty();
    assertThat(s.problems()).isEmpty();
  }

  @Test
  void readsEveryAnnotation() {
    Deployment d =
        Fixtures.deployment()
            .annotation(Keys.CONTAINER_NAME, "authorization")
            .annotation(Keys.DESIRED_REPLICAS, "3")
            .annotation(Keys.MIGRATION_SERVICE_ACCOUNT, "openfga-migration")
            .annotation(Keys.RETRY_AFTER, "2026-01-01T00:01:00Z")
            .build();

    DeploymentSettings s = DeploymentSettings.of(d);

    assertThat(s.optedIn()).isTrue();
    assertThat(s.containerName()).isEqualTo("authorization");
    assertThat(s.desiredReplicas()).contains(3);
    assertThat(s.serviceAccount()).contains("openfga-migration");
    assertThat(s.retryAfter()).contains(Instant.parse("2026-01-01T00:01:00Z"));
    assertThat(s.problems()).isEmpty();
  }

  @ParameterizedTest(name = "desired-replicas \"{0}\" -> {1}")
  @CsvSource({"0, 0", "1, 1", "3, 3", "' 3 ', 3", "2147483647, 2147483647"})
  void acceptsEveryNonNegativeReplicaCount(String value, int replicas) {
    Deployment d = Fixtures.deployment().annotation(Keys.DESIRED_REPLICAS, value).build();

    assertThat(DeploymentSettings.of(d).desiredReplicas()).contains(replicas);
  }

  @Test
  void treatsAnEmptyReplicaCountAsAbsent() {
    Deployment d = Fixtures.deployment().annotation(Keys.DESIRED_REPLICAS, "").build();

    DeploymentSettings s = DeploymentSettings.of(d);

    assertThat(s.desiredReplicas()).isEmpty();
    assertThat(s.problems()).isEmpty();
  }

  @Test
  void readsARetryDeadlineWithAnOffsetAsUtc() {
    Deployment d =
        Fixtures.deployment().annotation(Keys.RETRY_AFTER, "2026-01-01T02:00:30.5+02:00").build();

    assertThat(DeploymentSettings.of(d).retryAfter())
        .contains(Instant.parse("2026-01-01T00:00:30Z"));
  }

  @ParameterizedTest(name = "migration-enabled \"{0}\" is not an opt-in")
  @ValueSource(strings = {"", "false", "True", "TRUE", "yes", "1", " true", "true "})
  void optsInOnlyWithExactlyTrue(String value) {
    Deployment d = Fixtures.deployment().annotation(Keys.MIGRATION_ENABLED, value).build();

    assertThat(DeploymentSettings.of(d).optedIn()).isFalse();
  }

  @Test
  void isNotOptedInWithoutTheAnnotation() {
    Deployment d = Fixtures.deployment().withoutAnnotation(Keys.MIGRATION_ENABLED).build();

    assertThat(DeploymentSettings.of(d).optedIn()).isFalse();
  }

  @ParameterizedTest(name = "{0}=\"{1}\"")
  @MethodSource("malformedAnnotations")
  void reportsOneProblemNamingTheAnnotationAndValue(String key, String value, String shown) {
    Deployment d = Fixtures.deployment().annotation(key, value).build();

    DeploymentSettings s = DeploymentSettings.of(d);

    assertThat(s.problems())
        .singleElement()
        .asString()
        .contains("annotation " + key + "=\"" + shown);
  }

  static Stream<Arguments> malformedAnnotations() {
    String longReplicas = "9".repeat(300);
    String longTime = "2026-01-01T00:00:00Z" + " ".repeat(50) + "x";
    String longContainer = "c".repeat(64);
    String longAccount = "s".repeat(254);
    return Stream.of(
        Arguments.of(Keys.DESIRED_REPLICAS, "three", "three\""),
        Arguments.of(Keys.DESIRED_REPLICAS, "-1", "-1\""),
        Arguments.of(Keys.DESIRED_REPLICAS, "1.5", "1.5\""),
        Arguments.of(Keys.DESIRED_REPLICAS, "2147483648", "2147483648\""),
        Arguments.of(Keys.DESIRED_REPLICAS, longReplicas, longReplicas.substring(0, 61) + "...\""),
        Arguments.of(Keys.RETRY_AFTER, "tomorrow", "tomorrow\""),
        Arguments.of(Keys.RETRY_AFTER, "2026-13-01T00:00:00Z", "2026-13-01T00:00:00Z\""),
        Arguments.of(Keys.RETRY_AFTER, "2026-01-01 00:00:00", "2026-01-01 00:00:00\""),
        Arguments.of(Keys.RETRY_AFTER, longTime, longTime.substring(0, 61) + "...\""),
        Arguments.of(Keys.CONTAINER_NAME, "", "\""),
        Arguments.of(Keys.CONTAINER_NAME, "  ", "  \""),
        Arguments.of(Keys.CONTAINER_NAME, "Not_A_Container", "Not_A_Container\""),
        Arguments.of(Keys.CONTAINER_NAME, longContainer, longContainer + "\""),
        Arguments.of(Keys.MIGRATION_SERVICE_ACCOUNT, "Invalid_SA", "Invalid_SA\""),
        Arguments.of(Keys.MIGRATION_SERVICE_ACCOUNT, "-starts-with-dash", "-starts-with-dash\""),
        Arguments.of(
            Keys.MIGRATION_SERVICE_ACCOUNT, longAccount, longAccount.substring(0, 61) + "...\""));
  }

  @Test
  void reportsEveryMalformedAnnotationAtOnce() {
    Deployment d =
        Fixtures.deployment()
            .annotation(Keys.DESIRED_REPLICAS, "three")
            .annotation(Keys.RETRY_AFTER, "tomorrow")
            .annotation(Keys.MIGRATION_SERVICE_ACCOUNT, "Invalid_SA")
            .build();

    DeploymentSettings s = DeploymentSettings.of(d);

    assertThat(s.problems())
        .hasSize(3)
        .anySatisfy(p -> assertThat(p).contains(Keys.DESIRED_REPLICAS))
        .anySatisfy(p -> assertThat(p).contains(Keys.RETRY_AFTER))
        .anySatisfy(p -> assertThat(p).contains(Keys.MIGRATION_SERVICE_ACCOUNT));
    assertThat(s.desiredReplicas()).isEmpty();
    assertThat(s.retryAfter()).isEmpty();
    assertThat(s.serviceAccount()).isEmpty();
    assertThat(s.containerName()).isEqualTo("openfga");
  }

  @Test
  void hasNoContainerToUseWhenTheContainerNameIsEmpty() {
    Deployment d = Fixtures.deployment().annotation(Keys.CONTAINER_NAME, "").build();

    assertThat(DeploymentSettings.of(d).containerName()).isNull();
  }

  @Test
  void findsTheServiceAccountOnlyWhenItIsAValidName() {
    Deployment valid =
        Fixtures.deployment().annotation(Keys.MIGRATION_SERVICE_ACCOUNT, "a.b-c").build();
    Deployment blank =
        Fixtures.deployment().annotation(Keys.MIGRATION_SERVICE_ACCOUNT, " ").build();

    assertThat(DeploymentSettings.of(valid).serviceAccount()).isEqualTo(Optional.of("a.b-c"));
    assertThat(DeploymentSettings.of(blank).serviceAccount()).isEmpty();
    assertThat(DeploymentSettings.of(blank).problems()).isEmpty();
  }

  @ParameterizedTest(name = "part-of={0}, component={1} -> {2}")
  @CsvSource(
      nullValues = "null",
      value = {
        "openfga, authorization-controller, true",
        "null, authorization-controller, false",
        "openfga, null, false",
        "other, authorization-controller, false",
        "openfga, migration, false",
        "OpenFGA, authorization-controller, false",
      })
  void requiresBothDiscoveryLabels(String partOf, String component, boolean discovered) {
    var fixture = Fixtures.deployment().withoutLabel(Keys.PART_OF).withoutLabel(Keys.COMPONENT);
    if (partOf != null) {
      fixture.label(Keys.PART_OF, partOf);
    }
    if (component != null) {
      fixture.label(Keys.COMPONENT, component);
    }

    assertThat(DeploymentSettings.isDiscovered(fixture.build())).isEqualTo(discovered);
  }
}
