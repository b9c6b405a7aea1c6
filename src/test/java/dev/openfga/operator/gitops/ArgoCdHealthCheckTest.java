package dev.openfga.operator.gitops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.gitops.DeploymentStates.State;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.luaj.vm2.Globals;
import org.luaj.vm2.LoadState;
import org.luaj.vm2.LuaTable;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.compiler.LuaC;
import org.luaj.vm2.lib.PackageLib;
import org.luaj.vm2.lib.TableLib;
import org.luaj.vm2.lib.jse.JseBaseLib;

/**
 * The Argo CD health check of docs/gitops/argocd-deployment-health.lua, run under Lua 5.1 (LuaJ)
 * the way Argo CD runs it: the Deployment as the global {@code obj} (JSON numbers as Lua numbers,
 * arrays as 1-based tables), only the base, package and table libraries loaded, and the table the
 * script returns read as {@code {status, message}}.
 */
class ArgoCdHealthCheckTest {
  static final String SCRIPT_PATH = "docs/gitops/argocd-deployment-health.lua";
  static final String PATCH_PATH = "docs/gitops/argocd-cm-patch.yaml";
  static final String GUIDE_PATH = "docs/gitops.md";
  static final String HEALTH_KEY = "resource.customizations.health.apps_Deployment";

  /** The statuses Argo CD accepts from a health script; anything else becomes Unknown. */
  static final Set<String> ARGO_STATUSES =
      Set.of("Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown");

  record Health(String status, String message) {}

  static Stream<Named<State>> states() {
    return DeploymentStates.named(s -> s.description() + ": Argo CD reports " + s.argoStatus());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("states")
  void reportsTheHealthOfEachState(State state) {
    Health health = evaluate(DeploymentStates.fixture(state.fixture()));

    assertThat(health.status()).isIn(ARGO_STATUSES).isEqualTo(state.argoStatus());
    assertThat(health.message()).isEqualTo(state.argoMessage());
  }

  @Test
  void aDeploymentWithoutStatusOrAnnotationsIsWaitingForItsFirstRollout() throws Exception {
    JsonNode created =
        DeploymentStates.YAML.readTree(
            """
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: web, namespace: shop, generation: 1}
            spec: {replicas: 1}
            """);

    assertThat(evaluate(created))
        .isEqualTo(
            new Health(
                "Progressing",
                "Waiting for rollout to finish: observed deployment generation less than"
                    + " desired generation"));
  }

  @Test
  void theGuideIncludesTheScriptVerbatim() {
    String script = DeploymentStates.repositoryFile(SCRIPT_PATH);

    assertThat(DeploymentStates.repositoryFile(GUIDE_PATH)).contains(script);
  }

  @Test
  void theArgocdCmPatchCarriesTheScriptVerbatimAndTheGuideIncludesThePatch() throws Exception {
    String patch = DeploymentStates.repositoryFile(PATCH_PATH);

    JsonNode data = DeploymentStates.YAML.readTree(patch).path("data");
    assertThat(data.path(HEALTH_KEY).asText())
        .isEqualTo(DeploymentStates.repositoryFile(SCRIPT_PATH));
    assertThat(DeploymentStates.repositoryFile(GUIDE_PATH)).contains(patch);
  }

  /** Runs the script on one Deployment. */
  static Health evaluate(JsonNode deployment) {
    return evaluate(SCRIPT_PATH, deployment);
  }

  /** Runs the health script of the repository file {@code scriptPath} on one object. */
  static Health evaluate(String scriptPath, JsonNode object) {
    Globals globals = new Globals();
    globals.load(new JseBaseLib());
    globals.load(new PackageLib());
    globals.load(new TableLib());
    LoadState.install(globals);
    LuaC.install(globals);
    globals.set("obj", toLua(object));

    LuaValue result =
        globals.load(DeploymentStates.repositoryFile(scriptPath), "health.lua").call();

    assertThat(result.istable()).as("the script returns a table").isTrue();
    LuaValue status = result.get("status");
    LuaValue message = result.get("message");
    return new Health(
        status.isnil() ? "" : status.tojstring(), message.isnil() ? "" : message.tojstring());
  }

  /** JSON to Lua values, as Argo CD converts the live object for its Lua VM. */
  static LuaValue toLua(JsonNode node) {
    if (node == null || node.isNull() || node.isMissingNode()) {
      return LuaValue.NIL;
    }
    if (node.isObject()) {
      LuaTable table = new LuaTable();
      Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        table.set(field.getKey(), toLua(field.getValue()));
      }
      return table;
    }
    if (node.isArray()) {
      LuaTable table = new LuaTable();
      for (int i = 0; i < node.size(); i++) {
        table.set(i + 1, toLua(node.get(i)));
      }
      return table;
    }
    if (node.isNumber()) {
      return LuaValue.valueOf(node.doubleValue());
    }
    if (node.isBoolean()) {
      return LuaValue.valueOf(node.booleanValue());
    }
    return LuaValue.valueOf(node.asText());
  }
}
