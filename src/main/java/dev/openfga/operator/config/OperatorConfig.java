package dev.openfga.operator.config;

import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.Policy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The operator's validated configuration (from flags and their environment fallbacks).
 *
 * @param watchNamespaces the namespaces watched; empty means all namespaces
 * @param leaseNamespace where the leader-election Lease lives (the operator's own namespace)
 * @param metricsAddress host:port, or empty when disabled ({@code 0})
 * @param healthAddress host:port of {@code /healthz} and {@code /readyz}, or empty when disabled
 * @param failureLogLines lines of a failed migration pod's log kept as evidence; 0: none read
 * @param dryRun decide and log, write nothing
 * @param storesAndModels run the FGAStore controller too (its CRD must be installed)
 * @param leaseName the leader-election Lease's name
 * @param modelTestMaxChecks the most checks one FGAModel's tests may expand to
 * @param openfgaServers the base URLs of the OpenFGA servers FGAStores may name, as given
 * @param tuplesPerWrite the most tuples an FGATuples sends in one Write
 */
public record OperatorConfig(
    Set<String> watchNamespaces,
    boolean leaderElect,
    Optional<String> leaseNamespace,
    Optional<String> metricsAddress,
    Optional<String> healthAddress,
    int backoffLimit,
    long activeDeadlineSeconds,
    int ttlSecondsAfterFinished,
    Duration retryCooldown,
    int failureLogLines,
    boolean dryRun,
    boolean storesAndModels,
    String leaseName,
    int modelTestMaxChecks,
    List<String> openfgaServers,
    int tuplesPerWrite) {

  public static final int DEFAULT_FAILURE_LOG_LINES = 20;

  /** {@code --model-test-max-checks}: its default and the most it may be set to. */
  public static final int DEFAULT_MODEL_TEST_MAX_CHECKS = 1000;

  public static final int MODEL_TEST_MAX_CHECKS_LIMIT = 100_000;

  /**
   * {@code --tuples-per-write}: its default (OpenFGA's own limit) and the most it may be set to.
   */
  public static final int DEFAULT_TUPLES_PER_WRITE = 100;

  public static final int TUPLES_PER_WRITE_LIMIT = 1000;

  public OperatorConfig {
    watchNamespaces = Set.copyOf(watchNamespaces);
    openfgaServers = List.copyOf(openfgaServers);
  }

  /** With the default Write size. */
  public OperatorConfig(
      Set<String> watchNamespaces,
      boolean leaderElect,
      Optional<String> leaseNamespace,
      Optional<String> metricsAddress,
      Optional<String> healthAddress,
      int backoffLimit,
      long activeDeadlineSeconds,
      int ttlSecondsAfterFinished,
      Duration retryCooldown,
      int failureLogLines,
      boolean dryRun,
      boolean storesAndModels,
      String leaseName,
      int modelTestMaxChecks,
      List<String> openfgaServers) {
    this(
        watchNamespaces,
        leaderElect,
        leaseNamespace,
        metricsAddress,
        healthAddress,
        backoffLimit,
        activeDeadlineSeconds,
        ttlSecondsAfterFinished,
        retryCooldown,
        failureLogLines,
        dryRun,
        storesAndModels,
        leaseName,
        modelTestMaxChecks,
        openfgaServers,
        DEFAULT_TUPLES_PER_WRITE);
  }

  /** Without the FGAStore controller. */
  public OperatorConfig(
      Set<String> watchNamespaces,
      boolean leaderElect,
      Optional<String> leaseNamespace,
      Optional<String> metricsAddress,
      Optional<String> healthAddress,
      int backoffLimit,
      long activeDeadlineSeconds,
      int ttlSecondsAfterFinished,
      Duration retryCooldown,
      int failureLogLines,
      boolean dryRun) {
    this(
        watchNamespaces,
        leaderElect,
        leaseNamespace,
        metricsAddress,
        healthAddress,
        backoffLimit,
        activeDeadlineSeconds,
        ttlSecondsAfterFinished,
        retryCooldown,
        failureLogLines,
        dryRun,
        false,
        Keys.LEADER_LEASE,
        DEFAULT_MODEL_TEST_MAX_CHECKS,
        List.of());
  }

  /** With the default failure evidence (the last 20 log lines). */
  public OperatorConfig(
      Set<String> watchNamespaces,
      boolean leaderElect,
      Optional<String> leaseNamespace,
      Optional<String> metricsAddress,
      Optional<String> healthAddress,
      int backoffLimit,
      long activeDeadlineSeconds,
      int ttlSecondsAfterFinished,
      Duration retryCooldown) {
    this(
        watchNamespaces,
        leaderElect,
        leaseNamespace,
        metricsAddress,
        healthAddress,
        backoffLimit,
        activeDeadlineSeconds,
        ttlSecondsAfterFinished,
        retryCooldown,
        DEFAULT_FAILURE_LOG_LINES,
        false);
  }

  public boolean watchesAllNamespaces() {
    return watchNamespaces.isEmpty();
  }

  public Policy policy() {
    return new Policy(backoffLimit, activeDeadlineSeconds, ttlSecondsAfterFinished, retryCooldown);
  }
}
