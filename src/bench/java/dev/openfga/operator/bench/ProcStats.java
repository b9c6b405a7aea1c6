package dev.openfga.operator.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** What {@code /proc} says about a process: memory, CPU time, threads. */
final class ProcStats {
  private ProcStats() {}

  private static final long TICKS = clockTicks();

  /** Resident set size now, its peak (VmHWM), and its anonymous and file-backed parts, in KiB. */
  static long[] rssKiB(long pid) throws IOException {
    long[] v = new long[4];
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      int i =
          line.startsWith("VmRSS:")
              ? 0
              : line.startsWith("VmHWM:")
                  ? 1
                  : line.startsWith("RssAnon:") ? 2 : line.startsWith("RssFile:") ? 3 : -1;
      if (i >= 0) {
        v[i] = Long.parseLong(line.replaceAll("\\D", ""));
      }
    }
    return v;
  }

  /** user + system CPU seconds so far. */
  static double cpuSeconds(long pid) throws IOException {
    double[] userAndSystem = userAndSystemSeconds(pid);
    return userAndSystem[0] + userAndSystem[1];
  }

  /** user and system (kernel) CPU seconds so far. */
  static double[] userAndSystemSeconds(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    // after "pid (comm) ": state is field 3, utime field 14, stime field 15 (1-based in proc(5))
    return new double[] {
      Long.parseLong(f[11]) / (double) TICKS, Long.parseLong(f[12]) / (double) TICKS
    };
  }

  /**
   * CPU seconds per group of threads, the thread names with their digits dropped ("C1
   * CompilerThre", "JdkHttpClientFactory--pool--thread-"), largest first, as "name 1.23".
   */
  static String cpuByThread(long pid) throws IOException {
    return format(cpuByThreadGroup(pid));
  }

  /** CPU seconds per group of threads (names without digits), of threads alive now. */
  static java.util.Map<String, Double> cpuByThreadGroup(long pid) throws IOException {
    java.util.Map<String, Double> byName = new java.util.HashMap<>();
    try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        try {
          String stat = Files.readString(task.resolve("stat"));
          String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          double s = (Long.parseLong(f[11]) + Long.parseLong(f[12])) / (double) TICKS;
          byName.merge(name.replaceAll("\\d+", ""), s, Double::sum);
        } catch (IOException gone) {
          // the thread ended while we read
        }
      }
    }
    return byName;
  }

  /**
   * The CPU seconds per group of threads spent between two readings (a group's threads that ended
   * in between are missed, so the groups may sum to less than the process's difference).
   */
  static String cpuByThreadSince(java.util.Map<String, Double> before, long pid)
      throws IOException {
    java.util.Map<String, Double> now = cpuByThreadGroup(pid);
    now.replaceAll((name, s) -> s - before.getOrDefault(name, 0.0));
    return format(now);
  }

  private static String format(java.util.Map<String, Double> byName) {
    return byName.entrySet().stream()
        .filter(e -> e.getValue() >= 0.01)
        .sorted(java.util.Map.Entry.<String, Double>comparingByValue().reversed())
        .map(e -> String.format(java.util.Locale.ROOT, "%s %.2f", e.getKey(), e.getValue()))
        .collect(java.util.stream.Collectors.joining(", "));
  }

  /**
   * Where the resident memory is, from {@code /proc/<pid>/smaps}: per mapped file its resident KiB
   * and how much of that is private copies (written pages, e.g. the relocated AOT cache); the
   * anonymous mappings (no file) largest first with their size, which tells them apart (the heap's
   * reservation, the code cache, the class space, malloc arenas, thread stacks), the small ones
   * summed.
   */
  static String smaps(long pid) throws IOException {
    record Mapping(String name, long sizeKiB, long rssKiB, long anonKiB) {}
    List<Mapping> mappings = new java.util.ArrayList<>();
    String name = null;
    long size = 0;
    long rss = 0;
    long anon = 0;
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/smaps"))) {
      String[] f = line.trim().split("\\s+");
      if (f.length >= 5 && f[0].matches("[0-9a-f]+-[0-9a-f]+")) {
        if (name != null) {
          mappings.add(new Mapping(name, size, rss, anon));
        }
        String[] range = f[0].split("-");
        size = (Long.parseUnsignedLong(range[1], 16) - Long.parseUnsignedLong(range[0], 16)) >> 10;
        name = f.length >= 6 ? Path.of(f[5]).getFileName().toString() : "";
        rss = 0;
        anon = 0;
      } else if (f[0].equals("Rss:")) {
        rss = Long.parseLong(f[1]);
      } else if (f[0].equals("Anonymous:")) {
        anon = Long.parseLong(f[1]);
      }
    }
    if (name != null) {
      mappings.add(new Mapping(name, size, rss, anon));
    }
    StringBuilder out = new StringBuilder();
    long total = mappings.stream().mapToLong(Mapping::rssKiB).sum();
    out.append(String.format(java.util.Locale.ROOT, "resident %d KiB%n", total));
    out.append("mapped files (resident KiB, of it private copies KiB):\n");
    java.util.Map<String, long[]> files = new java.util.TreeMap<>();
    for (Mapping m : mappings) {
      if (!m.name().isEmpty() && !m.name().startsWith("[")) {
        long[] v = files.computeIfAbsent(m.name(), k -> new long[2]);
        v[0] += m.rssKiB();
        v[1] += m.anonKiB();
      }
    }
    files.entrySet().stream()
        .filter(e -> e.getValue()[0] > 0)
        .sorted((a, b) -> Long.compare(b.getValue()[0], a.getValue()[0]))
        .forEach(
            e ->
                out.append(
                    String.format(
                        java.util.Locale.ROOT,
                        "  %8d %8d  %s%n",
                        e.getValue()[0],
                        e.getValue()[1],
                        e.getKey())));
    out.append("anonymous mappings (resident KiB, mapping size KiB):\n");
    List<Mapping> anonymous =
        mappings.stream()
            .filter(m -> m.name().isEmpty() || m.name().startsWith("["))
            .filter(m -> m.rssKiB() > 0)
            .sorted((a, b) -> Long.compare(b.rssKiB(), a.rssKiB()))
            .toList();
    long small = 0;
    int smallCount = 0;
    for (Mapping m : anonymous) {
      if (m.rssKiB() >= 512) {
        out.append(
            String.format(
                java.util.Locale.ROOT, "  %8d %8d  %s%n", m.rssKiB(), m.sizeKiB(), m.name()));
      } else {
        small += m.rssKiB();
        smallCount++;
      }
    }
    out.append(
        String.format(
            java.util.Locale.ROOT,
            "  %8d           %d smaller ones (thread stacks, malloc)%n",
            small,
            smallCount));
    return out.toString();
  }

  static int threads(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("Threads:")) {
        return Integer.parseInt(line.replaceAll("\\D", ""));
      }
    }
    return -1;
  }

  private static long clockTicks() {
    try {
      Process p = new ProcessBuilder("getconf", "CLK_TCK").start();
      String out = new String(p.getInputStream().readAllBytes()).trim();
      p.waitFor();
      return Long.parseLong(out);
    } catch (Exception e) {
      return 100;
    }
  }
}
