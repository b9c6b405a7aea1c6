package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.chart.OperatorChart;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The chart's RBAC objects of one release, applied as an upgrade applies them (the same names
 * patched in place) while its values move between modes: the API server refuses a RoleBinding whose
 * roleRef changes, so a chart that changed a binding's roleRef between modes would make {@code helm
 * upgrade} from one watched namespace to several fail.
 */
class ChartUpgradeIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  @Test
  void oneWatchedNamespaceUpgradesToSeveralAndBack() {
    String home = cluster.namespace();
    String apps = cluster.newNamespace(home + "-apps", Map.of());
    String one = "watchNamespace: " + home + "\n";
    String several = one + "watchNamespaces: [" + apps + "]\n";

    // a binding as an older chart made it for several namespaces, in the home namespace
    cluster
        .client()
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName("openfga-operator")
                .withNamespace(home)
                .endMetadata()
                .withNewRoleRef(
                    "rbac.authorization.k8s.io", "ClusterRole", home + "-openfga-operator")
                .build())
        .create();

    for (String values : List.of(one, several, one)) {
      for (HasMetadata object : rbac(values)) {
        cluster.client().resource(object).forceConflicts().serverSideApply();
      }
    }

    // each mode's bindings name the role they were rendered with
    for (String values : List.of(one, several)) {
      for (HasMetadata object : rbac(values)) {
        if (object instanceof RoleBinding binding) {
          RoleBinding live =
              cluster
                  .client()
                  .rbac()
                  .roleBindings()
                  .inNamespace(binding.getMetadata().getNamespace())
                  .withName(binding.getMetadata().getName())
                  .get();
          assertThat(live.getRoleRef()).isEqualTo(binding.getRoleRef());
        }
      }
    }
  }

  /** The RBAC objects the chart renders for the release in the class's namespace. */
  private static List<HasMetadata> rbac(String values) {
    OperatorChart.Manifests chart =
        OperatorChart.chart().namespace(cluster.namespace()).values(values).render();
    List<HasMetadata> objects = new ArrayList<>();
    objects.addAll(chart.all(Role.class));
    objects.addAll(chart.all(ClusterRole.class));
    objects.addAll(chart.all(RoleBinding.class));
    objects.addAll(chart.all(ClusterRoleBinding.class));
    return objects;
  }
}
