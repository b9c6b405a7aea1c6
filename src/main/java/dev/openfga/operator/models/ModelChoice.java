package dev.openfga.operator.models;

import dev.openfga.operator.openfga.Model;
import dev.openfga.operator.openfga.ModelJson;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Which model id an FGAModel stands for, and whether a write is needed: pure, keyed on the
 * normalised model's hash ({@link ModelJson}), so that OpenFGA's append-only models are never
 * written twice (openfga/openfga #811).
 *
 * <ol>
 *   <li>The status already stands for this hash: nothing is written. The store's newest model is
 *       checked: one the operator never stood for was written out of band ({@code
 *       NewerModelInStore}, {@code InSync=False}); the published id stays, nothing is fought.
 *   <li>The hash is in the status's history (a revert): that id again, nothing written.
 *   <li>A model in the store has the same normalised content (the status was lost, or a write's
 *       answer was): adopted, nothing written.
 *   <li>Otherwise: write it.
 * </ol>
 */
public final class ModelChoice {
  private ModelChoice() {}

  /** One model id the resource stood for, and the hash of its normalised content. */
  public record Entry(String hash, String modelId) {}

  /** What the status holds: the current entry (may be absent) and the earlier ones. */
  public record Known(Optional<Entry> current, List<Entry> history) {
    Set<String> ids() {
      Set<String> ids = new LinkedHashSet<>();
      current.ifPresent(e -> ids.add(e.modelId()));
      history.forEach(e -> ids.add(e.modelId()));
      return ids;
    }
  }

  /** The decision. */
  public sealed interface Choice {
    /**
     * Stand for {@code modelId}; {@code how} says why ({@code unchanged}, {@code revert}, {@code
     * adopted}); {@code newerInStore} is a model id written out of band, if the store's newest
     * model is one.
     */
    record Use(String modelId, String how, Optional<String> newerInStore) implements Choice {}

    /** No model in the store has this content: write it. */
    record Write() implements Choice {}
  }

  /**
   * @param storeModels the store's models, newest first (as the API lists them)
   */
  public static Choice choose(ModelJson.Normalised desired, Known known, List<Model> storeModels) {
    Optional<String> newest = storeModels.stream().findFirst().map(Model::id);
    if (known.current().isPresent() && known.current().get().hash().equals(desired.hash())) {
      String id = known.current().get().modelId();
      Optional<String> foreign = newest.filter(n -> !known.ids().contains(n));
      return new Choice.Use(id, "unchanged", foreign);
    }
    Optional<Entry> earlier =
        known.history().stream().filter(e -> e.hash().equals(desired.hash())).findFirst();
    if (earlier.isPresent()) {
      return new Choice.Use(
          earlier.get().modelId(), "revert", newest.filter(n -> !known.ids().contains(n)));
    }
    for (Model m : storeModels) {
      if (ModelJson.of(m.json()).hash().equals(desired.hash())) {
        // the newest model with this content; a foreign newer one is still reported
        Set<String> ours = new LinkedHashSet<>(known.ids());
        ours.add(m.id());
        return new Choice.Use(m.id(), "adopted", newest.filter(n -> !ours.contains(n)));
      }
    }
    return new Choice.Write();
  }

  /**
   * The history after standing for {@code now}: the previous current entry moves into it, no entry
   * twice, the newest {@code limit} kept (at least 1).
   */
  public static List<Entry> history(Known known, Entry now, int limit) {
    List<Entry> all = new ArrayList<>();
    known.current().ifPresent(all::add);
    all.addAll(known.history());
    List<Entry> kept = new ArrayList<>();
    for (Entry e : all) {
      if (!e.equals(now) && !kept.contains(e)) {
        kept.add(e);
      }
    }
    return List.copyOf(kept.subList(0, Math.min(kept.size(), Math.max(1, limit))));
  }
}
