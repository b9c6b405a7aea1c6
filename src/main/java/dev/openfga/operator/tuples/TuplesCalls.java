package dev.openfga.operator.tuples;

import dev.openfga.operator.openfga.ApiException;
import dev.openfga.operator.openfga.CallFailure;
import dev.openfga.operator.openfga.Connector;
import dev.openfga.operator.openfga.Credentials;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.Model;
import dev.openfga.operator.openfga.Tuple;
import dev.openfga.operator.openfga.TupleKey;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.stores.StoreCalls;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Makes the calls of one FGATuples reconcile ({@link TuplesStep}) and holds the API client they
 * share once connected. A call that fails is answered, not thrown. OpenFGA's refusals are told
 * apart here, by their code: a tuple already there (or, with {@code ignore}, there with another
 * condition), an invalid tuple, a Write over the server's limit.
 */
final class TuplesCalls {
  private final Connector connector;
  private final OwnershipRecord record;
  private FgaApi api;

  TuplesCalls(Connector connector, OwnershipRecord record) {
    this.connector = connector;
    this.record = record;
  }

  /** Makes the call {@code step} for the FGATuples of {@code o}; its answer. */
  TuplesAnswer run(TuplesStep step, TuplesObservation o) throws InterruptedException {
    try {
      if (step instanceof TuplesStep.ReadModel read) {
        api = connect(o.store().orElseThrow());
        return model(read);
      } else if (step instanceof TuplesStep.ReadStore read) {
        connected(o);
        Map<TupleKey, Tuple> present = StoreReads.present(api, read.storeId(), read.keys());
        return new TuplesAnswer.StoreRead(read.keys(), present);
      } else if (step instanceof TuplesStep.WriteRecord write) {
        return record.write(o.tuples(), write);
      } else if (step instanceof TuplesStep.Delete delete) {
        connected(o);
        return delete(delete);
      } else if (step instanceof TuplesStep.Create create) {
        connected(o);
        return create(create);
      } else if (step instanceof TuplesStep.HandOver handOver) {
        return record.handOver(o.tuples().getMetadata().getNamespace(), handOver);
      } else if (step instanceof TuplesStep.GiveRecordAway) {
        return record.giveAway(o.tuples());
      }
      throw new IllegalArgumentException("no such step: " + step);
    } catch (IOException e) {
      return new TuplesAnswer.Failed(CallFailure.of(e));
    }
  }

  private TuplesAnswer model(TuplesStep.ReadModel read) throws IOException, InterruptedException {
    if (read.modelId().isPresent()) {
      String id = read.modelId().get();
      return api.model(read.storeId(), id)
          .<TuplesAnswer>map(m -> new TuplesAnswer.ModelRead(id, m))
          .orElseGet(
              () ->
                  new TuplesAnswer.NoModel(
                      "model " + id + " of the FGAModel is not in store " + read.storeId()));
    }
    Optional<Model> newest = api.newestModel(read.storeId());
    return newest
        .<TuplesAnswer>map(m -> new TuplesAnswer.ModelRead(m.id(), m.json()))
        .orElseGet(
            () ->
                new TuplesAnswer.NoModel(
                    "store "
                        + read.storeId()
                        + " has no authorization model yet (write one, e.g. with an FGAModel)"));
  }

  /**
   * Deletes with {@code on_missing: ignore}. A server older than 1.10 drops that option and refuses
   * the batch for a tuple gone since the read: then the batch is read and only what is there is
   * deleted.
   */
  private TuplesAnswer delete(TuplesStep.Delete step) throws IOException, InterruptedException {
    try {
      api.tuples().write(step.storeId(), step.modelId(), List.of(), step.keys(), false, true);
    } catch (ApiException e) {
      if (e.entityLimit()) {
        return new TuplesAnswer.OverLimit(step.keys().size());
      }
      if (!e.duplicateOrMissing()) {
        throw e;
      }
      Map<TupleKey, Tuple> there =
          StoreReads.present(api, step.storeId(), new TreeSet<>(step.keys()));
      if (!there.isEmpty()) {
        List<TupleKey> present = step.keys().stream().filter(there::containsKey).toList();
        api.tuples().write(step.storeId(), step.modelId(), List.of(), present, false, true);
      }
    }
    return new TuplesAnswer.Deleted(step.keys());
  }

  private TuplesAnswer create(TuplesStep.Create step) throws IOException, InterruptedException {
    List<TupleKey> keys = step.tuples().stream().map(Tuple::key).toList();
    try {
      api.tuples()
          .write(
              step.storeId(),
              step.modelId(),
              step.tuples(),
              List.of(),
              step.ignoreDuplicates(),
              false);
      return new TuplesAnswer.Created(keys, step.ignoreDuplicates());
    } catch (ApiException e) {
      if (e.duplicateOrMissing() || e.conflict()) {
        return new TuplesAnswer.Duplicate(keys);
      }
      if (e.invalidTuple()) {
        return new TuplesAnswer.Invalid(keys, refusal(step.tuples(), e.detail()));
      }
      if (e.entityLimit()) {
        return new TuplesAnswer.OverLimit(keys.size());
      }
      throw e;
    }
  }

  /**
   * What OpenFGA said of an invalid batch. When a tuple of it carries a condition context, only the
   * tuple OpenFGA names is kept ({@code Invalid tuple '…'}, its key and condition name): its reason
   * may quote a context value, which never goes into the status or an Event.
   */
  static String refusal(List<Tuple> batch, String detail) {
    String head = "OpenFGA refused a batch of " + batch.size() + " tuples: ";
    boolean contexts =
        batch.stream()
            .anyMatch(
                t ->
                    t.condition() != null
                        && t.condition().context() != null
                        && !t.condition().context().isEmpty());
    if (!contexts) {
      return head + detail;
    }
    int from = detail.indexOf("Invalid tuple '");
    int to = from < 0 ? -1 : detail.indexOf("'. Reason:", from);
    String named = to < 0 ? "a tuple" : detail.substring(from, to + 1);
    return head + named + " (its reason is not shown: the batch carries condition contexts)";
  }

  private void connected(TuplesObservation o) throws Credentials.CredentialsException {
    if (api == null) {
      api = connect(o.store().orElseThrow());
    }
  }

  /** The API client for the store's server, with its credentials (read from the Secret now). */
  private FgaApi connect(FGAStore store) throws Credentials.CredentialsException {
    return StoreCalls.connect(connector, store);
  }
}
