package dev.openfga.operator.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The container image that {@code ./mvnw -Pimage verify} writes to {@code target/jib-image.tar} (an
 * OCI layout): its configuration, its files, and the operator started from it with the image's own
 * entrypoint. Runs in {@code ./mvnw -Pimage verify} (failsafe, after the image is built); skipped
 * when there is no image tar.
 *
 * <p>The strongest run is the one a container runtime does: the layers unpacked into one root, that
 * root mounted read-only with only {@code /proc} added, entered with {@code chroot} as user 65532 —
 * nothing of the build machine is visible, not even its C library. That needs root and mount
 * namespaces (it is skipped otherwise); the run through the image's own dynamic loader needs
 * neither.
 */
class ContainerImageIT {
  private static final Path TAR = Path.of(System.getProperty("image.tar", "target/jib-image.tar"));
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long TIMEOUT_SECONDS = 60;

  @TempDir static Path work;

  private static JsonNode config;
  private static long compressedSize;
  private static Path root;
  private static List<String> topLevel;

  @BeforeAll
  static void unpackTheImage() throws IOException {
    assumeTrue(
        Files.isRegularFile(TAR),
        "no " + TAR + ": build it first with ./mvnw -Pimage verify -DskipTests");
    Path layout = Files.createDirectory(work.resolve("layout"));
    runOk(List.of("tar", "-xf", TAR.toAbsolutePath().toString(), "-C", layout.toString()));

    JsonNode index = JSON.readTree(layout.resolve("index.json").toFile());
    assertThat(index.path("manifests")).as("manifests in index.json").hasSize(1);
    JsonNode manifest = JSON.readTree(blob(layout, index.path("manifests").get(0)).toFile());
    config = JSON.readTree(blob(layout, manifest.path("config")).toFile());

    root = Files.createDirectory(work.resolve("rootfs"));
    for (JsonNode layer : manifest.path("layers")) {
      assertThat(layer.path("mediaType").asText()).endsWith(".tar+gzip");
      compressedSize += layer.path("size").asLong();
      runOk(
          List.of(
              "tar",
              "--warning=no-unknown-keyword",
              "-xzf",
              blob(layout, layer).toString(),
              "-C",
              root.toString()));
    }
    try (Stream<Path> top = Files.list(root)) {
      topLevel = top.map(p -> p.getFileName().toString()).toList();
    }
  }

  @Test
  void runsAsUser65532WithTheJavaEntrypointAndNoShell() throws IOException {
    JsonNode c = config.path("config");
    assertThat(config.path("os").asText()).isEqualTo("linux");
    assertThat(c.path("User").asText()).isEqualTo("65532:65532");
    assertThat(strings(c.path("Entrypoint")))
        .containsExactly(
            "/opt/java/bin/java", "@/app/jvm.options", "-jar", "/app/openfga-operator.jar");
    assertThat(strings(c.path("Cmd"))).isEmpty();
    assertThat(root.resolve("bin")).doesNotExist();
    assertThat(root.resolve("usr/bin")).doesNotExist();
    assertThat(Files.readString(root.resolve("etc/passwd"))).contains("nonroot:x:65532:65532:");
  }

  @Test
  void holdsOnlyTheRuntimeTheJarTheFlagsAndTheCLibraries() throws IOException {
    assertThat(topLevel)
        .as("top-level directories (Jib's own class and dependency layers are filtered out)")
        .containsOnly("app", "etc", "lib", "lib64", "opt", "usr");
    List<String> expected = new ArrayList<>(List.of("jvm.options", "openfga-operator.jar"));
    if (isJava25OrNewer()) {
      expected.add("openfga-operator.aot"); // the AOT cache (AotTraining)
    }
    try (Stream<Path> app = Files.list(root.resolve("app"))) {
      assertThat(app.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrderElementsOf(expected);
    }
    assertThat(root.resolve("opt/java/release")).content().contains("JAVA_VERSION=");
    System.out.printf(
        "image: %.1f MB in compressed layers; runtime %s%n",
        compressedSize / 1e6, javaVersion().orElse("?"));
    assertThat(compressedSize)
        .as("compressed size of the layers: the runtime, the jar and glibc only")
        .isLessThan(100L * 1024 * 1024);
  }

  @Test
  void printsItsVersionAsUser65532OnAReadOnlyRootWithNothingOfTheHost() {
    assumeRunnableHere();
    assumeTrue(canIsolate(), "needs root and mount namespaces (unshare --mount --pid)");

    Result version = isolated(entrypoint("--version"));
    assertThat(version.exitCode()).as(version.output()).isZero();
    assertThat(version.output().strip()).isEqualTo("openfga-operator " + projectVersion());

    if (isJava25OrNewer()) {
      // the AOT cache was trained with this jar and these flags: AOTMode=on fails unless it maps
      Result aot = isolated(withJvmFlags(entrypoint("--version"), List.of("-XX:AOTMode=on")));
      assertThat(aot.exitCode()).as(aot.output()).isZero();
    } else {
      // the CDS archive was dumped with the image's flags: -Xshare:on fails unless it maps
      Result sharing =
          isolated(List.of("/opt/java/bin/java", "@/app/jvm.options", "-Xshare:on", "-version"));
      assertThat(sharing.exitCode()).as(sharing.output()).isZero();
      assertThat(sharing.output()).contains("sharing");
    }
  }

  @Test
  void printsItsVersionThroughTheImagesOwnDynamicLoader() throws IOException {
    assumeRunnableHere();

    Result version = run(throughTheLoader(entrypoint("--version"), List.of()));

    assertThat(version.exitCode()).as(version.output()).isZero();
    assertThat(version.output().strip()).isEqualTo("openfga-operator " + projectVersion());
  }

  @Test
  void theEntrypointTakesTheStatusSubcommandFromTheContainersArguments() throws IOException {
    // what the kubectl plugin and the README's kubectl run give the image: args ["status", ...]
    assumeRunnableHere();

    Result help = run(throughTheLoader(entrypoint("status", "--help"), List.of()));
    assertThat(help.exitCode()).as(help.output()).isZero();
    assertThat(help.output()).contains("Usage: openfga-operator status");

    Result usage = run(throughTheLoader(entrypoint("status", "--no-such-flag"), List.of()));
    assertThat(usage.exitCode()).as(usage.output()).isEqualTo(2);
  }

  @Test
  void startsFromTheAotCacheItWasTrainedWith() throws IOException {
    assumeRunnableHere();
    assumeTrue(isJava25OrNewer(), "an AOT cache needs Java 25");
    assertThat(root.resolve("app/jvm.options"))
        .content()
        .contains("-XX:AOTCache=" + AotTraining.CACHE);
    assertThat(Files.getLastModifiedTime(root.resolve("app/openfga-operator.jar")))
        .as("the jar's time, as in training")
        .isEqualTo(AotTraining.IMAGE_FILE_TIME);

    List<String> logAot = List.of("-Xlog:aot=info");
    Result version =
        canIsolate()
            ? isolated(withJvmFlags(entrypoint("--version"), logAot))
            : run(throughTheLoader(entrypoint("--version"), logAot));

    assertThat(version.exitCode()).as(version.output()).isZero();
    assertThat(version.output())
        .contains("Using AOT-linked classes: true")
        .doesNotContain("[error")
        .contains("openfga-operator " + projectVersion());
  }

  // -- helpers --------------------------------------------------------------------------------

  /** The command with JVM flags added right after the argument file. */
  private static List<String> withJvmFlags(List<String> command, List<String> flags) {
    List<String> with = new ArrayList<>(command);
    int argfile = with.indexOf("@/app/jvm.options");
    with.addAll(argfile + 1, flags);
    return with;
  }

  /**
   * The image's command run on this machine through the image's own dynamic loader and C libraries:
   * absolute paths point into the unpacked root, and so does the AOT cache the argument file names
   * (a later flag wins).
   */
  private static List<String> throughTheLoader(List<String> entrypoint, List<String> flags)
      throws IOException {
    List<String> jvmFlags = new ArrayList<>(flags);
    Path cache = root.resolve(AotTraining.CACHE.substring(1));
    if (Files.isRegularFile(cache)) {
      jvmFlags.add(0, "-XX:AOTCache=" + cache);
    }
    List<String> command = new ArrayList<>();
    command.add(dynamicLoader().toString());
    command.add("--library-path");
    command.add(libraryPath());
    for (String arg : withJvmFlags(entrypoint, jvmFlags)) {
      command.add(
          arg.startsWith("/")
              ? root + arg
              : arg.startsWith("@/") ? "@" + root + arg.substring(1) : arg);
    }
    return command;
  }

  private static boolean isJava25OrNewer() {
    return javaVersion().map(v -> Integer.parseInt(v.split("[.+-]")[0]) >= 25).orElse(false);
  }

  private record Result(int exitCode, String output) {}

  private static List<String> entrypoint(String... args) {
    List<String> command = new ArrayList<>(strings(config.path("config").path("Entrypoint")));
    command.addAll(List.of(args));
    return command;
  }

  private static String projectVersion() {
    return config.path("config").path("Labels").path("org.opencontainers.image.version").asText();
  }

  private static Optional<String> javaVersion() {
    try {
      return Files.readAllLines(root.resolve("opt/java/release")).stream()
          .filter(l -> l.startsWith("JAVA_VERSION="))
          .map(l -> l.substring("JAVA_VERSION=".length()).replace("\"", ""))
          .findFirst();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** The image's binaries are for its architecture: run them only on a Linux of the same one. */
  private static void assumeRunnableHere() {
    String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
    String host =
        switch (arch) {
          case "x86_64", "amd64" -> "amd64";
          case "aarch64", "arm64" -> "arm64";
          default -> arch;
        };
    assumeTrue(System.getProperty("os.name").equals("Linux"), "runs Linux binaries");
    assumeTrue(
        host.equals(config.path("architecture").asText()),
        "image for " + config.path("architecture").asText() + ", machine " + host);
  }

  private static boolean canIsolate() {
    if (!"root".equals(System.getProperty("user.name"))) {
      return false;
    }
    Optional<Path> unshare = tool("unshare");
    return unshare.isPresent()
        && tool("chroot").isPresent()
        && run(List.of(unshare.get().toString(), "--mount", "--pid", "--fork", "true")).exitCode()
            == 0;
  }

  /**
   * Runs a command inside the image as a container runtime would: a private mount namespace, the
   * unpacked root bind-mounted read-only, a fresh /proc, then chroot as 65532:65532.
   */
  private static Result isolated(List<String> command) {
    createDirectories(root.resolve("proc"));
    String script =
        "set -e; mount --bind \"$0\" \"$0\"; mount -o remount,bind,ro \"$0\";"
            + " mount -t proc proc \"$0/proc\"; exec chroot --userspec=65532:65532 \"$0\" \"$@\"";
    List<String> full = new ArrayList<>();
    full.addAll(
        List.of(
            tool("unshare").orElseThrow().toString(),
            "--mount",
            "--pid",
            "--fork",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            root.toString()));
    full.addAll(command);
    return run(full);
  }

  private static Path dynamicLoader() throws IOException {
    try (Stream<Path> files = Files.walk(root, 3)) {
      return files
          .filter(p -> p.getFileName().toString().startsWith("ld-linux"))
          .filter(p -> root.relativize(p).toString().startsWith("lib"))
          .findFirst()
          .orElseThrow(() -> new AssertionError("no dynamic loader (ld-linux*) in the image"));
    }
  }

  /** Every directory of the image that holds C libraries, and the runtime's own. */
  private static String libraryPath() throws IOException {
    List<String> dirs = new ArrayList<>();
    try (Stream<Path> files = Files.walk(root)) {
      files
          .filter(p -> p.getFileName().toString().matches("lib.*\\.so(\\.\\d+)*"))
          .map(Path::getParent)
          .distinct()
          .forEach(d -> dirs.add(d.toString()));
    }
    return String.join(":", dirs);
  }

  private static Optional<Path> tool(String name) {
    List<String> dirs =
        new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(":")));
    dirs.addAll(List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin"));
    return dirs.stream()
        .filter(d -> !d.isEmpty())
        .map(d -> Path.of(d, name))
        .filter(Files::isExecutable)
        .findFirst();
  }

  private static Path blob(Path layout, JsonNode descriptor) {
    String[] digest = descriptor.path("digest").asText().split(":", 2);
    return layout.resolve("blobs").resolve(digest[0]).resolve(digest[1]);
  }

  private static List<String> strings(JsonNode array) {
    List<String> values = new ArrayList<>();
    array.forEach(v -> values.add(v.asText()));
    return values;
  }

  private static void runOk(List<String> command) {
    Result result = run(command);
    assertThat(result.exitCode()).as(command + ": " + result.output()).isZero();
  }

  /** Runs a command with an empty environment (as the image's, which sets none) but PATH. */
  private static Result run(List<String> command) {
    try {
      Path output = Files.createTempFile(work, "output-", ".txt");
      ProcessBuilder builder =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(output.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
      String path = builder.environment().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
      builder.environment().clear();
      builder.environment().put("PATH", path);
      Process process = builder.start();
      if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError("timed out after " + TIMEOUT_SECONDS + " s: " + command);
      }
      return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted: " + command, e);
    }
  }

  private static void createDirectories(Path dir) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
