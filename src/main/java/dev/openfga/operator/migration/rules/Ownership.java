package dev.openfga.operator.migration.rules;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.Optional;

/** Who controls an object, read from its owner references. */
public final class Ownership {
  private Ownership() {}

  public static Optional<OwnerReference> controller(HasMetadata object) {
    var refs = object.getMetadata().getOwnerReferences();
    if (refs == null) {
      return Optional.empty();
    }
    return refs.stream().filter(r -> Boolean.TRUE.equals(r.getController())).findFirst();
  }

  static boolean isDeployment(OwnerReference ref) {
    return "Deployment".equals(ref.getKind())
        && ref.getApiVersion() != null
        && ref.getApiVersion().startsWith("apps/");
  }

  /** A controller reference to this very Deployment (same name and UID). */
  public static boolean isControlledBy(HasMetadata object, Deployment deployment) {
    return controller(object)
        .filter(Ownership::isDeployment)
        .filter(r -> deployment.getMetadata().getName().equals(r.getName()))
        .filter(r -> deployment.getMetadata().getUid().equals(r.getUid()))
        .isPresent();
  }
}
