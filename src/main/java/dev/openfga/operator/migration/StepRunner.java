package dev.openfga.operator.migration;

import dev.openfga.operator.kube.Echoes;
import dev.openfga.operator.kube.EventRecorder;
import dev.openfga.operator.kube.JsonPatch;
import dev.openfga.operator.kube.Names;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.EventReason;
import dev.openfga.operator.migration.rules.Keys;
import dev.openfga.operator.migration.rules.MigrationJob;
import dev.openfga.operator.migration.rules.Observation;
import dev.openfga.operator.migration.rules.Plan;
import dev.openfga.operator.migration.rules.Reported;
import dev.openfga.operator.migration.rules.StatusRecord;
import dev.openfga.operator.migration.rules.Step;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
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
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
    this.events = events;
    this.metrics = metrics;
    this.own = own;
    this.echoes = echoes;
  }

  /**
   * What {@link #run} would write, one phrase per write, without writing anything (the dry run).
   */
  List<String> describe(Plan plan, Observation o) {
    Deployment deployment = o.deployment();
    String job = Names.job(deployment.getMetadata().getName());
    String record = Names.statusConfigMap(deployment.getMetadata().getName());
    var annotations = deployment.getMetadata().getAnnotations();
    List<String> would = new ArrayList<>();
    for (Step step : plan.steps()) {
      if (step instanceof Step.SetConditions s) {
        would.add("set condition " + s.summary());
      } else if (step instanceof Step.WriteStatus s) {
        would.add("record version " + s.data().get(Keys.DATA_VERSION) + " in ConfigMap " + record);
      } else if (step instanceof Step.MarkFirstInstall) {
        would.add(
            "record "
                + Keys.DATA_RESTORE_REPLICAS
                + "=true (a first install, no version) in ConfigMap "
                + record);
      } else if (step instanceof Step.RepairStatusOwner) {
        would.add("point the owner of ConfigMap " + record + " at this Deployment");
      } else if (step instanceof Step.CreateJob s) {
        would.add(
            "create Job "
                + s.job().getMetadata().getName()
                + " for version "
                + s.version()
                + " (image "
                + s.job().getSpec().getTemplate().getSpec().getContainers().get(0).getImage()
                + ")");
      } else if (step instanceof Step.DeleteJob s) {
        would.add("delete Job " + job + " (" + s.why() + ")");
      } else if (step instanceof Step.PatchJob s) {
        would.add(
            "set ttlSecondsAfterFinished="
                + s.ttlSecondsAfterFinished()
                + (s.annotations().isEmpty() ? "" : " and annotations " + s.annotations().keySet())
                + " on Job "
                + job);
      } else if (step instanceof Step.SetRetryAfter s) {
        would.add("annotate " + Keys.RETRY_AFTER + "=" + Timestamps.format(s.at()));
      } else if (step instanceof Step.ClearRetryAfter) {
        if (annotations != null && annotations.containsKey(Keys.RETRY_AFTER)) {
          would.add("remove annotation " + Keys.RETRY_AFTER);
        }
      } else if (step instanceof Step.Scale s) {
        would.add("scale 0 -> " + s.replicas());
      } else if (step instanceof Step.ClearRestoreReplicas) {
        would.add("remove " + Keys.DATA_RESTORE_REPLICAS + " from ConfigMap " + record);
      } else if (step instanceof Step.MarkReported s) {
        would.add(
            s.ids().isEmpty()
                ? "remove annotation " + Keys.REPORTED_EVENTS
                : "annotate " + Keys.REPORTED_EVENTS + "=" + String.join(",", s.ids()));
      } else if (step instanceof Step.Emit s) {
        would.add("emit " + s.reason().type() + " Event " + s.reason() + ": " + s.message());
      }
    }
    return would;
  }

  /**
   * Makes the plan's writes in order and returns what was done, one short phrase per write, for the
   * reconcile's single log line.
   */
  List<String> run(Plan plan, Observation o) {
    Deployment deployment = o.deployment();
    Job job = o.job().orElse(null);
    ConfigMap status = o.statusConfigMap().orElse(null);
    String ns = deployment.getMetadata().getNamespace();
    String name = deployment.getMetadata().getName();
    List<String> done = new ArrayList<>();
    List<String> unsent = new ArrayList<>();
    for (Step step : plan.steps()) {
      if (step instanceof Step.SetConditions s) {
        JsonPatch patch = JsonPatch.guardedBy(deployment);
        if (deployment.getStatus() == null) {
          patch.add("/status", Map.of("conditions", s.conditions()));
        } else {
          patch.add("/status/conditions", s.conditions());
        }
        deployment = resource(deployment).subresource("status").patch(JSON_PATCH, patch.json());
        done.add("condition " + s.summary());
      } else if (step instanceof Step.WriteStatus s) {
        ConfigMap before = status;
        status = writeStatus(deployment, status, s.data());
        own.recordWritten(before, status, o.now());
        done.add("recorded version " + s.data().get(Keys.DATA_VERSION));
        if (job != null) {
          metrics.succeeded(deployment, MigrationJob.runTime(job), o.now());
        }
      } else if (step instanceof Step.MarkFirstInstall) {
        ConfigMap before = status;
        status = writeStatus(deployment, status, Map.of(Keys.DATA_RESTORE_REPLICAS, "true"));
        own.recordWritten(before, status, o.now());
        done.add("marked a first install in " + status.getMetadata().getName());
      } else if (step instanceof Step.RepairStatusOwner) {
        ConfigMap before = status;
        status = writeStatus(deployment, status, null);
        own.recordWritten(before, status, o.now());
        done.add("re-owned " + status.getMetadata().getName());
      } else if (step instanceof Step.CreateJob s) {
        try {
          job = create(s.job(), ns, client.batch().v1().jobs().inNamespace(ns));
        } catch (KubernetesClientException e) {
          if (e.getCode() == 0 || e.getCode() >= 500) {
            // no answer, or the server failed: the Job may exist although the create reported
            // an error; until the cache says, it holds its database as a created one does
            own.jobCreated(s.job(), o.now());
          }
          if (isRejection(e.getCode())) {
            throw new Rejected(
                MigrationJob.rejection(
                    s.job(),
                    e.getCode(),
                    e.getStatus() == null ? null : e.getStatus().getMessage()));
          }
          throw e;
        }
        MigrationJob.droppedPodReplacementPolicy(s.job(), job)
            .filter(w -> !warnedOfDroppedPolicy.getAndSet(true))
            .ifPresent(LOG::warn);
        own.jobCreated(job, o.now());
        metrics.started(deployment);
        done.add("created Job " + job.getMetadata().getName() + " for " + s.version());
      } else if (step instanceof Step.DeleteJob s) {
        deleteJob(job);
        done.add("deleted Job " + job.getMetadata().getName() + " (" + s.why() + ")");
      } else if (step instanceof Step.PatchJob s) {
        boolean firstRecordOfFailure =
            s.annotations().containsKey(Keys.RETAIN_UNTIL)
                && MigrationJob.annotation(job, Keys.RETAIN_UNTIL) == null;
        job = patchJob(job, s);
        if (firstRecordOfFailure) {
          metrics.failed(deployment);
        }
        done.add(
            "Job TTL "
                + (s.ttlSecondsAfterFinished() == null
                    ? "removed"
                    : s.ttlSecondsAfterFinished() + "s")
                + (s.annotations().containsKey(Keys.RETAIN_UNTIL)
                    ? ", kept until " + s.annotations().get(Keys.RETAIN_UNTIL)
                    : ""));
      } else if (step instanceof Step.SetRetryAfter s) {
        JsonPatch patch = JsonPatch.guardedBy(deployment);
        patch.put(
            "/metadata/annotations",
            deployment.getMetadata().getAnnotations(),
            Keys.RETRY_AFTER,
            Timestamps.format(s.at()));
        deployment = resource(deployment).patch(JSON_PATCH, patch.json());
        done.add("no new Job before " + Timestamps.format(s.at()));
      } else if (step instanceof Step.ClearRetryAfter) {
        var annotations = deployment.getMetadata().getAnnotations();
        if (annotations != null && annotations.containsKey(Keys.RETRY_AFTER)) {
          JsonPatch patch = JsonPatch.guardedBy(deployment);
          patch.remove("/metadata/annotations/" + JsonPatch.escape(Keys.RETRY_AFTER));
          deployment = resource(deployment).patch(JSON_PATCH, patch.json());
          done.add("cleared " + Keys.RETRY_AFTER);
        }
      } else if (step instanceof Step.ClearRestoreReplicas) {
        var data = status == null ? null : status.getData();
        if (data != null && data.containsKey(Keys.DATA_RESTORE_REPLICAS)) {
          JsonPatch patch = JsonPatch.guardedBy(status);
          patch.remove("/data/" + JsonPatch.escape(Keys.DATA_RESTORE_REPLICAS));
          ConfigMap before = status;
          status = patchOwn(status, patch);
          own.recordWritten(before, status, o.now());
          done.add("first install done");
        }
      } else if (step instanceof Step.Scale s) {
        JsonPatch patch = JsonPatch.guardedBy(deployment);
        patch.add("/spec/replicas", s.replicas());
        deployment = resource(deployment).patch(JSON_PATCH, patch.json());
        done.add("scaled 0 -> " + s.replicas());
      } else if (step instanceof Step.MarkReported s) {
        // an Event the API server did not take is not listed: the next pass sends it again
        List<String> ids = new ArrayList<>(s.ids());
        ids.removeAll(unsent);
        deployment = markReported(deployment, ids, done);
      } else if (step instanceof Step.Emit s) {
        EventRecorder.Outcome outcome =
            events.send(deployment, s.reason(), s.message(), s.key(), o.now());
        if (outcome == EventRecorder.Outcome.FAILED) {
          unsent.add(Reported.id(deployment, s));
        }
        boolean fresh = outcome == EventRecorder.Outcome.SENT;
        if (fresh && s.reason() == EventReason.MigrationJobConflict) {
          metrics.collision(deployment, "job");
        } else if (fresh && s.reason() == EventReason.MigrationStatusConflict) {
          metrics.collision(deployment, "configmap");
        } else if (fresh && s.reason() == EventReason.JobRejected) {
          metrics.rejected(deployment);
        }
      }
      LOG.debug("{}: done", step.getClass().getSimpleName());
    }
    return done;
  }

  /**
   * Lists the Events about the Deployment's lasting state that were sent ({@link
   * Keys#REPORTED_EVENTS}): a guarded patch of that one annotation, only when the list changes
   * (none left: the annotation is removed). Through the status subresource, as the Deployment
   * controller writes its revision annotation: the API server counts every other change of a
   * Deployment's annotations in its {@code metadata.generation} (they are copied to its
   * ReplicaSets), which would make it look unobserved (progressing, to Argo CD and Flux) and spoil
   * the generation the first-install rule of memory and sqlite reads.
   */
  private Deployment markReported(Deployment deployment, List<String> ids, List<String> done) {
    if (new java.util.HashSet<>(ids).equals(Reported.recorded(deployment))) {
      return deployment;
    }
    var annotations = deployment.getMetadata().getAnnotations();
    JsonPatch patch = JsonPatch.guardedBy(deployment);
    if (ids.isEmpty()) {
      patch.remove("/metadata/annotations/" + JsonPatch.escape(Keys.REPORTED_EVENTS));
      done.add("cleared " + Keys.REPORTED_EVENTS);
    } else {
      patch.put("/metadata/annotations", annotations, Keys.REPORTED_EVENTS, String.join(",", ids));
      done.add("listed " + ids.size() + " Event(s) in " + Keys.REPORTED_EVENTS);
    }
    return resource(deployment).subresource("status").patch(JSON_PATCH, patch.json());
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

  /**
   * Foreground delete with UID and resourceVersion preconditions: the Job object (and its name)
   * stays until its pod is gone, so a replacement can never overlap a running migration; and a Job
   * that changed or was replaced since it was observed is not deleted. NotFound is success.
   */
  private void deleteJob(Job job) {
    DeleteOptions options =
        new DeleteOptionsBuilder()
            .withPropagationPolicy("Foreground")
            .withNewPreconditions()
            .withUid(job.getMetadata().getUid())
            .withResourceVersion(job.getMetadata().getResourceVersion())
            .endPreconditions()
            .build();
    String url =
        client.getMasterUrl().toString().replaceAll("/$", "")
            + "/apis/batch/v1/namespaces/"
            + job.getMetadata().getNamespace()
            + "/jobs/"
            + job.getMetadata().getName();
    HttpRequest request =
        client
            .getHttpClient()
            .newHttpRequestBuilder()
            .uri(url)
            .method("DELETE", "application/json", Serialization.asJson(options))
            .build();
    HttpResponse<String> response;
    try {
      response = client.getHttpClient().sendAsync(request, String.class).get(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KubernetesClientException(
          "interrupted deleting Job " + job.getMetadata().getName(), e);
    } catch (ExecutionException | TimeoutException e) {
      throw new KubernetesClientException(
          "deleting Job " + job.getMetadata().getName() + " failed: " + e.getMessage(), e);
    }
    int code = response.code();
    if (code == 404 || (code >= 200 && code < 300)) {
      return;
    }
    throw new KubernetesClientException(
        "deleting Job "
            + job.getMetadata().getName()
            + " failed: HTTP "
            + code
            + " "
            + response.body(),
        code,
        null);
  }
}
