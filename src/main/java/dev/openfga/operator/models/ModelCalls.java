package dev.openfga.operator.models;

import dev.openfga.operator.openfga.ApiException;
import dev.openfga.operator.openfga.CallFailure;
import dev.openfga.operator.openfga.Connector;
import dev.openfga.operator.openfga.Credentials;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.OpenFgaCallLimit;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.stores.StoreCalls;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the calls of one FGAModel reconcile ({@link ModelStep}) and holds the API client they share
 * once connected. A call that fails is answered, not thrown.
 */
final class ModelCalls {
  private static final Logger LOG = LoggerFactory.getLogger(ModelCalls.class);

  /**
   * A suite holds its slot at least this long before it yields it to a reconcile that found none
   * free ({@link OpenFgaCallLimit#turnedAway}); shorter than {@link OpenFgaCallLimit#BUSY_AGAIN},
   * so that the slot is free when that reconcile comes back.
   */
  static final Duration SLICE = Duration.ofSeconds(1);

  private final Connector connector;
  private final Publication publication;
  private final TestRuns runs;
  private final OpenFgaCallLimit limit;
  private final Clock clock;
  private final long turnedAway;
  private final long started;
  private FgaApi api;

  /**
   * @param turnedAway how many reconciles the limit had turned away before this one took its slot
   * @param started when this reconcile took its slot ({@link System#nanoTime})
   */
  ModelCalls(
      Connector connector,
      Publication publication,
      TestRuns runs,
      OpenFgaCallLimit limit,
      Clock clock,
      long turnedAway,
      long started) {
    this.connector = connector;
    this.publication = publication;
    this.runs = runs;
    this.limit = limit;
    this.clock = clock;
    this.turnedAway = turnedAway;
    this.started = started;
  }

  /** Makes the call {@code step} for the FGAModel of {@code o}; its answer. */
  ModelAnswer run(ModelStep step, ModelObservation o) throws InterruptedException {
    try {
      if (step instanceof ModelStep.ListModels list) {
        api = connect(o.store().orElseThrow());
        return new ModelAnswer.Models(api.listModels(list.storeId()));
      } else if (step instanceof ModelStep.RunTests tests) {
        return runTests(o, tests);
      } else if (step instanceof ModelStep.WriteModel write) {
        return write(o, write);
      } else if (step instanceof ModelStep.Publish publish) {
        return publication.publish(o.model(), publish);
      }
      throw new IllegalArgumentException("no such step: " + step);
    } catch (IOException e) {
      return new ModelAnswer.Failed(CallFailure.of(e));
    }
  }

  /**
   * A slice of the run of the tests: the slot is this reconcile's for {@link #SLICE} at least, then
   * until someone waits for one.
   */
  private ModelAnswer runTests(ModelObservation o, ModelStep.RunTests step)
      throws Credentials.CredentialsException, InterruptedException {
    String uid = o.model().getMetadata().getUid();
    TestRuns.Run run = runs.start(uid, step.key(), o.now());
    AssertionRunner.Outcome outcome;
    try {
      outcome =
          AssertionRunner.resume(
              api,
              ModelAssertions.scratchName(uid),
              step.model(),
              step.tests(),
              run.progress,
              () ->
                  System.nanoTime() - started >= SLICE.toNanos()
                      && limit.turnedAway() != turnedAway);
    } catch (Credentials.CredentialsException e) {
      throw e;
    } catch (IOException e) {
      Instant at = clock.instant();
      return new ModelAnswer.TestsErred(e.getMessage(), runs.erred(uid, at), at);
    }
    Instant at = clock.instant();
    if (outcome.state() == AssertionRunner.State.YIELDED) {
      runs.yielded(uid, at);
      return new ModelAnswer.TestsYielded(run.progress.requestsMade(), at);
    }
    runs.done(uid);
    return new ModelAnswer.TestsRan(Optional.ofNullable(outcome.failure()));
  }

  private ModelAnswer write(ModelObservation o, ModelStep.WriteModel step)
      throws IOException, InterruptedException {
    String modelId;
    try {
      modelId = api.writeModel(step.storeId(), step.model());
    } catch (ApiException e) {
      if (!e.refused()) {
        throw e;
      }
      return new ModelAnswer.WriteRefused(e.detail());
    }
    LOG.atInfo()
        .addKeyValue("fgamodel", ref(o.model()))
        .addKeyValue("modelId", modelId)
        .log(
            "wrote authorization model to store {} at {}",
            step.storeId(),
            o.store().orElseThrow().getSpec().getOpenfgaRef().getUrl());
    return new ModelAnswer.Written(modelId);
  }

  /** The API client for the store's server, with its credentials (read from the Secret now). */
  private FgaApi connect(FGAStore store) throws Credentials.CredentialsException {
    return StoreCalls.connect(connector, store);
  }

  static String ref(FGAModel model) {
    return model.getMetadata().getNamespace() + "/" + model.getMetadata().getName();
  }
}
