package dev.openfga.operator.stores;

import dev.openfga.operator.kube.Conditions;
import dev.openfga.operator.openfga.Servers;
import java.util.Optional;

/**
 * Whether an FGAStore can be used by the resources that name it (an FGAModel, an FGATuples): it
 * exists, is Ready with a store id, and names a server this operator is installed for. Pure; the
 * words are the same for every controller that asks.
 */
public final class StoreReadiness {
  private StoreReadiness() {}

  /**
   * Why the FGAStore {@code name} of namespace {@code ns} cannot be used yet by an FGAModel or an
   * FGATuples (it is missing, or not Ready with a store id), or empty.
   */
  public static Optional<String> notReady(String ns, String name, FGAStore store) {
    if (name == null) {
      return Optional.of("spec.storeRef.name must name an FGAStore");
    }
    if (store == null) {
      return Optional.of("FGAStore " + ns + "/" + name + " does not exist");
    }
    FGAStore.Status s = store.getStatus();
    boolean ready =
        s != null
            && s.getStoreId() != null
            && Conditions.isTrue(s.getConditions(), Conditions.READY);
    if (!ready) {
      String why =
          s == null
              ? "not reconciled yet"
              : Conditions.find(s.getConditions(), Conditions.READY)
                  .map(c -> c.getReason() + ": " + c.getMessage())
                  .orElse("not reconciled yet");
      return Optional.of("FGAStore " + ns + "/" + name + " is not ready (" + why + ")");
    }
    return Optional.empty();
  }

  /**
   * Why the FGAStore {@code name} may not be called (its url is not one of the installer's servers:
   * its status may still say Ready, the list having changed at a restart), or empty.
   */
  public static Optional<String> notAllowed(
      String ns, String name, FGAStore store, Servers servers) {
    String url = store.getSpec().getOpenfgaRef().getUrl();
    if (servers.allows(url)) {
      return Optional.empty();
    }
    return Optional.of(
        "FGAStore "
            + ns
            + "/"
            + name
            + " names "
            + url
            + ", which is not one of the OpenFGA servers this operator is installed for"
            + " (ServerNotAllowed)");
  }
}
