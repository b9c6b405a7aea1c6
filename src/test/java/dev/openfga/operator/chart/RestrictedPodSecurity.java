package dev.openfga.operator.chart;

import io.fabric8.kubernetes.api.model.Capabilities;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.SeccompProfile;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The checks of the Kubernetes "restricted" Pod Security Standard (policy version 1.25 and later,
 * baseline checks included) applied to a pod template, as the PodSecurity admission controller
 * would: each violation is one line.
 */
final class RestrictedPodSecurity {
  private RestrictedPodSecurity() {}

  private static final Set<String> ALLOWED_VOLUMES =
      Set.of(
          "configMap",
          "csi",
          "downwardAPI",
          "emptyDir",
          "ephemeral",
          "persistentVolumeClaim",
          "projected",
          "secret");
  private static final Set<String> SAFE_SYSCTLS =
      Set.of(
          "kernel.shm_rmid_forced",
          "net.ipv4.ip_local_port_range",
          "net.ipv4.ip_unprivileged_port_start",
          "net.ipv4.tcp_syncookies",
          "net.ipv4.ping_group_range",
          "net.ipv4.ip_local_reserved_ports",
          "net.ipv4.tcp_keepalive_time",
          "net.ipv4.tcp_fin_timeout",
          "net.ipv4.tcp_keepalive_intvl",
          "net.ipv4.tcp_keepalive_probes");
  private static final Set<String> SELINUX_TYPES =
      Set.of("", "container_t", "container_init_t", "container_kvm_t", "container_engine_t");

  static List<String> violations(PodTemplateSpec template) {
    List<String> problems = new ArrayList<>();
    PodSpec pod = template.getSpec();
    Map<String, String> annotations =
        template.getMetadata() == null || template.getMetadata().getAnnotations() == null
            ? Map.of()
            : template.getMetadata().getAnnotations();
    PodSecurityContext podContext =
        pod.getSecurityContext() == null ? new PodSecurityContext() : pod.getSecurityContext();

    if (Boolean.TRUE.equals(pod.getHostNetwork())) {
      problems.add("hostNetwork is true");
    }
    if (Boolean.TRUE.equals(pod.getHostPID())) {
      problems.add("hostPID is true");
    }
    if (Boolean.TRUE.equals(pod.getHostIPC())) {
      problems.add("hostIPC is true");
    }
    for (Volume volume : nullSafe(pod.getVolumes())) {
      String type = volumeType(volume);
      if (!ALLOWED_VOLUMES.contains(type)) {
        problems.add("volume " + volume.getName() + " has the restricted type " + type);
      }
    }
    annotations.forEach(
        (key, value) -> {
          if (key.startsWith("container.apparmor.security.beta.kubernetes.io/")
              && !value.equals("runtime/default")
              && !value.startsWith("localhost/")) {
            problems.add("AppArmor annotation " + key + " is " + value);
          }
        });
    if (podContext.getAppArmorProfile() != null
        && "Unconfined".equals(podContext.getAppArmorProfile().getType())) {
      problems.add("pod AppArmor profile is Unconfined");
    }
    if (podContext.getSeLinuxOptions() != null) {
      problems.addAll(seLinux("pod", podContext.getSeLinuxOptions()));
    }
    if (podContext.getWindowsOptions() != null
        && Boolean.TRUE.equals(podContext.getWindowsOptions().getHostProcess())) {
      problems.add("pod windowsOptions.hostProcess is true");
    }
    for (var sysctl : nullSafe(podContext.getSysctls())) {
      if (!SAFE_SYSCTLS.contains(sysctl.getName())) {
        problems.add("sysctl " + sysctl.getName() + " is not a safe sysctl");
      }
    }
    if (podContext.getRunAsUser() != null && podContext.getRunAsUser() == 0) {
      problems.add("pod runAsUser is 0");
    }
    problems.addAll(seccomp("pod", podContext.getSeccompProfile(), false));

    List<Container> containers =
        Stream.concat(nullSafe(pod.getInitContainers()).stream(), pod.getContainers().stream())
            .toList();
    if (pod.getEphemeralContainers() != null && !pod.getEphemeralContainers().isEmpty()) {
      problems.add("ephemeral containers are not checked by this test");
    }
    for (Container container : containers) {
      String name = "container " + container.getName();
      SecurityContext context =
          container.getSecurityContext() == null
              ? new SecurityContext()
              : container.getSecurityContext();
      if (Boolean.TRUE.equals(context.getPrivileged())) {
        problems.add(name + " is privileged");
      }
      for (ContainerPort port : nullSafe(container.getPorts())) {
        if (port.getHostPort() != null && port.getHostPort() != 0) {
          problems.add(name + " uses hostPort " + port.getHostPort());
        }
      }
      if (!Boolean.FALSE.equals(context.getAllowPrivilegeEscalation())) {
        problems.add(name + " does not set allowPrivilegeEscalation: false");
      }
      boolean nonRoot =
          Boolean.TRUE.equals(context.getRunAsNonRoot())
              || (context.getRunAsNonRoot() == null
                  && Boolean.TRUE.equals(podContext.getRunAsNonRoot()));
      if (!nonRoot) {
        problems.add(name + " does not run with runAsNonRoot: true (nor does the pod)");
      }
      if (context.getRunAsUser() != null && context.getRunAsUser() == 0) {
        problems.add(name + " runAsUser is 0");
      }
      problems.addAll(
          seccomp(name, context.getSeccompProfile(), podContext.getSeccompProfile() != null));
      Capabilities capabilities = context.getCapabilities();
      if (capabilities == null || !nullSafe(capabilities.getDrop()).contains("ALL")) {
        problems.add(name + " does not drop ALL capabilities");
      }
      if (capabilities != null) {
        for (String added : nullSafe(capabilities.getAdd())) {
          if (!added.equals("NET_BIND_SERVICE")) {
            problems.add(name + " adds capability " + added);
          }
        }
      }
      if (context.getProcMount() != null && !context.getProcMount().equals("Default")) {
        problems.add(name + " procMount is " + context.getProcMount());
      }
      if (context.getSeLinuxOptions() != null) {
        problems.addAll(seLinux(name, context.getSeLinuxOptions()));
      }
      if (context.getAppArmorProfile() != null
          && "Unconfined".equals(context.getAppArmorProfile().getType())) {
        problems.add(name + " AppArmor profile is Unconfined");
      }
      if (context.getWindowsOptions() != null
          && Boolean.TRUE.equals(context.getWindowsOptions().getHostProcess())) {
        problems.add(name + " windowsOptions.hostProcess is true");
      }
    }
    return problems;
  }

  /** Restricted: RuntimeDefault or Localhost, on the pod or on every container. */
  private static List<String> seccomp(String who, SeccompProfile profile, boolean podHasOne) {
    if (profile == null) {
      return who.equals("pod") || podHasOne
          ? List.of()
          : List.of(who + " has no seccompProfile (and neither has the pod)");
    }
    String type = profile.getType();
    if ("RuntimeDefault".equals(type)) {
      return List.of();
    }
    if ("Localhost".equals(type)
        && profile.getLocalhostProfile() != null
        && !profile.getLocalhostProfile().isEmpty()) {
      return List.of();
    }
    return List.of(who + " seccompProfile is " + type);
  }

  private static List<String> seLinux(
      String who, io.fabric8.kubernetes.api.model.SELinuxOptions o) {
    List<String> problems = new ArrayList<>();
    if (o.getType() != null && !SELINUX_TYPES.contains(o.getType())) {
      problems.add(who + " seLinuxOptions.type is " + o.getType());
    }
    if (o.getUser() != null && !o.getUser().isEmpty()) {
      problems.add(who + " sets seLinuxOptions.user");
    }
    if (o.getRole() != null && !o.getRole().isEmpty()) {
      problems.add(who + " sets seLinuxOptions.role");
    }
    return problems;
  }

  private static String volumeType(Volume v) {
    if (v.getConfigMap() != null) return "configMap";
    if (v.getCsi() != null) return "csi";
    if (v.getDownwardAPI() != null) return "downwardAPI";
    if (v.getEmptyDir() != null) return "emptyDir";
    if (v.getEphemeral() != null) return "ephemeral";
    if (v.getPersistentVolumeClaim() != null) return "persistentVolumeClaim";
    if (v.getProjected() != null) return "projected";
    if (v.getSecret() != null) return "secret";
    if (v.getHostPath() != null) return "hostPath";
    return "another";
  }

  private static <T> List<T> nullSafe(List<T> list) {
    return list == null ? List.of() : list;
  }
}
