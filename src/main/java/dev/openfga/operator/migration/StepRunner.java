package dev.openfga.operator.migration;

import dev.openfga.operator.kube.Echoes;
import dev.openfga.operator.kube.EventRecorder;
import dev.openfga.operator.kube.JsonPatch;
import dev.openfga.operator.migration.rules.EventReason;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.MigrationJob;
import dev.openfga.operator.migration.rules.Observation;
import dev.openfga.operator.migration.rules.Plan;
import dev.openfga.operator.migration.rules.Reported;
import dev.openfga.operator.migration.rules.StatusRecord;
import dev.openfga.operator.migration.rules.Step;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out a {@link Plan}: each step is one conditional write, in order. The first write that
 * fails throws, and the steps after it are not made (so a failed condition write never lets the
 * failed Job be deleted). Each write's answer replaces the observed object, so the next write to
 * the same object is conditional on what this plan wrote.
 */
final class StepRunner {
  private static final Logger LOG = LoggerFactory.getLogger(StepRunner.class);
  private static final PatchContext JSON_PATCH = PatchContext.of(PatchType.JSON);

  /**
   * A create found its name taken (AlreadyExists), by an object the cache does not hold: the run
   * stops, and the next reconcile reads that name directly ({@link Findings}) instead of creating
   * again and again.
   */
  static final class NameTaken extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** A Job's name (else the record's). */
    final boolean job;

    final transient ResourceID name;

    NameTaken(HasMetadata desired, String namespace) {
      super(
          desired.getKind() + " " + desired.getMetadata().getName() + " exists",
          null,
          false,
          false);
      this.job = desired instanceof Job;
      this.name = new ResourceID(desired.getMetadata().getName(), namespace);
    }
  }

  /**
   * The API server refused to create the Job (SPEC section 10); the reconcile plans again with its
   * answer, which the planner reports. No cause is kept: the server's own text may hold credentials
   * and is only shown masked ({@link MigrationJob#rejection}).
   */
  static final class Rejected extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final String rejection;

    Rejected(String rejection) {
      super("the API server rejected the Job: " + rejection, null, false, false);
      this.rejection = rejection;
    }
  }

  /**
   * Whether an answer to a create refuses the object itself: a quota or an admission webhook or
   * policy (403 and other 4xx), an invalid object (422). Not 401 (the operator's own credentials),
   * 404 (the namespace is gone), 408, 409 (the name is taken: SPEC rule 7) or 429 (throttled), nor
   * a server error or no answer: those are retried as they are.
   */
  static boolean isRejection(int code) {
    return code >= 400
        && code < 500
        && code != 401
        && code != 404
        && code != 408
        && code != 409
        && code != 429;
  }

  private final KubernetesClient client;
  private final DeploymentWrites deployments;
  private final EventRecorder events;
  private final MigrationMetrics metrics;

  /** Told of every Job created and every record written, right after the API server's answer. */
  private final OwnWrites own;

  /** Told of every create and patch of a Job or record just before it is sent. */
  private final Echoes echoes;

  StepRunner(KubernetesClient client, EventRecorder events, MigrationMetrics metrics) {
    this(client, events, metrics, new OwnWrites(), new Echoes());
  }

  StepRunner(
      KubernetesClient client,
      EventRecorder events,
      MigrationMetrics metrics,
      OwnWrites own,
      Echoes echoes) {
    this.client = client;
    this.deployments = new DeploymentWrites(client);
    this.events = events;
    this.metrics = metrics;
    this.own = own;
    this.echoes = echoes;
  }

  /**
   * What {@link #run} would write, one phrase per write, without writing anything (the dry run).
   */
  List<String> describe(Plan plan, Observation o) {
    return StepPhrases.of(plan, o);
  }

  /**
   * The objects one run writes, each replaced by the answer to its last write, and what was done:
   * one short phrase per write, for the reconcile's single log line.
   */
  private static final class Run {
    final Observation o;
    Deployment deployment;
    Job job;
    ConfigMap status;
    final List<String> done = new ArrayList<>();

    /** The ids of the Events the API server did not take. */
    final List<String> unsent = new ArrayList<>();

    Run(Observation o) {
      this.o = o;
      this.deployment = o.deployment();
      this.job = o.job().orElse(null);
      this.status = o.statusConfigMap().orElse(null);
    }
  }

  /**
   * Makes the plan's writes in order and returns what was done, one short phrase per write, for the
   * reconcile's single log line.
   */
  List<String> run(Plan plan, Observation o) {
    Run r = new Run(o);
    for (Step step : plan.steps()) {
      if (step instanceof Step.CreateJob s) {
        createJob(r, s);
      } else if (step instanceof Step.DeleteJob s) {
        ForegroundDelete.of(client, r.job);
        r.done.add("deleted Job " + r.job.getMetadata().getName() + " (" + s.why() + ")");
      } else if (step instanceof Step.PatchJob s) {
        patchJob(r, s);
      } else if (step instanceof Step.WriteStatus
          || step instanceof Step.MarkFirstInstall
          || step instanceof Step.RepairStatusOwner
          || step instanceof Step.ClearRestoreReplicas) {
        writeRecord(r, step);
      } else if (step instanceof Step.Emit s) {
        emit(r, s);
      } else {
        writeDeployment(r, step);
      }
      LOG.debug("{}: done", step.getClass().getSimpleName());
    }
    return r.done;
  }

  private void createJob(Run r, Step.CreateJob s) {
    String ns = r.deployment.getMetadata().getNamespace();
    try {
      r.job = create(s.job(), ns, client.batch().v1().jobs().inNamespace(ns));
    } catch (KubernetesClientException e) {
      if (e.getCode() == 0 || e.getCode() >= 500) {
        // no answer, or the server failed: the Job may exist although the create reported
        // an error; until the cache says, it holds its database as a created one does
        own.jobCreated(s.job(), r.o.now());
      }
      if (isRejection(e.getCode())) {
        throw new Rejected(
            MigrationJob.rejection(
                s.job(), e.getCode(), e.getStatus() == null ? null : e.getStatus().getMessage()));
      }
      throw e;
    }
    MigrationJob.droppedPodReplacementPolicy(s.job(), r.job)
        .filter(w -> !warnedOfDroppedPolicy.getAndSet(true))
        .ifPresent(LOG::warn);
    own.jobCreated(r.job, r.o.now());
    metrics.started(r.deployment);
    r.done.add("created Job " + r.job.getMetadata().getName() + " for " + s.version());
  }

  private void patchJob(Run r, Step.PatchJob s) {
    boolean firstRecordOfFailure =
        s.annotations().containsKey(Keys.RETAIN_UNTIL)
            && MigrationJob.annotation(r.job, Keys.RETAIN_UNTIL) == null;
    r.job = patchJob(r.job, s);
    if (firstRecordOfFailure) {
      metrics.failed(r.deployment);
    }
    r.done.add(
        "Job TTL "
            + (s.ttlSecondsAfterFinished() == null ? "removed" : s.ttlSecondsAfterFinished() + "s")
            + (s.annotations().containsKey(Keys.RETAIN_UNTIL)
                ? ", kept until " + s.annotations().get(Keys.RETAIN_UNTIL)
                : ""));
  }

  /**
   * The steps that write the record: each remembered until the cache shows it ({@link OwnWrites}).
   */
  private void writeRecord(Run r, Step step) {
    ConfigMap before = r.status;
    if (step instanceof Step.WriteStatus s) {
      r.status = writeStatus(r.deployment, r.status, s.data());
      r.done.add("recorded version " + s.data().get(Keys.DATA_VERSION));
      if (r.job != null) {
        metrics.succeeded(r.deployment, MigrationJob.runTime(r.job), r.o.now());
      }
    } else if (step instanceof Step.MarkFirstInstall) {
      r.status = writeStatus(r.deployment, r.status, Map.of(Keys.DATA_RESTORE_REPLICAS, "true"));
      r.done.add("marked a first install in " + r.status.getMetadata().getName());
    } else if (step instanceof Step.RepairStatusOwner) {
      r.status = writeStatus(r.deployment, r.status, null);
      r.done.add("re-owned " + r.status.getMetadata().getName());
    } else {
      var data = r.status == null ? null : r.status.getData();
      if (data == null || !data.containsKey(Keys.DATA_RESTORE_REPLICAS)) {
        return;
      }
      JsonPatch patch = JsonPatch.guardedBy(r.status);
      patch.remove("/data/" + JsonPatch.escape(Keys.DATA_RESTORE_REPLICAS));
      r.status = patchOwn(r.status, patch);
      r.done.add("first install done");
    }
    own.recordWritten(before, r.status, r.o.now());
  }

  /** The steps that write the Deployment: its condition, annotations, replicas. */
  private void writeDeployment(Run r, Step step) {
    if (step instanceof Step.MarkReported s) {
      // an Event the API server did not take is not listed: the next pass sends it again
      List<String> ids = new ArrayList<>(s.ids());
      ids.removeAll(r.unsent);
      r.deployment = deployments.markReported(r.deployment, ids, r.done);
    } else {
      r.deployment = deployments.write(r.deployment, step, r.done);
    }
  }

  private void emit(Run r, Step.Emit s) {
    EventRecorder.Outcome outcome =
        events.send(
            r.deployment, s.reason().name(), s.reason().warning(), s.message(), s.key(), r.o.now());
    if (outcome == EventRecorder.Outcome.FAILED) {
      r.unsent.add(Reported.id(r.deployment, s));
    }
    if (outcome != EventRecorder.Outcome.SENT) {
      return;
    }
    if (s.reason() == EventReason.MigrationJobConflict) {
      metrics.collision(r.deployment, "job");
    } else if (s.reason() == EventReason.MigrationStatusConflict) {
      metrics.collision(r.deployment, "configmap");
    } else if (s.reason() == EventReason.JobRejected) {
      metrics.rejected(r.deployment);
    }
  }

  /**
   * The observed object as the target of a write: fabric8 then needs no read before a patch (with
   * {@code withName(...)} it would GET the object first, one more request per write).
   */
  private <T extends HasMetadata> Resource<T> resource(T observed) {
    return client.resource(observed);
  }

  /**
   * Creates the record, or patches the existing one: its data (when given), the three labels (other
   * labels kept) and the controller reference to this Deployment (other owner references kept).
   */
  private ConfigMap writeStatus(
      Deployment deployment, ConfigMap current, Map<String, String> data) {
    String ns = deployment.getMetadata().getNamespace();
    if (current == null) {
      return create(StatusRecord.build(deployment, data), ns, client.configMaps().inNamespace(ns));
    }
    JsonPatch patch = JsonPatch.guardedBy(current);
    var labels = current.getMetadata().getLabels();
    if (labels == null) {
      patch.add("/metadata/labels", StatusRecord.labels());
    } else {
      StatusRecord.labels()
          .forEach((k, v) -> patch.add("/metadata/labels/" + JsonPatch.escape(k), v));
    }
    List<OwnerReference> owners = new ArrayList<>();
    if (current.getMetadata().getOwnerReferences() != null) {
      current.getMetadata().getOwnerReferences().stream()
          .filter(r -> !Boolean.TRUE.equals(r.getController()))
          .forEach(owners::add);
    }
    owners.add(MigrationJob.ownerReference(deployment));
    patch.add("/metadata/ownerReferences", owners);
    if (data != null) {
      patch.add("/data", data);
    }
    return patchOwn(current, patch);
  }

  /** A guarded patch of a Job or record of the operator's, its watch event an echo. */
  private <T extends HasMetadata> T patchOwn(T current, JsonPatch patch) {
    echoes.patch(current, Instant.now());
    try {
      T patched = resource(current).patch(JSON_PATCH, patch.json());
      echoes.written(patched);
      return patched;
    } catch (RuntimeException e) {
      echoes.failed(current, current.getMetadata().getNamespace());
      throw e;
    }
  }

  private final AtomicBoolean warnedOfDroppedPolicy = new AtomicBoolean();

  /**
   * Creates the object; when its name is taken, says so to the reconcile ({@link NameTaken})
   * instead of retrying the create.
   */
  private <T extends HasMetadata> T create(
      T desired, String namespace, NonNamespaceOperation<T, ?, ? extends Resource<T>> in) {
    echoes.create(desired, namespace, Instant.now());
    try {
      T created = in.resource(desired).create();
      echoes.written(created);
      return created;
    } catch (RuntimeException e) {
      echoes.failed(desired, namespace);
      if (!(e instanceof KubernetesClientException k) || k.getCode() != 409) {
        throw e;
      }
      throw new NameTaken(desired, namespace);
    }
  }

  private Job patchJob(Job job, Step.PatchJob s) {
    JsonPatch patch = JsonPatch.guardedBy(job);
    Integer ttl = job.getSpec().getTtlSecondsAfterFinished();
    if (s.ttlSecondsAfterFinished() == null) {
      if (ttl != null) {
        patch.remove("/spec/ttlSecondsAfterFinished");
      }
    } else {
      patch.add("/spec/ttlSecondsAfterFinished", s.ttlSecondsAfterFinished());
    }
    Map<String, String> annotations = job.getMetadata().getAnnotations();
    for (var entry : s.annotations().entrySet()) {
      if (entry.getValue() == null) {
        if (annotations != null && annotations.containsKey(entry.getKey())) {
          patch.remove("/metadata/annotations/" + JsonPatch.escape(entry.getKey()));
        }
      } else {
        patch.put("/metadata/annotations", annotations, entry.getKey(), entry.getValue());
        if (annotations == null) {
          annotations = Map.of(entry.getKey(), entry.getValue());
        }
      }
    }
    if (!patch.changesSomething()) {
      return job;
    }
    Job patched = patchOwn(job, patch);
    LOG.debug(
        "set ttlSecondsAfterFinished={} on Job {}{}",
        s.ttlSecondsAfterFinished(),
        job.getMetadata().getName(),
        s.annotations().isEmpty()
            ? ""
            : " and kept it for diagnostics until " + s.annotations().get(Keys.RETAIN_UNTIL));
    return patched;
  }
}
