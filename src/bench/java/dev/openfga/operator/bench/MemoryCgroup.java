package dev.openfga.operator.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code --memory-cgroup}: a measured operator run inside a memory cgroup whose limit is the
 * container's ({@code --container-memory}), as a pod's container is, instead of a JVM only told its
 * size. Needs root and the memory controller (cgroup v2, or v1's {@code memory} hierarchy). The
 * page cache is dropped right before the operator starts, so that the files it maps (the AOT cache,
 * the JVM, the jar) are charged to its cgroup as in a container; the training run stays outside, as
 * the image's build does. One fresh cgroup per run, below the harness's own, removed after it.
 */
final class MemoryCgroup implements AutoCloseable {
  private final Path dir;
  private final boolean v2;

  private MemoryCgroup(Path dir, boolean v2) {
    this.dir = dir;
    this.v2 = v2;
  }

  /** A new cgroup named {@code name} with this memory limit (e.g. {@code 128m}). */
  static MemoryCgroup create(String limit, String name) {
    try {
      boolean v2 =
          Files.isRegularFile(Path.of("/sys/fs/cgroup/cgroup.controllers"))
              && Files.readString(Path.of("/sys/fs/cgroup/cgroup.controllers")).contains("memory");
      String own = null;
      for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
        String[] parts = line.split(":", 3);
        if (v2 ? parts[0].equals("0") : List.of(parts[1].split(",")).contains("memory")) {
          own = parts[2];
        }
      }
      if (own == null) {
        throw new IllegalStateException("--memory-cgroup: no memory cgroup in /proc/self/cgroup");
      }
      Path root = Path.of(v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory");
      Path dir = root.resolve(own.substring(1)).resolve("openfga-operator-bench-" + name);
      Files.createDirectories(dir);
      Files.writeString(
          dir.resolve(v2 ? "memory.max" : "memory.limit_in_bytes"), Long.toString(bytes(limit)));
      return new MemoryCgroup(dir, v2);
    } catch (IOException e) {
      throw new UncheckedIOException("--memory-cgroup (needs root and a memory controller)", e);
    }
  }

  /** The command, started inside this cgroup (same PID: the shell execs it). */
  List<String> wrap(List<String> command) {
    List<String> wrapped = new ArrayList<>();
    wrapped.add("sh");
    wrapped.add("-c");
    wrapped.add(
        "sync; echo 3 > /proc/sys/vm/drop_caches; echo $$ > '"
            + dir.resolve("cgroup.procs")
            + "' && exec \"$@\"");
    wrapped.add("sh");
    wrapped.addAll(command);
    return wrapped;
  }

  /** Peak usage, how often the limit was hit, OOM kills. */
  String summary() {
    try {
      long peak =
          Long.parseLong(
              Files.readString(dir.resolve(v2 ? "memory.peak" : "memory.max_usage_in_bytes"))
                  .strip());
      long hits;
      long kills;
      if (v2) {
        String events = Files.readString(dir.resolve("memory.events"));
        hits = field(events, "max");
        kills = field(events, "oom_kill");
      } else {
        hits = Long.parseLong(Files.readString(dir.resolve("memory.failcnt")).strip());
        kills = field(Files.readString(dir.resolve("memory.oom_control")), "oom_kill");
      }
      return String.format(
          Locale.ROOT,
          "cgroup peak %.0f MiB, limit hit %d times, OOM kills %d",
          peak / 1048576.0,
          hits,
          kills);
    } catch (IOException | RuntimeException e) {
      return "cgroup: " + e;
    }
  }

  private static long field(String text, String key) {
    for (String line : text.split("\n")) {
      String[] kv = line.trim().split("\\s+");
      if (kv.length == 2 && kv[0].equals(key)) {
        return Long.parseLong(kv[1]);
      }
    }
    return -1;
  }

  static long bytes(String size) {
    String s = size.trim().toLowerCase(Locale.ROOT);
    long unit =
        switch (s.charAt(s.length() - 1)) {
          case 'k' -> 1024L;
          case 'm' -> 1024L * 1024;
          case 'g' -> 1024L * 1024 * 1024;
          default -> 1L;
        };
    return Long.parseLong(unit == 1 ? s : s.substring(0, s.length() - 1)) * unit;
  }

  @Override
  public void close() {
    try {
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      // still holds a process that did not exit yet: left for the kernel
    }
  }
}
