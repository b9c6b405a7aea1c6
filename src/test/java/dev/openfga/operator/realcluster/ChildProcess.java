package dev.openfga.operator.realcluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A server or command the harness started, with its output in a log file. Every child gets a
 * watchdog: a small shell loop that SIGKILLs it as soon as the test JVM is gone, so a crashed or
 * killed test run never leaves a control plane, a database or an operator running. Stopped by PID.
 */
final class ChildProcess implements AutoCloseable {
  private final String name;
  private final Process process;
  private final Path log;

  private ChildProcess(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
  }

  /**
   * Starts {@code command} with exactly {@code env} (nothing inherited), output and errors into
   * {@code log}.
   */
  static ChildProcess start(
      String name, List<String> command, Map<String, String> env, Path workDir, Path log) {
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(workDir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    builder.environment().clear();
    builder.environment().putAll(env);
    try {
      Process process = builder.start();
      watchdog(process.pid());
      return new ChildProcess(name, process, log);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + name + ": " + command, e);
    }
  }

  /** SIGKILLs {@code pid} once this JVM has exited (checked every second); ends with the child. */
  static void watchdog(long pid) throws IOException {
    long self = ProcessHandle.current().pid();
    String loop =
        "while kill -0 %d 2>/dev/null && kill -0 %d 2>/dev/null; do sleep 1; done; kill -9 %d 2>/dev/null"
            .formatted(self, pid, pid);
    new ProcessBuilder("setsid", "bash", "-c", loop)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
  }

  /** Runs a command to its end and returns its output; fails on a non-zero exit. */
  static String run(
      Duration timeout, Path workDir, List<String> command, Map<String, String> extraEnv) {
    ProcessBuilder builder =
        new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true);
    builder.environment().putAll(extraEnv);
    try {
      Path out = Files.createTempFile("command-", ".log");
      builder.redirectOutput(out.toFile());
      Process process = builder.start();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException("timed out after " + timeout + ": " + command);
      }
      String output = Files.readString(out, StandardCharsets.UTF_8);
      Files.delete(out);
      if (process.exitValue() != 0) {
        throw new IllegalStateException(
            "exit " + process.exitValue() + ": " + command + "\n" + output);
      }
      return output;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted: " + command, e);
    }
  }

  static String run(Duration timeout, String... command) {
    return run(timeout, Path.of("."), List.of(command), Map.of());
  }

  String name() {
    return name;
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** The exit code, waiting up to {@code timeout}; -1 while still running. */
  int waitFor(Duration timeout) {
    try {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** What it printed so far. */
  String log() {
    try {
      return Files.readString(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** SIGTERM; the exit code, or -1 when it was still running after {@code grace}. */
  int terminate(Duration grace) {
    process.destroy();
    return waitFor(grace);
  }

  /** SIGKILL, and waits until it is gone. */
  void kill() {
    process.destroyForcibly();
    waitFor(Duration.ofSeconds(10));
  }

  /** SIGTERM, then SIGKILL after 10 s. */
  @Override
  public void close() {
    if (process.isAlive() && terminate(Duration.ofSeconds(10)) < 0) {
      kill();
    }
  }

  @Override
  public String toString() {
    return name + " (pid " + process.pid() + ")";
  }
}
