package dev.openfga.operator.chart;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * values.schema.json rejects unknown keys and wrong types before anything renders, and says which
 * value is wrong.
 */
class ChartSchemaTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          replicaCont: 2                                   | Additional property replicaCont is not allowed
          image: {repo: x}                                 | Additional property repo is not allowed
          serviceAcount: {create: true}                    | Additional property serviceAcount is not allowed
          leaderElection: {enable: true}                   | Additional property enable is not allowed
          migrationJob: {backofLimit: 1}                   | Additional property backofLimit is not allowed
          metrics: {enabled: true, port: 9090}             | Additional property port is not allowed
          metrics: {serviceMonitor: {intervall: 1m}}       | Additional property intervall is not allowed
          rbac: {created: true}                            | Additional property created is not allowed
          prometheusRule: {enable: true}                   | Additional property enable is not allowed
          grafanaDashboard: {label: {}}                    | Additional property label is not allowed
          podDisruptionBudget: {minAvailible: 1}           | Additional property minAvailible is not allowed
          securityContext: {runAsNonroot: true}            | Additional property runAsNonroot is not allowed
          podSecurityContext: {seccompProfile: {typ: x}}   | Additional property typ is not allowed
          resources: {request: {cpu: 1}}                   | Additional property request is not allowed
          """)
  void unknownKeysAreRejected(String values, String message) {
    assertRejected(values, message);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          replicaCount: "2"                                  | replicaCount: Invalid type. Expected: integer, given: string
          replicaCount: 0                                    | replicaCount: Must be greater than or equal to 1
          image: {pullPolicy: Sometimes}                     | image.pullPolicy: image.pullPolicy must be one of the following
          image: {repository: ""}                            | image.repository: String length must be greater than or equal to 1
          image: {tag: 1.2}                                  | image.tag: Invalid type. Expected: string, given: number
          image: {digest: latest}                            | image.digest: Does not match pattern
          image: {digest: "sha256:abc123"}                   | image.digest: Does not match pattern
          image: {digest: "sha256:ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789"} | image.digest: Does not match pattern
          imagePullSecrets: [regcred]                        | imagePullSecrets.0: Invalid type. Expected: object, given: string
          serviceAccount: {create: "yes"}                    | serviceAccount.create: Invalid type. Expected: boolean, given: string
          watchNamespace: Team_A                             | watchNamespace: Does not match pattern
          watchNamespaces: team-a                            | watchNamespaces: Invalid type. Expected: array, given: string
          watchNamespaces: [team-a, team-a]                  | watchNamespaces: array items[0,1] must be unique
          watchAllNamespaces: "true"                         | watchAllNamespaces: Invalid type. Expected: boolean, given: string
          leaderElection: {enabled: 1}                       | leaderElection.enabled: Invalid type. Expected: boolean, given: integer
          migrationJob: {backoffLimit: -1}                   | migrationJob.backoffLimit: Must be greater than or equal to 0
          migrationJob: {activeDeadlineSeconds: 0}           | migrationJob.activeDeadlineSeconds: Must be greater than or equal to 1
          migrationJob: {ttlSecondsAfterFinished: 1.5}       | migrationJob.ttlSecondsAfterFinished: Invalid type. Expected: integer, given: number
          migrationJob: {ttlSecondsAfterFinished: 2147483648} | migrationJob.ttlSecondsAfterFinished: Must be less than or equal to
          retryCooldown: 1 minute                            | retryCooldown: Does not match pattern
          retryCooldown: 500ms                               | retryCooldown: Must not validate the schema (not)
          retryCooldown: 0.5s                                | retryCooldown: Must not validate the schema (not)
          retryCooldown: 0s                                  | retryCooldown: Does not match pattern
          retryCooldown: "0"                                 | retryCooldown: Does not match pattern
          retryCooldown: 60                                  | retryCooldown: Invalid type. Expected: string, given: integer
          failureLogLines: 1001                              | failureLogLines: Must be less than or equal to 1000
          failureLogLines: "20"                              | failureLogLines: Invalid type. Expected: integer, given: string
          storesAndModels: {modelTestMaxChecks: 0}           | storesAndModels.modelTestMaxChecks: Must be greater than or equal to 1
          storesAndModels: {modelTestMaxChecks: 100001}      | storesAndModels.modelTestMaxChecks: Must be less than or equal to 100000
          logFormat: yaml                                    | logFormat: logFormat must be one of the following: "text", "json"
          logLevel: verbose                                  | logLevel: logLevel must be one of the following
          metrics: {enabled: "false"}                        | metrics.enabled: Invalid type. Expected: boolean, given: string
          metrics: {serviceMonitor: {labels: {a: 1}}}        | metrics.serviceMonitor.labels.a: Invalid type. Expected: string, given: integer
          rbac: {create: "false"}                            | rbac.create: Invalid type. Expected: boolean, given: string
          prometheusRule: {waitingMinutes: 0}                | prometheusRule.waitingMinutes: Must be greater than or equal to 1
          prometheusRule: {operatorDownMinutes: 1.5}         | prometheusRule.operatorDownMinutes: Invalid type. Expected: integer, given: number
          prometheusRule: {labels: {a: 1}}                   | prometheusRule.labels.a: Invalid type. Expected: string, given: integer
          grafanaDashboard: {labels: {grafana_dashboard: 1}} | grafanaDashboard.labels.grafana_dashboard: Invalid type. Expected: string, given: integer
          grafanaDashboard: {enabled: "yes"}                 | grafanaDashboard.enabled: Invalid type. Expected: boolean, given: string
          resources: {limits: {memory: lots}}                | resources.limits.memory: Does not match pattern
          podDisruptionBudget: {minAvailable: "50"}          | podDisruptionBudget.minAvailable: Must validate one and only one schema
          podDisruptionBudget: {maxUnavailable: -1}          | podDisruptionBudget.maxUnavailable: Must validate one and only one schema
          podAnnotations: {a: true}                          | podAnnotations.a: Invalid type. Expected: string, given: boolean
          nodeSelector: [linux]                              | nodeSelector: Invalid type. Expected: object, given: array
          tolerations: {key: a}                              | tolerations: Invalid type. Expected: array, given: object
          tolerations: [{key: a, operator: Equals}]          | tolerations.0.operator: tolerations.0.operator must be one of the following
          affinity: {nodeAfinity: {}}                        | Additional property nodeAfinity is not allowed
          securityContext: {capabilities: {drop: [all]}}     | securityContext.capabilities.drop.0: Does not match pattern
          storesAndModels: {servers: http://openfga:8080}     | storesAndModels.servers: Invalid type. Expected: array, given: string
          storesAndModels: {servers: [openfga.openfga.svc:8080]} | storesAndModels.servers.0: Does not match pattern
          storesAndModels: {servers: ["http://a:8080,http://b:8080"]} | storesAndModels.servers.0: Does not match pattern
          storesAndModels: {servers: ["http://user@openfga:8080"]} | storesAndModels.servers.0: Does not match pattern
          storesAndModels: {servers: ["http://openfga:8080/?x=1"]} | storesAndModels.servers.0: Does not match pattern
          storesAndModels: {servers: [8080]}                  | storesAndModels.servers.0: Invalid type. Expected: string, given: integer
          """)
  void wrongTypesAndValuesAreRejected(String values, String message) {
    assertRejected(values, message);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "global: {imageRegistry: registry.example.com}",
        "enabled: true",
        "retryCooldown: 1h30m",
        "retryCooldown: \"90\"",
        "retryCooldown: 1m0s",
        "retryCooldown: 1.5m",
        "retryCooldown: 1500ms",
        "podDisruptionBudget: {enabled: true, minAvailable: \"50%\"}",
        "podDisruptionBudget: {enabled: true, minAvailable: null, maxUnavailable: 0}",
        "resources: {}",
        "resources: {requests: {cpu: 0.5, memory: 1Gi}}",
        "securityContext: {}",
        "storesAndModels: {enabled: true, servers: [http://openfga.openfga.svc:8080,"
            + " \"https://FGA.example.com:443/api/\"]}",
        "image: {tag: v1.2.3}",
        "image: {digest: \"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}"
      })
  void valuesAParentChartOrAUserMaySetAreAccepted(String values) {
    assertThat(chart().values(values + "\n").render().deployment()).isNotNull();
  }

  private static void assertRejected(String values, String message) {
    String error = chart().values(values + "\n").renderError();
    assertThat(error)
        .as("for values %s", values)
        .contains("values don't meet the specifications of the schema")
        .contains(message);
  }
}
