package dev.openfga.operator.gitops;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.gitops.ArgoCdHealthCheckTest.Health;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The health checks of the operator's own resources (FGAStore, FGAModel, FGATuples) for Argo CD
 * (docs/gitops/argocd-openfga-resources-health.lua, run as {@link ArgoCdHealthCheckTest} runs Lua)
 * and Flux (the expressions of docs/gitops/flux-openfga-resources-kustomization.yaml, evaluated as
 * {@link FluxHealthCheckTest} does): what each makes of a resource in each state, and that
 * docs/gitops.md carries the files verbatim.
 */
class OpenFgaResourceHealthTest {
  static final String SCRIPT_PATH = "docs/gitops/argocd-openfga-resources-health.lua";
  static final String PATCH_PATH = "docs/gitops/argocd-cm-patch-openfga-resources.yaml";
  static final String KUSTOMIZATION_PATH = "docs/gitops/flux-openfga-resources-kustomization.yaml";

  /**
   * One state of a resource.
   *
   * @param status its {@code status} as YAML, or null for none (just created)
   * @param argo Argo CD's health status and message
   * @param flux kstatus' status under the expressions, or null when Flux cannot evaluate them (no
   *     {@code status} at all: the variable is undefined and Flux waits, as for InProgress)
   */
  record State(
      String description, String kind, long generation, String status, Health argo, String flux) {
    JsonNode object() throws Exception {
      return DeploymentStates.YAML.readTree(
          "apiVersion: openfga.dev/v1alpha1\nkind: "
              + kind
              + "\nmetadata: {name: app, namespace: shop, generation: "
              + generation
              + "}\nspec: {storeRef: {name: app}}\n"
              + (status == null ? "" : "status:\n" + status.indent(2)));
    }
  }

  private static String conditions(String... conditions) {
    StringBuilder out = new StringBuilder("observedGeneration: 1\nconditions:\n");
    for (String c : conditions) {
      out.append("  - ").append(c).append('\n');
    }
    return out.toString();
  }

  private static final String TUPLES_READY =
      "{type: Ready, status: 'True', reason: TuplesReady, message: 3 tuples in store 01J}";
  private static final String TUPLES_IN_SYNC =
      "{type: InSync, status: 'True', reason: TuplesInSync, message: every tuple is in the store}";

  static final List<State> ALL =
      List.of(
          new State(
              "FGATuples written and verified",
              "FGATuples",
              1,
              conditions(TUPLES_READY, TUPLES_IN_SYNC),
              new Health("Healthy", "TuplesReady: 3 tuples in store 01J"),
              "Current"),
          new State(
              "FGATuples whose FGAStore is not ready",
              "FGATuples",
              1,
              conditions(
                  "{type: Ready, status: 'False', reason: StoreNotReady, message: FGAStore app}"),
              new Health("Progressing", "StoreNotReady: FGAStore app"),
              "InProgress"),
          new State(
              "FGATuples waiting for its FGAModel's model id",
              "FGATuples",
              1,
              conditions("{type: Ready, status: 'False', reason: WaitingForModel}"),
              new Health("Progressing", "WaitingForModel"),
              "InProgress"),
          new State(
              "FGATuples whose tuples OpenFGA refused",
              "FGATuples",
              1,
              conditions(
                  "{type: Ready, status: 'False', reason: InvalidTuples, message: 'doc:1#viewer@user:anne: no such relation'}",
                  "{type: InSync, status: 'False', reason: TuplesMissing}"),
              new Health("Degraded", "InvalidTuples: doc:1#viewer@user:anne: no such relation"),
              "Failed"),
          new State(
              "FGATuples whose ownership record is another's",
              "FGATuples",
              1,
              conditions(
                  "{type: Ready, status: 'False', reason: RecordConflict, message: app-tuples-record}"),
              new Health("Degraded", "RecordConflict: app-tuples-record"),
              "Failed"),
          new State(
              "FGATuples whose tuple was deleted out of band (written again)",
              "FGATuples",
              1,
              conditions(
                  TUPLES_READY,
                  "{type: InSync, status: 'False', reason: TuplesMissing, message: 1 missing}"),
              new Health("Progressing", "TuplesMissing: 1 missing"),
              "InProgress"),
          new State(
              "FGATuples ready, not verified yet",
              "FGATuples",
              1,
              conditions(TUPLES_READY),
              new Health("Progressing", "Waiting for the operator to set InSync"),
              "InProgress"),
          new State(
              "FGATuples with a status and no condition yet",
              "FGATuples",
              1,
              "observedGeneration: 1\n",
              new Health("Progressing", "Waiting for the operator to set Ready"),
              "InProgress"),
          new State(
              "FGATuples whose new spec the operator has not seen",
              "FGATuples",
              2,
              conditions(TUPLES_READY, TUPLES_IN_SYNC),
              new Health("Progressing", "Waiting for the operator to reconcile the latest spec"),
              "InProgress"),
          new State(
              "FGATuples just created",
              "FGATuples",
              1,
              null,
              new Health("Progressing", "Waiting for the operator to reconcile the latest spec"),
              null),
          new State(
              "an FGAStore ready",
              "FGAStore",
              1,
              conditions("{type: Ready, status: 'True', reason: StoreReady}"),
              new Health("Healthy", "StoreReady"),
              "Current"),
          new State(
              "an FGAStore waiting for its database's first migration",
              "FGAStore",
              1,
              conditions("{type: Ready, status: 'False', reason: WaitingForMigration}"),
              new Health("Progressing", "WaitingForMigration"),
              "InProgress"),
          new State(
              "an FGAStore naming a server it may not",
              "FGAStore",
              1,
              conditions(
                  "{type: Ready, status: 'False', reason: ServerNotAllowed, message: not listed}"),
              new Health("Degraded", "ServerNotAllowed: not listed"),
              "Failed"),
          new State(
              "an FGAModel in sync",
              "FGAModel",
              1,
              conditions(
                  "{type: Ready, status: 'True', reason: ModelReady}",
                  "{type: InSync, status: 'True', reason: ModelInSync}"),
              new Health("Healthy", "ModelReady"),
              "Current"),
          new State(
              "an FGAModel with a newer model in its store",
              "FGAModel",
              1,
              conditions(
                  "{type: Ready, status: 'True', reason: ModelReady}",
                  "{type: InSync, status: 'False', reason: NewerModelInStore, message: 01K}"),
              new Health("Degraded", "NewerModelInStore: 01K"),
              "Failed"),
          new State(
              "an FGAModel whose FGAStore is not ready",
              "FGAModel",
              1,
              conditions("{type: Ready, status: 'False', reason: StoreNotReady}"),
              new Health("Progressing", "StoreNotReady"),
              "InProgress"));

  static Stream<Named<State>> states() {
    return ALL.stream().map(s -> Named.of(s.description(), s));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("states")
  void argoCdReportsTheHealthOfEachState(State state) throws Exception {
    Health health = ArgoCdHealthCheckTest.evaluate(SCRIPT_PATH, state.object());

    assertThat(health.status()).isIn(ArgoCdHealthCheckTest.ARGO_STATUSES);
    assertThat(health).isEqualTo(state.argo());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("states")
  void fluxReportsTheStatusOfEachState(State state) throws Exception {
    if (state.flux() == null) {
      assertThat(state.object().has("status")).as("only a resource without status").isFalse();
      return;
    }
    assertThat(FluxHealthCheckTest.evaluate(check(state.kind()), state.object()))
        .isEqualTo(state.flux());
  }

  @Test
  void everyKindOfTheChartHasItsArgoCdKeyAndItsFluxEntry() throws Exception {
    List<String> kinds =
        chart()
            .values(
                "storesAndModels: {enabled: true, servers: [http://openfga.openfga.svc:8080]}\n")
            .render()
            .all(CustomResourceDefinition.class)
            .stream()
            .map(c -> c.getSpec().getGroup() + "_" + c.getSpec().getNames().getKind())
            .toList();
    JsonNode data =
        DeploymentStates.YAML.readTree(DeploymentStates.repositoryFile(PATCH_PATH)).path("data");
    List<String> keys = new ArrayList<>();
    data.fieldNames().forEachRemaining(keys::add);
    JsonNode checks = kustomization().path("healthCheckExprs");

    assertThat(kinds).hasSize(3);
    assertThat(keys)
        .containsExactlyInAnyOrderElementsOf(
            kinds.stream().map(k -> "resource.customizations.health." + k).toList());
    for (String key : keys) {
      assertThat(data.path(key).asText())
          .as(key)
          .isEqualTo(DeploymentStates.repositoryFile(SCRIPT_PATH));
    }
    List<String> fluxKinds = new ArrayList<>();
    checks.forEach(
        c -> {
          assertThat(c.path("apiVersion").asText()).isEqualTo("openfga.dev/v1alpha1");
          fluxKinds.add("openfga.dev_" + c.path("kind").asText());
        });
    assertThat(fluxKinds).containsExactlyInAnyOrderElementsOf(kinds);
    assertThat(kustomization().path("wait").asBoolean()).isTrue();
  }

  @Test
  void theGuideIncludesTheScriptThePatchAndTheKustomizationVerbatim() {
    String guide = DeploymentStates.repositoryFile(ArgoCdHealthCheckTest.GUIDE_PATH);

    assertThat(guide)
        .contains(DeploymentStates.repositoryFile(SCRIPT_PATH))
        .contains(DeploymentStates.repositoryFile(PATCH_PATH))
        .contains(DeploymentStates.repositoryFile(KUSTOMIZATION_PATH));
  }

  private static JsonNode kustomization() throws Exception {
    return DeploymentStates.YAML
        .readTree(DeploymentStates.repositoryFile(KUSTOMIZATION_PATH))
        .path("spec");
  }

  private static JsonNode check(String kind) throws Exception {
    for (JsonNode c : kustomization().path("healthCheckExprs")) {
      if (c.path("kind").asText().equals(kind)) {
        return c;
      }
    }
    throw new AssertionError("no health check expressions for " + kind);
  }
}
