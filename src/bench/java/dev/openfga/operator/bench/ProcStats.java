package dev.openfga.operator.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

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
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    // after "pid (comm) ": state is field 3, utime field 14, stime field 15 (1-based in proc(5))
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / (double) TICKS;
  }

  /**
   * CPU seconds per group of threads, the thread names with their digits dropped ("C1
   * CompilerThre", "JdkHttpClientFactory--pool--thread-"), largest first, as "name 1.23".
   */
  static String cpuByThread(long pid) throws IOException {
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
    return byName.entrySet().stream()
        .filter(e -> e.getValue() >= 0.01)
        .sorted(java.util.Map.Entry.<String, Double>comparingByValue().reversed())
        .map(e -> String.format(java.util.Locale.ROOT, "%s %.2f", e.getKey(), e.getValue()))
        .collect(java.util.stream.Collectors.joining(", "));
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
