package dev.openfga.operator.chart;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The operator pod passes the "restricted" Pod Security Standard as the chart renders it. */
class ChartPodSecurityTest {

  @ParameterizedTest
  @ValueSource(strings = {"", "every-option.yaml", "all-namespaces.yaml"})
  void operatorPodIsRestricted(String valuesFile) {
    OperatorChart chart = chart();
    if (!valuesFile.isEmpty()) {
      chart.valuesFile(valuesFile);
    }
    var template = chart.render().deployment().getSpec().getTemplate();

    assertThat(RestrictedPodSecurity.violations(template)).isEmpty();
  }

  @Test
  void theRootFilesystemIsReadOnlyWithAWritableTmp() {
    var manifests = chart().render();

    assertThat(manifests.operator().getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(manifests.operator().getVolumeMounts())
        .singleElement()
        .satisfies(m -> assertThat(m.getMountPath()).isEqualTo("/tmp"));
    assertThat(manifests.deployment().getSpec().getTemplate().getSpec().getVolumes())
        .singleElement()
        .satisfies(v -> assertThat(v.getEmptyDir()).isNotNull());
  }

  /** The check is not vacuous: each weakening is caught (null removes a default). */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          securityContext: {allowPrivilegeEscalation: true}                           | does not set allowPrivilegeEscalation: false
          securityContext: {capabilities: {add: [NET_ADMIN]}}                         | adds capability NET_ADMIN
          securityContext: {capabilities: null}                                       | does not drop ALL capabilities
          securityContext: {privileged: true}                                         | is privileged
          securityContext: {runAsUser: 0}                                             | runAsUser is 0
          {podSecurityContext: {runAsNonRoot: null}, securityContext: {runAsNonRoot: null}} | does not run with runAsNonRoot: true
          podSecurityContext: {seccompProfile: null}                                  | has no seccompProfile
          podSecurityContext: {seccompProfile: {type: Unconfined}}                    | pod seccompProfile is Unconfined
          """)
  void aWeakenedSecurityContextIsCaught(String values, String violation) {
    var template = chart().values(values + "\n").render().deployment().getSpec().getTemplate();

    assertThat(RestrictedPodSecurity.violations(template)).anyMatch(v -> v.contains(violation));
  }
}
