package dev.openfga.operator.gitops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;

/**
 * The Deployment fixtures under {@code src/test/resources/gitops/}, one per state, and what each
 * GitOps tool's health check must make of them: Argo CD's status and message (the Lua of
 * docs/gitops/argocd-deployment-health.lua) and Flux's kstatus status (the CEL of
 * docs/gitops/flux-kustomization.yaml).
 */
final class DeploymentStates {
  private DeploymentStates() {}

  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  /**
   * One state.
   *
   * @param description what the Deployment is, as the start of a sentence
   * @param fixture the file under src/test/resources/gitops/
   * @param argoStatus Argo CD's health status
   * @param argoMessage Argo CD's health message ("" for none)
   * @param fluxStatus the kstatus status Flux computes: Current, InProgress or Failed
   */
  record State(
      String description,
      String fixture,
      String argoStatus,
      String argoMessage,
      String fluxStatus) {}

  static final List<State> ALL =
      List.of(
          new State(
              "an OpenFGA Deployment that is migrated and rolled out",
              "healthy.yaml",
              "Healthy",
              "",
              "Current"),
          new State(
              "an OpenFGA Deployment rolled back to an older version than the recorded one",
              "rolled-back.yaml",
              "Healthy",
              "",
              "Current"),
          new State(
              "an OpenFGA Deployment waiting at 0 replicas for its first migration",
              "first-install-waiting.yaml",
              "Progressing",
              "Waiting for the database migration before scaling to 3 replicas",
              "InProgress"),
          new State(
              "an OpenFGA Deployment whose first migration failed, while the retry runs",
              "migration-failed.yaml",
              "Degraded",
              "Database migration failed for version v1.8.4. Check migration job logs.",
              "Failed"),
          new State(
              "an OpenFGA Deployment whose upgrade migration failed, waiting for the retry",
              "migration-failed-waiting-for-retry.yaml",
              "Degraded",
              "Database migration failed for version v1.9.0. Check migration job logs."
                  + " No new attempt before 2026-03-02T10:16:00Z.",
              "Failed"),
          new State(
              "an OpenFGA Deployment rolling out after a successful migration",
              "rollout-in-progress.yaml",
              "Progressing",
              "Waiting for rollout to finish: 2 out of 3 new replicas have been updated...",
              "InProgress"),
          new State(
              "an OpenFGA Deployment past its progress deadline",
              "progress-deadline-exceeded.yaml",
              "Degraded",
              "Deployment \"openfga\" exceeded its progress deadline",
              "Failed"),
          new State(
              "a paused OpenFGA Deployment",
              "paused.yaml",
              "Suspended",
              "Deployment is paused",
              "InProgress"),
          new State(
              "an OpenFGA Deployment that does not opt in, at 0 replicas with a stale"
                  + " MigrationFailed condition",
              "not-opted-in.yaml",
              "Healthy",
              "",
              "Current"),
          new State(
              "any Deployment whose latest generation is not observed yet",
              "generation-not-observed.yaml",
              "Progressing",
              "Waiting for rollout to finish: observed deployment generation less than desired"
                  + " generation",
              "InProgress"),
          new State(
              "any Deployment with old replicas pending termination",
              "old-replicas-terminating.yaml",
              "Progressing",
              "Waiting for rollout to finish: 2 old replicas are pending termination...",
              "InProgress"),
          new State(
              "any Deployment whose updated replicas are not all available",
              "updated-replicas-unavailable.yaml",
              "Progressing",
              "Waiting for rollout to finish: 1 of 3 updated replicas are available...",
              "InProgress"));

  /** The states as named arguments, each name a sentence made by {@code name}. */
  static Stream<Named<State>> named(java.util.function.Function<State, String> name) {
    return ALL.stream().map(s -> Named.of(name.apply(s), s));
  }

  /** A fixture as JSON, the way the API server serves the Deployment. */
  static JsonNode fixture(String name) {
    try (InputStream in = DeploymentStates.class.getResourceAsStream("/gitops/" + name)) {
      if (in == null) {
        throw new IllegalArgumentException("no fixture gitops/" + name);
      }
      return YAML.readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A file of the repository, relative to its root (the directory Maven runs the tests in). */
  static String repositoryFile(String path) {
    try {
      return Files.readString(Path.of(path), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
