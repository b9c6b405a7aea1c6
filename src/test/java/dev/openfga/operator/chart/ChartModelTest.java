package dev.openfga.operator.chart;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every rendered manifest is a typed Kubernetes object with no field the Kubernetes model does not
 * know: what a typo in a template would produce, and what a real API server would reject or
 * silently drop.
 */
class ChartModelTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "every-option.yaml",
        "all-namespaces.yaml",
        "several-namespaces.yaml",
        "existing-service-account.yaml"
      })
  void everyRenderedManifestParsesIntoTheModelWithNoUnknownField(String valuesFile) {
    OperatorChart chart = chart();
    if (!valuesFile.isEmpty()) {
      chart.valuesFile(valuesFile);
    }
    var manifests = chart.render();

    assertThat(manifests.objects()).isNotEmpty();
    for (HasMetadata object : manifests.objects()) {
      String what = object.getKind() + "/" + object.getMetadata().getName();
      assertThat(object).as(what).isNotInstanceOf(GenericKubernetesResource.class);
      assertThat(UnknownFields.in(object)).as("unknown fields in %s", what).isEmpty();
      assertThat(object.getMetadata().getName()).as(what).hasSizeLessThanOrEqualTo(253);
    }
  }

  @Test
  void aMisspelledFieldIsFound() {
    Object parsed =
        new KubernetesSerialization()
            .unmarshal(
                """
                apiVersion: apps/v1
                kind: Deployment
                metadata:
                  name: x
                spec:
                  template:
                    spec:
                      containers:
                        - name: operator
                          readinesProbe: {}
                          resources:
                            limits:
                              memory: 1Gi
                """);

    assertThat(UnknownFields.in(parsed))
        .containsExactly(".spec.template.spec.containers[0]: [readinesProbe]");
  }
}
