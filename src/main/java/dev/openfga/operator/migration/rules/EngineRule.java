package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.ClearRestoreReplicas;
import dev.openfga.operator.migration.rules.Step.Emit;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Rule 4: the datastore engines that need no Job — {@code memory}, and {@code sqlite}, whose file
 * lives in the pod and is migrated by an initContainer (without one: blocked, saying what to add).
 * A switch away from a failing database ends its failure. No version is ever recorded, so the
 * first-install replica restore (rule 11) goes by the Deployment's generation, or by the record's
 * first-install mark of a sqlite install blocked before its scale (docs/design.md).
 */
final class EngineRule {
  private EngineRule() {}

  static Optional<Plan> decide(Facts f) {
    Container c = f.migrating();
    if (!MigrationJob.needsNoJob(c)) {
      return Optional.empty();
    }
    Deployment d = f.deployment();
    String engine = MigrationJob.literalEngine(c).orElse("");
    List<Step> steps = new ArrayList<>();
    // a switch away from a failing database ends its failure
    FailedCondition.cleared(d, f.now())
        .ifPresent(cleared -> steps.add(Step.SetConditions.to(false, cleared)));
    if (f.hasRetryAfter()) {
      steps.add(new Step.ClearRetryAfter());
    }
    if (engine.equals("sqlite")) {
      Optional<Container> init = sqliteMigration(d);
      if (init.isEmpty()) {
        return Optional.of(sqliteMissing(f, steps));
      }
      steps.add(
          new Emit(
              EventReason.MigrationSkipped,
              Messages.sqliteSkipped(init.get().getName()),
              "skipped/sqlite"));
    }
    return Optional.of(firstInstall(f, engine, steps));
  }

  /**
   * Sqlite without its migrate initContainer: blocked. A first install blocked before its scale is
   * marked in the record (no version), so that the fix still scales it.
   */
  private static Plan sqliteMissing(Facts f, List<Step> steps) {
    DeploymentSettings s = f.settings();
    // a record here is a first install's mark (or a record from before a switch to this engine),
    // or someone else's ConfigMap
    boolean marked = f.restorePending();
    boolean firstInstall =
        Replicas.needsRestore(f.deployment(), s)
            && (marked || (Replicas.unchanged(f.deployment()) && f.reading().isEmpty()));
    String problem =
        Messages.sqliteMigrationMissing(
            f.ref(), firstInstall ? s.desiredReplicas() : Optional.empty());
    if (firstInstall && !marked) {
      steps.add(new Step.MarkFirstInstall());
    }
    steps.add(new Emit(EventReason.SqliteMigrationMissing, problem, "sqlite/missing"));
    return f.blocked(problem, steps);
  }

  /** SKIPPED, with the first install's replicas restored where that is known to be one. */
  private static Plan firstInstall(Facts f, String engine, List<Step> steps) {
    Deployment d = f.deployment();
    DeploymentSettings s = f.settings();
    boolean marked = f.restorePending();
    if (Replicas.unchanged(d)) {
      // never changed since it was created: a first install
      steps.addAll(Replicas.restored(d, s));
      if (marked) {
        steps.add(new ClearRestoreReplicas());
      }
    } else if (marked) {
      // a first install blocked (SqliteMigrationMissing) before its scale, fixed since
      if (!Replicas.needsRestore(d, s)) {
        // scaled by someone, or nothing to restore: the first install is over
        steps.add(new ClearRestoreReplicas());
      } else if (!Replicas.observedByItsController(d)) {
        // the Deployment controller has not seen the change yet: its status write wakes this
        return f.plan(State.SKIPPED, Messages.scaleWaitsForController(engine), Plan.done(), steps);
      } else if (Replicas.onlyNewPodTemplates(d)) {
        steps.addAll(Replicas.restored(d, s));
        steps.add(new ClearRestoreReplicas());
      } else {
        // changed otherwise since (a scale and back, other spec fields): the replicas are theirs
        steps.add(new ClearRestoreReplicas());
      }
    }
    return f.plan(State.SKIPPED, Messages.noMigration(engine), Plan.done(), steps);
  }

  /**
   * The initContainer that runs {@code openfga migrate} on a sqlite file before the server starts:
   * an OpenFGA image (repository {@code .../openfga}) with {@code migrate} as its first argument.
   */
  static Optional<Container> sqliteMigration(Deployment d) {
    var pod =
        d.getSpec() == null || d.getSpec().getTemplate() == null
            ? null
            : d.getSpec().getTemplate().getSpec();
    if (pod == null || pod.getInitContainers() == null) {
      return Optional.empty();
    }
    return pod.getInitContainers().stream()
        .filter(i -> i.getArgs() != null && !i.getArgs().isEmpty())
        .filter(i -> "migrate".equals(i.getArgs().get(0)))
        .filter(i -> isOpenFgaImage(i.getImage()))
        .findFirst();
  }

  private static boolean isOpenFgaImage(String image) {
    if (image == null) {
      return false;
    }
    String repository = image.split("@", 2)[0];
    int slash = repository.lastIndexOf('/');
    String last = repository.substring(slash + 1);
    int colon = last.indexOf(':');
    return (colon < 0 ? last : last.substring(0, colon)).equals("openfga");
  }
}
