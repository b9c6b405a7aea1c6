package dev.openfga.operator.config;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * What the flags fall back on outside the command line: environment variables and the file in which
 * Kubernetes tells a pod its namespace. Injectable, so that tests need no real environment.
 *
 * @param variables looks up an environment variable; returns {@code null} when it is not set
 * @param serviceAccountNamespaceFile the service-account namespace file
 */
public record Environment(Function<String, String> variables, Path serviceAccountNamespaceFile) {

  /** Where Kubernetes mounts the pod's namespace. */
  public static final Path SERVICE_ACCOUNT_NAMESPACE_FILE =
      Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");

  public Environment {
    Objects.requireNonNull(variables, "variables");
    Objects.requireNonNull(serviceAccountNamespaceFile, "serviceAccountNamespaceFile");
  }

  /** The process environment and the real service-account namespace file. */
  public static Environment system() {
    return new Environment(System::getenv, SERVICE_ACCOUNT_NAMESPACE_FILE);
  }

  /** A fixed set of variables and the given namespace file (for tests and tools). */
  public static Environment of(Map<String, String> variables, Path serviceAccountNamespaceFile) {
    Map<String, String> copy = Map.copyOf(variables);
    return new Environment(copy::get, serviceAccountNamespaceFile);
  }

  /** The variable's value, or {@code null} when it is not set. */
  public String variable(String name) {
    return variables.apply(name);
  }
}
