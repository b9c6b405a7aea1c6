package dev.openfga.operator.stores;

import dev.openfga.operator.kube.ConditionedStatus;
import dev.openfga.operator.openfga.Credentials;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * An OpenFGA store declared as a Kubernetes resource (upstream ADR-003's {@code FGAStore}). The
 * schema the API server enforces is the chart's {@code templates/crd-fgastores.yaml}.
 */
@Group(FGAStore.GROUP)
@Version(FGAStore.VERSION)
@Kind("FGAStore")
@Plural("fgastores")
@Singular("fgastore")
public class FGAStore extends CustomResource<FGAStore.Spec, FGAStore.Status> implements Namespaced {
  public static final String GROUP = "openfga.dev";
  public static final String VERSION = "v1alpha1";

  /**
   * What the names of the FGAModel tests' scratch stores start with: no FGAStore may name its store
   * so (the tests delete every store of their scratch name).
   */
  public static final String SCRATCH_PREFIX = "fgamodel-test-";

  /** {@code spec.deletionPolicy}: keep the store (default), or delete the one it created. */
  public enum DeletionPolicy {
    Retain,
    Delete
  }

  /** What the user declares. */
  public static class Spec {
    private OpenFgaRef openfgaRef;
    private String name;
    private String storeId;
    private DeletionPolicy deletionPolicy;

    public OpenFgaRef getOpenfgaRef() {
      return openfgaRef;
    }

    public void setOpenfgaRef(OpenFgaRef openfgaRef) {
      this.openfgaRef = openfgaRef;
    }

    /** The store's name in OpenFGA (immutable). */
    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }

    /** Adopt exactly this store instead of looking it up by name (immutable once set). */
    public String getStoreId() {
      return storeId;
    }

    public void setStoreId(String storeId) {
      this.storeId = storeId;
    }

    public DeletionPolicy getDeletionPolicy() {
      return deletionPolicy;
    }

    public void setDeletionPolicy(DeletionPolicy deletionPolicy) {
      this.deletionPolicy = deletionPolicy;
    }
  }

  /** Where the OpenFGA server is and how to authenticate to it. */
  public static class OpenFgaRef {
    private String url;
    private NameRef credentialsRef;
    private NameRef deploymentRef;

    /** The HTTP API URL, e.g. {@code http://openfga.openfga.svc:8080}. */
    public String getUrl() {
      return url;
    }

    public void setUrl(String url) {
      this.url = url;
    }

    /** A Secret in the same namespace (see {@link Credentials} for its keys). */
    public NameRef getCredentialsRef() {
      return credentialsRef;
    }

    public void setCredentialsRef(NameRef credentialsRef) {
      this.credentialsRef = credentialsRef;
    }

    /** The OpenFGA Deployment (same namespace) whose migration gates the store. */
    public NameRef getDeploymentRef() {
      return deploymentRef;
    }

    public void setDeploymentRef(NameRef deploymentRef) {
      this.deploymentRef = deploymentRef;
    }
  }

  /** A reference by name to an object in the same namespace. */
  public static class NameRef {
    private String name;

    public NameRef() {}

    public NameRef(String name) {
      this.name = name;
    }

    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }
  }

  /** What the operator observed and did. */
  public static class Status extends ConditionedStatus {
    private String storeId;
    private Boolean createdByOperator;
    private Creating creating;

    /** The store this resource stands for. */
    public String getStoreId() {
      return storeId;
    }

    public void setStoreId(String storeId) {
      this.storeId = storeId;
    }

    /** True when the operator created the store (only such a store is deleted by Delete). */
    public Boolean getCreatedByOperator() {
      return createdByOperator;
    }

    public void setCreatedByOperator(Boolean createdByOperator) {
      this.createdByOperator = createdByOperator;
    }

    /**
     * The store the operator is about to create, written before it asks OpenFGA to: a store of that
     * name found later, created about then, is the operator's even when the status write after the
     * create was lost. Cleared once the status holds a store id.
     */
    public Creating getCreating() {
      return creating;
    }

    public void setCreating(Creating creating) {
      this.creating = creating;
    }
  }

  /** A store creation the operator is about to ask for ({@code status.creating}). */
  public static class Creating {
    private String name;
    private String at;

    public Creating() {}

    public Creating(String name, String at) {
      this.name = name;
      this.at = at;
    }

    /** The name of the store to create. */
    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }

    /** When the creation was about to be asked for (RFC 3339, the operator's clock). */
    public String getAt() {
      return at;
    }

    public void setAt(String at) {
      this.at = at;
    }
  }
}
