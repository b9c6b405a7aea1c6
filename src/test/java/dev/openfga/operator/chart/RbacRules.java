package dev.openfga.operator.chart;

import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleRef;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * What the rendered Roles, ClusterRoles and their bindings let one ServiceAccount do, evaluated as
 * the Kubernetes RBAC authorizer does (a RoleBinding grants in its namespace, a ClusterRoleBinding
 * everywhere; {@code resourceNames} limit a rule to named objects).
 */
final class RbacRules {

  /** A rule and where it applies: a namespace, or everywhere when {@code namespace} is null. */
  record Grant(String namespace, PolicyRule rule, String from) {

    boolean allows(ApiCall call) {
      return (namespace == null || namespace.equals(call.namespace())) && matches(call);
    }

    /** The rule matches the call, wherever it is. */
    boolean matches(ApiCall call) {
      return matches(rule.getApiGroups(), call.group())
          && matches(rule.getResources(), call.resource())
          && matches(rule.getVerbs(), call.verb())
          && (empty(rule.getResourceNames())
              || (call.name() != null && rule.getResourceNames().contains(call.name())));
    }

    private static boolean matches(List<String> allowed, String value) {
      return allowed != null && (allowed.contains(value) || allowed.contains("*"));
    }
  }

  private final List<Grant> grants;

  private RbacRules(List<Grant> grants) {
    this.grants = grants;
  }

  /** The grants of the ServiceAccount in the rendered manifests. */
  static RbacRules of(OperatorChart.Manifests manifests, String account, String accountNamespace) {
    List<Grant> grants = new ArrayList<>();
    for (RoleBinding binding : manifests.all(RoleBinding.class)) {
      if (!bindsTo(binding.getSubjects(), account, accountNamespace)) {
        continue;
      }
      String namespace = binding.getMetadata().getNamespace();
      String from = "RoleBinding " + namespace + "/" + binding.getMetadata().getName();
      rules(manifests, binding.getRoleRef(), namespace)
          .forEach(r -> grants.add(new Grant(namespace, r, from)));
    }
    for (ClusterRoleBinding binding : manifests.all(ClusterRoleBinding.class)) {
      if (bindsTo(binding.getSubjects(), account, accountNamespace)) {
        String from = "ClusterRoleBinding " + binding.getMetadata().getName();
        rules(manifests, binding.getRoleRef(), null)
            .forEach(r -> grants.add(new Grant(null, r, from)));
      }
    }
    return new RbacRules(List.copyOf(grants));
  }

  List<Grant> grants() {
    return grants;
  }

  boolean allows(ApiCall call) {
    return grants.stream().anyMatch(g -> g.allows(call));
  }

  /** The rules that apply in a namespace (what a SelfSubjectRulesReview there would answer). */
  List<PolicyRule> rulesIn(String namespace) {
    return grants.stream()
        .filter(g -> g.namespace() == null || g.namespace().equals(namespace))
        .map(Grant::rule)
        .toList();
  }

  /**
   * Every verb on every resource of every grant, each as the one-verb rule it stands for, with the
   * grant it comes from: to be matched against the calls made.
   */
  List<Grant> singleVerbGrants() {
    List<Grant> single = new ArrayList<>();
    for (Grant grant : grants) {
      PolicyRule rule = grant.rule();
      for (String group : rule.getApiGroups()) {
        for (String resource : rule.getResources()) {
          for (String verb : rule.getVerbs()) {
            PolicyRule one = new PolicyRule();
            one.setApiGroups(List.of(group));
            one.setResources(List.of(resource));
            one.setVerbs(List.of(verb));
            one.setResourceNames(rule.getResourceNames());
            single.add(new Grant(grant.namespace(), one, grant.from()));
          }
        }
      }
    }
    return single;
  }

  /** The same grants with the verb of a single-verb grant taken out of its rule. */
  RbacRules without(Grant single) {
    String group = single.rule().getApiGroups().get(0);
    String resource = single.rule().getResources().get(0);
    String verb = single.rule().getVerbs().get(0);
    List<Grant> fewer = new ArrayList<>();
    for (Grant grant : grants) {
      PolicyRule rule = grant.rule();
      boolean same =
          java.util.Objects.equals(grant.namespace(), single.namespace())
              && rule.getApiGroups().contains(group)
              && rule.getResources().contains(resource)
              && rule.getVerbs().contains(verb)
              && java.util.Objects.equals(
                  rule.getResourceNames(), single.rule().getResourceNames());
      if (!same) {
        fewer.add(grant);
        continue;
      }
      PolicyRule copy = new io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder(rule).build();
      copy.setVerbs(rule.getVerbs().stream().filter(v -> !v.equals(verb)).toList());
      fewer.add(new Grant(grant.namespace(), copy, grant.from()));
    }
    return new RbacRules(List.copyOf(fewer));
  }

  private static List<PolicyRule> rules(
      OperatorChart.Manifests manifests, RoleRef ref, String bindingNamespace) {
    if ("ClusterRole".equals(ref.getKind())) {
      return manifests
          .all(ClusterRole.class, r -> r.getMetadata().getName().equals(ref.getName()))
          .stream()
          .flatMap(r -> r.getRules().stream())
          .toList();
    }
    return manifests
        .all(
            Role.class,
            r ->
                r.getMetadata().getName().equals(ref.getName())
                    && r.getMetadata().getNamespace().equals(bindingNamespace))
        .stream()
        .flatMap(r -> r.getRules().stream())
        .toList();
  }

  private static boolean bindsTo(List<Subject> subjects, String account, String namespace) {
    return subjects != null
        && subjects.stream()
            .anyMatch(
                s ->
                    "ServiceAccount".equals(s.getKind())
                        && account.equals(s.getName())
                        && namespace.equals(s.getNamespace()));
  }

  private static boolean empty(Collection<?> c) {
    return c == null || c.isEmpty();
  }
}
