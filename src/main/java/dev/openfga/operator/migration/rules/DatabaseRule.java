package dev.openfga.operator.migration.rules;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.migration.rules.Step.Emit;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.util.List;
import java.util.Optional;

/**
 * SPEC section 9, one migration per database at a time: before its Job is created, another
 * Deployment's Job on the same database that may still run, or a migration pod there that has not
 * stopped (a pod outlives a Job deleted by someone else), makes the Deployment wait, with one
 * Normal Event per object waited for. Decided from the operator's Jobs and migration pods on the
 * database ({@link Observation#databaseJobs}, {@link Observation#databasePods}).
 */
final class DatabaseRule {
  private DatabaseRule() {}

  static Optional<Plan> decide(Facts f) {
    List<String> databases = f.databases();
    String ns = f.deployment().getMetadata().getNamespace();
    Optional<Job> other = Database.busyWith(databases, ns, f.jobName(), f.o().databaseJobs());
    if (other.isPresent()) {
      return Optional.of(waitingForJob(f, other.get()));
    }
    return Database.busyPod(databases, f.o().databasePods(), f.o().databaseJobs())
        .map(pod -> waitingForPod(f, pod));
  }

  private static Plan waitingForJob(Facts f, Job other) {
    ObjectMeta meta = other.getMetadata();
    String owner =
        Ownership.controller(other)
            .map(r -> Messages.deployment(meta.getNamespace(), r.getName()))
            .orElse(Messages.SOME_DEPLOYMENT);
    String who =
        Messages.otherDeploymentsJob(owner, meta.getName(), MigrationJob.describedVersion(other));
    return waitingFor(f, meta, who, false);
  }

  private static Plan waitingForPod(Facts f, Pod pod) {
    ObjectMeta meta = pod.getMetadata();
    String who = Messages.migrationPod(meta.getNamespace(), meta.getName(), Database.jobName(pod));
    return waitingFor(f, meta, who, true);
  }

  /** WAITING for {@code who} (a Job, or a pod that has not stopped), one Event per object. */
  private static Plan waitingFor(Facts f, ObjectMeta whose, String who, boolean pod) {
    // the Event is read by this namespace's users: another namespace's names are not theirs
    String told =
        f.deployment().getMetadata().getNamespace().equals(whose.getNamespace())
            ? who
            : Messages.elsewhere(pod);
    // a Job whose create got no answer is remembered without a uid
    String key =
        "waiting/"
            + (whose.getUid() != null
                ? whose.getUid()
                : whose.getNamespace() + "/" + whose.getName());
    Emit event =
        new Emit(EventReason.MigrationWaiting, Messages.waitingEvent(told, pod, f.version()), key);
    return f.plan(
        State.WAITING, Messages.waiting(who, pod), Plan.after(Timing.WHILE_WAITING), event);
  }
}
