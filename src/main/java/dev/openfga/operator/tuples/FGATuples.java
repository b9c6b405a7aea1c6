package dev.openfga.operator.tuples;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.kube.ConditionedStatus;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.stores.FGAStore;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;
import java.util.ArrayList;
import java.util.List;

/**
 * The static tuples an application needs, declared as a Kubernetes resource (upstream ADR-003's
 * {@code FGATuples}, SPEC §11), in the store of an {@link FGAStore} of the same namespace. The
 * operator deletes only tuples it created for this resource (or for another FGATuples of the store
 * that handed them to it when deleted); it keeps which those are in its ownership record, a
 * ConfigMap that outlives the status ({@code <name>-tuples-record}). The schema the API server
 * enforces is the chart's {@code templates/crd-fgatuples.yaml}.
 */
@Group(FGAStore.GROUP)
@Version(FGAStore.VERSION)
@Kind("FGATuples")
@Plural("fgatuples")
@Singular("fgatuples")
public class FGATuples extends CustomResource<FGATuples.Spec, FGATuples.Status>
    implements Namespaced {

  /** What the user declares: exactly one of tuples, tuplesFrom. */
  public static class Spec {
    private FGAStore.NameRef storeRef;
    private FGAStore.NameRef modelRef;
    private List<TupleSpec> tuples;
    private TuplesFrom tuplesFrom;
    private FGAStore.DeletionPolicy deletionPolicy;

    /** The FGAStore (same namespace) whose store holds the tuples. */
    public FGAStore.NameRef getStoreRef() {
      return storeRef;
    }

    public void setStoreRef(FGAStore.NameRef storeRef) {
      this.storeRef = storeRef;
    }

    /** An FGAModel (same namespace): the tuples are written against its published model id. */
    public FGAStore.NameRef getModelRef() {
      return modelRef;
    }

    public void setModelRef(FGAStore.NameRef modelRef) {
      this.modelRef = modelRef;
    }

    public List<TupleSpec> getTuples() {
      return tuples;
    }

    public void setTuples(List<TupleSpec> tuples) {
      this.tuples = tuples;
    }

    public TuplesFrom getTuplesFrom() {
      return tuplesFrom;
    }

    public void setTuplesFrom(TuplesFrom tuplesFrom) {
      this.tuplesFrom = tuplesFrom;
    }

    /** Retain (default): deleting the resource keeps the tuples; Delete: deletes its own. */
    public FGAStore.DeletionPolicy getDeletionPolicy() {
      return deletionPolicy;
    }

    public void setDeletionPolicy(FGAStore.DeletionPolicy deletionPolicy) {
      this.deletionPolicy = deletionPolicy;
    }
  }

  /** One tuple: {@code user} has {@code relation} on {@code object}, maybe under a condition. */
  public static class TupleSpec {
    private String user;
    private String relation;
    private String object;
    private ConditionSpec condition;

    public TupleSpec() {}

    public TupleSpec(String user, String relation, String object) {
      this.user = user;
      this.relation = relation;
      this.object = object;
    }

    public String getUser() {
      return user;
    }

    public void setUser(String user) {
      this.user = user;
    }

    public String getRelation() {
      return relation;
    }

    public void setRelation(String relation) {
      this.relation = relation;
    }

    public String getObject() {
      return object;
    }

    public void setObject(String object) {
      this.object = object;
    }

    public ConditionSpec getCondition() {
      return condition;
    }

    public void setCondition(ConditionSpec condition) {
      this.condition = condition;
    }
  }

  /** A condition of the model, and the context it is written with (never put in an Event). */
  public static class ConditionSpec {
    private String name;
    private JsonNode context;

    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }

    public JsonNode getContext() {
      return context;
    }

    public void setContext(JsonNode context) {
      this.context = context;
    }
  }

  /**
   * A ConfigMap key holding the tuples: a YAML or JSON list of tuples, or {@code {tuples: [...]}}.
   */
  public static class TuplesFrom {
    private FGAModel.KeyRef configMapKeyRef;

    public FGAModel.KeyRef getConfigMapKeyRef() {
      return configMapKeyRef;
    }

    public void setConfigMapKeyRef(FGAModel.KeyRef configMapKeyRef) {
      this.configMapKeyRef = configMapKeyRef;
    }
  }

  /** What the operator observed and did. */
  public static class Status extends ConditionedStatus {
    private String storeId;
    private String modelId;
    private Integer desired;
    private Integer written;
    private Integer preExisting;
    private Integer held;
    private List<String> invalid = new ArrayList<>();
    private String declaredHash;
    private String verifiedAt;
    private String recordName;

    /** The store the tuples were last written to. */
    public String getStoreId() {
      return storeId;
    }

    public void setStoreId(String storeId) {
      this.storeId = storeId;
    }

    /** The model id the writes named (the FGAModel's, or the store's newest). */
    public String getModelId() {
      return modelId;
    }

    public void setModelId(String modelId) {
      this.modelId = modelId;
    }

    /** How many tuples are declared. */
    public Integer getDesired() {
      return desired;
    }

    public void setDesired(Integer desired) {
      this.desired = desired;
    }

    /**
     * How many of the declared tuples are this resource's own (it wrote them, or a deleted
     * FGATuples that wrote them handed them to it): removing one deletes it.
     */
    public Integer getWritten() {
      return written;
    }

    public void setWritten(Integer written) {
      this.written = written;
    }

    /**
     * How many of the declared tuples were in the store before this resource declared them and are
     * not its own: never deleted by it, unless the FGATuples that wrote them is deleted and hands
     * them to it.
     */
    public Integer getPreExisting() {
      return preExisting;
    }

    public void setPreExisting(Integer preExisting) {
      this.preExisting = preExisting;
    }

    /**
     * How many tuples of its own this resource no longer declares, kept because another FGATuples
     * of the store declares them; deleted once none does.
     */
    public Integer getHeld() {
      return held;
    }

    public void setHeld(Integer held) {
      this.held = held;
    }

    /** The first declared tuples refused (object#relation@user and why), at most five. */
    public List<String> getInvalid() {
      return invalid;
    }

    public void setInvalid(List<String> invalid) {
      this.invalid = invalid == null ? new ArrayList<>() : invalid;
    }

    /** {@code sha256:} of the declared tuples last brought in sync (with their conditions). */
    public String getDeclaredHash() {
      return declaredHash;
    }

    public void setDeclaredHash(String declaredHash) {
      this.declaredHash = declaredHash;
    }

    /** When the store was last read to check that every declared tuple is there (RFC 3339). */
    public String getVerifiedAt() {
      return verifiedAt;
    }

    public void setVerifiedAt(String verifiedAt) {
      this.verifiedAt = verifiedAt;
    }

    /** The ConfigMap holding which tuples this resource wrote. */
    public String getRecordName() {
      return recordName;
    }

    public void setRecordName(String recordName) {
      this.recordName = recordName;
    }
  }
}
