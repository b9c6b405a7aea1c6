package dev.openfga.operator.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the kubectl plugin {@code bin/kubectl-openfga_operator} against a stand-in {@code kubectl}
 * that records its arguments (one call per entry of {@link Run#calls}) and answers: the search
 * across namespaces with {@code found}, a list in one namespace with {@code name}, the read of the
 * operator's Deployment with {@code spec} (image, ServiceAccount and pull secrets, tab-separated,
 * as the plugin's jsonpath prints them), and {@code run} with one line of output.
 */
public final class KubectlPlugin {
  public static final Path SCRIPT = Path.of("bin", "kubectl-openfga_operator").toAbsolutePath();

  private final Path dir;

  public KubectlPlugin(Path dir) {
    this.dir = dir;
  }

  /** What the plugin did: its exit code, its output, and the kubectl calls it made. */
  public record Run(int exitCode, String output, List<List<String>> calls) {
    /** The value of {@code --prefix...} in call {@code call}. */
    public String value(int call, String prefix) {
      return calls.get(call).stream()
          .filter(a -> a.startsWith(prefix))
          .map(a -> a.substring(prefix.length()))
          .findFirst()
          .orElseThrow(() -> new AssertionError("no " + prefix + " in " + calls.get(call)));
    }

    /** The pod the plugin's {@code kubectl run} creates: its {@code --overrides}. */
    public Pod pod() {
      try {
        return new ObjectMapper().readValue(value(calls.size() - 1, "--overrides="), Pod.class);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  public Run run(String found, String name, String spec, String... args) {
    try {
      Path bin = Files.createDirectories(dir.resolve("bin"));
      Files.writeString(dir.resolve("found"), found);
      Files.writeString(dir.resolve("name"), name);
      Files.writeString(dir.resolve("spec"), spec);
      Files.deleteIfExists(dir.resolve("calls"));
      Path kubectl = bin.resolve("kubectl");
      Files.writeString(
          kubectl,
          """
          #!/bin/sh
          d=$(dirname "$0")/..
          for a in "$@"; do printf '%s\\n' "$a"; done >> "$d/calls"
          echo >> "$d/calls"
          case " $* " in
            *" --all-namespaces "*) cat "$d/found" ;;
            *" get deployments "*) cat "$d/name" ;;
            *" get deployment "*) cat "$d/spec" ;;
            *" run "*) echo "status printed this" ;;
            *) echo "unexpected kubectl $*" >&2; exit 9 ;;
          esac
          """);
      Files.setPosixFilePermissions(kubectl, PosixFilePermissions.fromString("rwxr-xr-x"));

      List<String> command = new ArrayList<>(List.of("sh", SCRIPT.toString()));
      command.addAll(Arrays.asList(args));
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      Map<String, String> env = builder.environment();
      env.put("PATH", bin + ":" + env.get("PATH"));
      env.remove("OPENFGA_OPERATOR_NAMESPACE");
      env.remove("OPENFGA_OPERATOR_NAME");
      Process process = builder.start();
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError("the plugin did not end within 30 s: " + output);
      }
      List<List<String>> calls = new ArrayList<>();
      Path log = dir.resolve("calls");
      if (Files.exists(log)) {
        List<String> current = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
          if (line.isEmpty()) {
            calls.add(current);
            current = new ArrayList<>();
          } else {
            current.add(line);
          }
        }
      }
      return new Run(process.exitValue(), output, calls);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
