package dev.openfga.operator.migration.rules;

import dev.openfga.operator.kube.Names;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.migration.rules.Plan.Next;
import dev.openfga.operator.migration.rules.Plan.State;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * What the rules read: the observation and the operator's policy, with what is derived from them
 * once — the Deployment's settings, the container it migrates with and the version it runs, what
 * its record says, a re-run request — and the steps every later decision starts with ({@link
 * #notes}: the Events about unusable annotation values, the record's owner repaired, ...).
 */
record Facts(
    Observation o,
    Policy policy,
    DeploymentSettings settings,
    Optional<Container> container,
    Optional<String> desired,
    Optional<StatusRecord.Reading> reading,
    Optional<String> request,
    Optional<Instant> futureRequest,
    List<Step> notes) {

  static Facts of(Observation o, Policy policy) {
    Deployment d = o.deployment();
    DeploymentSettings s = DeploymentSettings.of(d);
    Optional<Container> container =
        Optional.ofNullable(s.containerName())
            .flatMap(
                name -> containers(d).stream().filter(c -> name.equals(c.getName())).findFirst());
    Optional<StatusRecord.Reading> reading =
        o.statusConfigMap().map(cm -> StatusRecord.read(cm, d));
    Optional<String> handled =
        reading
            .filter(StatusRecord.Reading.Recorded.class::isInstance)
            .flatMap(r -> ((StatusRecord.Reading.Recorded) r).handledRequest());
    // SPEC section 9: a re-run request newer than the one last handled; one in the future would
    // hide every request before it once handled, so it waits until its time
    Optional<String> request = Rerun.newRequest(s.requestedAt(), handled);
    Optional<Instant> future =
        request
            .flatMap(Timestamps::parse)
            .filter(at -> at.isAfter(o.now().plus(Timing.CLOCK_SKEW)));
    List<Step> notes = new ArrayList<>();
    for (String problem : s.problems()) {
      notes.add(new Step.Emit(EventReason.InvalidConfiguration, problem, "invalid/" + problem));
    }
    return new Facts(
        o,
        policy,
        s,
        container,
        container.flatMap(c -> ImageVersion.of(c.getImage())),
        reading,
        future.isPresent() ? Optional.empty() : request,
        future,
        List.copyOf(notes));
  }

  Deployment deployment() {
    return o.deployment();
  }

  Instant now() {
    return o.now();
  }

  Optional<Job> job() {
    return o.job();
  }

  /** The container the Job migrates with; only for the rules after {@link ContainerRule}. */
  Container migrating() {
    return container.orElseThrow();
  }

  /** The version the Deployment runs; only for the rules after {@link ImageRule}. */
  String version() {
    return desired.orElseThrow();
  }

  /** {@code namespace/name} of the Deployment, as problems name it. */
  String ref() {
    return deployment().getMetadata().getNamespace() + "/" + deployment().getMetadata().getName();
  }

  String jobName() {
    return Names.job(deployment().getMetadata().getName());
  }

  /** The record, when it is the operator's and this Deployment's. */
  Optional<StatusRecord.Reading.Recorded> record() {
    return reading
        .filter(StatusRecord.Reading.Recorded.class::isInstance)
        .map(StatusRecord.Reading.Recorded.class::cast);
  }

  Optional<String> recorded() {
    return record().flatMap(StatusRecord.Reading.Recorded::version);
  }

  Optional<String> handled() {
    return record().flatMap(StatusRecord.Reading.Recorded::handledRequest);
  }

  /** The record's first-install mark: its replicas are still to be restored (rule 11). */
  boolean restorePending() {
    return record().map(StatusRecord.Reading.Recorded::restorePending).orElse(false);
  }

  /** The keys of the databases the Deployment's Job migrates (SPEC section 9). */
  List<String> databases() {
    return Database.keys(
        deployment().getMetadata().getNamespace(), migrating(), settings.migrationSecret());
  }

  /**
   * ADR 0003: the Job's {@code openfga migrate} is running, never to be interrupted: its pod is
   * ready (the Job's count), or running in the migration-pod cache (a mesh proxy that is not ready
   * keeps the pod from Ready while migrate runs; only pods labelled with a database key are cached,
   * so a Job without one, or a Helm hook's, is judged by its ready count alone). A Complete Job's
   * migrate has exited, whatever a pod on a lost node still shows.
   */
  boolean running(Job job) {
    return !MigrationJob.isComplete(job)
        && (MigrationJob.isRunning(job) || Database.hasRunningPod(job, o.databasePods()));
  }

  /** The annotation is there, parseable or not: cleared once a Job runs. */
  boolean hasRetryAfter() {
    var annotations = deployment().getMetadata().getAnnotations();
    return annotations != null && annotations.containsKey(Keys.RETRY_AFTER);
  }

  /** These facts, with {@code more} after the notes every later decision starts with. */
  Facts withNotes(List<Step> more) {
    if (more.isEmpty()) {
      return this;
    }
    List<Step> all = new ArrayList<>(notes);
    all.addAll(more);
    return new Facts(
        o, policy, settings, container, desired, reading, request, futureRequest, List.copyOf(all));
  }

  /** A decision: the notes, then the rule's own steps. */
  Plan plan(State state, String summary, Next next, List<Step> steps) {
    List<Step> all = new ArrayList<>(notes.size() + steps.size());
    all.addAll(notes);
    all.addAll(steps);
    return new Plan(state, summary, all, next);
  }

  Plan plan(State state, String summary, Next next, Step... steps) {
    return plan(state, summary, next, Arrays.asList(steps));
  }

  /** A user error: reported (the notes, the rule's Events), looked at again with backoff. */
  Plan blocked(String problem, Step... steps) {
    return blocked(problem, Arrays.asList(steps));
  }

  Plan blocked(String problem, List<Step> steps) {
    return plan(State.BLOCKED, problem, new Next.Blocked(problem), steps);
  }

  static List<Container> containers(Deployment d) {
    if (d.getSpec() == null
        || d.getSpec().getTemplate() == null
        || d.getSpec().getTemplate().getSpec() == null
        || d.getSpec().getTemplate().getSpec().getContainers() == null) {
      return List.of();
    }
    return d.getSpec().getTemplate().getSpec().getContainers();
  }

  static List<String> containerNames(Deployment d) {
    return containers(d).stream().map(Container::getName).toList();
  }
}
