package dev.openfga.operator.gitops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cel.bundle.Cel;
import dev.cel.bundle.CelFactory;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelOptions;
import dev.cel.common.types.SimpleType;
import dev.cel.extensions.CelExtensions;
import dev.cel.extensions.CelOptionalLibrary;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelRuntime;
import dev.openfga.operator.gitops.DeploymentStates.State;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Flux health check expressions of docs/gitops/flux-kustomization.yaml, evaluated with cel-java
 * the way Flux's kustomize-controller evaluates {@code spec.healthCheckExprs} (fluxcd/pkg
 * runtime/cel StatusEvaluator): the object's top-level fields are the variables (Flux parses
 * without type-checking; cel-java needs checked expressions, so they are declared {@code dyn});
 * optional syntax, strings, sets and encoders extensions and cross-type numeric comparisons are on;
 * an observed generation that differs from the generation is InProgress before any expression runs;
 * then inProgress, failed and current in that order, the first true one wins, and none true is
 * InProgress.
 */
class FluxHealthCheckTest {
  static final String KUSTOMIZATION_PATH = "docs/gitops/flux-kustomization.yaml";

  static final CelOptions OPTIONS =
      CelOptions.current()
          .enableOptionalSyntax(true)
          .enableHeterogeneousNumericComparisons(true)
          .build();

  static final Cel CEL =
      CelFactory.standardCelBuilder()
          .setOptions(OPTIONS)
          .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
          // cel-java runs only checked expressions: the top-level fields are declared dyn, which
          // checks no more than Flux's parse does (an undeclared one would fail there at run time).
          .addVar("apiVersion", SimpleType.DYN)
          .addVar("kind", SimpleType.DYN)
          .addVar("metadata", SimpleType.DYN)
          .addVar("spec", SimpleType.DYN)
          .addVar("status", SimpleType.DYN)
          .addCompilerLibraries(
              CelOptionalLibrary.INSTANCE,
              CelExtensions.strings(),
              CelExtensions.sets(OPTIONS),
              CelExtensions.encoders())
          .addRuntimeLibraries(
              CelOptionalLibrary.INSTANCE,
              CelExtensions.strings(),
              CelExtensions.sets(OPTIONS),
              CelExtensions.encoders())
          .build();

  static Stream<Named<State>> states() {
    return DeploymentStates.named(s -> s.description() + ": Flux reports " + s.fluxStatus());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("states")
  void reportsTheStatusOfEachState(State state) throws Exception {
    assertThat(evaluate(deploymentCheck(), DeploymentStates.fixture(state.fixture())))
        .isEqualTo(state.fluxStatus());
  }

  @Test
  void theKustomizationChecksAppsV1DeploymentsAndWaitsForThem() throws Exception {
    JsonNode spec =
        DeploymentStates.YAML
            .readTree(DeploymentStates.repositoryFile(KUSTOMIZATION_PATH))
            .path("spec");

    assertThat(spec.path("wait").asBoolean()).isTrue();
    assertThat(spec.path("healthCheckExprs")).hasSize(1);
    assertThat(deploymentCheck().path("apiVersion").asText()).isEqualTo("apps/v1");
    assertThat(deploymentCheck().path("kind").asText()).isEqualTo("Deployment");
  }

  @Test
  void theGuideIncludesTheKustomizationVerbatim() {
    assertThat(DeploymentStates.repositoryFile("docs/gitops.md"))
        .contains(DeploymentStates.repositoryFile(KUSTOMIZATION_PATH));
  }

  static JsonNode deploymentCheck() throws Exception {
    return DeploymentStates.YAML
        .readTree(DeploymentStates.repositoryFile(KUSTOMIZATION_PATH))
        .path("spec")
        .path("healthCheckExprs")
        .path(0);
  }

  /** fluxcd/pkg runtime/cel StatusEvaluator.Evaluate, on one Deployment. */
  static String evaluate(JsonNode check, JsonNode deployment) throws Exception {
    JsonNode observed = deployment.path("status").path("observedGeneration");
    JsonNode generation = deployment.path("metadata").path("generation");
    if (observed.isIntegralNumber()
        && generation.isIntegralNumber()
        && observed.longValue() != generation.longValue()) {
      return "InProgress";
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> variables = (Map<String, Object>) toCel(deployment);
    for (String[] expression :
        new String[][] {
          {"inProgress", "InProgress"}, {"failed", "Failed"}, {"current", "Current"}
        }) {
      String source = check.path(expression[0]).asText("");
      if (source.isEmpty()) {
        continue;
      }
      CelAbstractSyntaxTree ast = CEL.compile(source).getAst();
      CelRuntime.Program program = CEL.createProgram(ast);
      Object result = program.eval(variables);
      assertThat(result).as("%s is a boolean", expression[0]).isInstanceOf(Boolean.class);
      if ((Boolean) result) {
        return expression[1];
      }
    }
    return "InProgress";
  }

  /** JSON to CEL values, as the object's unstructured content: int64, string, bool, list, map. */
  static Object toCel(JsonNode node) {
    if (node.isObject()) {
      Map<String, Object> map = new LinkedHashMap<>();
      Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        map.put(field.getKey(), toCel(field.getValue()));
      }
      return map;
    }
    if (node.isArray()) {
      List<Object> list = new ArrayList<>();
      node.forEach(item -> list.add(toCel(item)));
      return list;
    }
    if (node.isIntegralNumber()) {
      return node.longValue();
    }
    if (node.isNumber()) {
      return node.doubleValue();
    }
    if (node.isBoolean()) {
      return node.booleanValue();
    }
    return Objects.requireNonNull(node.asText());
  }
}
