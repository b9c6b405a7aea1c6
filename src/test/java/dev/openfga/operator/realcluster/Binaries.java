package dev.openfga.operator.realcluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The binaries the real cluster runs, built from the Go module proxy by {@code
 * src/test/cluster/build.sh} into a cache outside the checkout ({@code
 * $OPENFGA_OPERATOR_TEST_CACHE}, default {@code ~/.cache/openfga-operator-test}) and reused from
 * there. A cold build takes minutes; a warm one a fraction of a second.
 */
final class Binaries {
  /** The OpenFGA versions the test kubelet can run (each pinned in src/test/cluster). */
  static final String OLD_OPENFGA = "v1.8.16";

  static final String NEW_OPENFGA = "v1.10.0";

  private static final Path SCRIPT = Path.of("src", "test", "cluster", "build.sh").toAbsolutePath();
  private static final Map<String, Path> BUILT = new ConcurrentHashMap<>();

  private Binaries() {}

  /** The folder with etcd, kube-apiserver and kube-controller-manager. */
  static Path kubernetes() {
    return build("kubernetes");
  }

  /** The {@code openfga} command of that version, or empty when none is pinned for it. */
  static java.util.Optional<Path> openfga(String version) {
    if (!Files.isRegularFile(SCRIPT.resolveSibling("openfga-" + version).resolve("go.sum"))) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(build("openfga", version).resolve("openfga"));
  }

  private static Path build(String... what) {
    return BUILT.computeIfAbsent(
        String.join(" ", what),
        key -> {
          List<String> command = new java.util.ArrayList<>(List.of("bash", SCRIPT.toString()));
          command.addAll(List.of(what));
          String out =
              ChildProcess.run(Duration.ofMinutes(40), Path.of("."), command, Map.of()).strip();
          return Path.of(out.substring(out.lastIndexOf('\n') + 1));
        });
  }
}
