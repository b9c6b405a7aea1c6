package dev.openfga.operator.models;

import dev.openfga.operator.kube.ConditionedStatus;
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
 * An OpenFGA authorization model declared as a Kubernetes resource (upstream ADR-003's {@code
 * FGAModel}), in the store of an {@link FGAStore}. The schema the API server enforces is the
 * chart's {@code templates/crd-fgamodels.yaml}.
 */
@Group(FGAStore.GROUP)
@Version(FGAStore.VERSION)
@Kind("FGAModel")
@Plural("fgamodels")
@Singular("fgamodel")
public class FGAModel extends CustomResource<FGAModel.Spec, FGAModel.Status> implements Namespaced {
  /**
   * Deployment label: the name of the FGAModel (same namespace) whose id it runs with. A label, not
   * an annotation, so that the API server selects the Deployments.
   */
  public static final String MODEL = "openfga.dev/model";

  /** Pod-template annotation the operator sets: the model id (a new id rolls the pods once). */
  public static final String MODEL_ID = "openfga.dev/model-id";

  /** What the user declares: exactly one of model, modelJson, modelFrom. */
  public static class Spec {
    private FGAStore.NameRef storeRef;
    private String model;
    private String modelJson;
    private ModelFrom modelFrom;
    private String tests;
    private Publish publish;
    private Integer historyLimit;

    public FGAStore.NameRef getStoreRef() {
      return storeRef;
    }

    public void setStoreRef(FGAStore.NameRef storeRef) {
      this.storeRef = storeRef;
    }

    /** The model in OpenFGA's DSL. */
    public String getModel() {
      return model;
    }

    public void setModel(String model) {
      this.model = model;
    }

    /** The model as JSON ({@code schema_version}, {@code type_definitions}, {@code conditions}). */
    public String getModelJson() {
      return modelJson;
    }

    public void setModelJson(String modelJson) {
      this.modelJson = modelJson;
    }

    public ModelFrom getModelFrom() {
      return modelFrom;
    }

    public void setModelFrom(ModelFrom modelFrom) {
      this.modelFrom = modelFrom;
    }

    /** The {@code tests} block of a {@code .fga.yaml} store file, verbatim (YAML). */
    public String getTests() {
      return tests;
    }

    public void setTests(String tests) {
      this.tests = tests;
    }

    public Publish getPublish() {
      return publish;
    }

    public void setPublish(Publish publish) {
      this.publish = publish;
    }

    /** How many earlier model ids the status remembers (revert without a write); default 10. */
    public Integer getHistoryLimit() {
      return historyLimit;
    }

    public void setHistoryLimit(Integer historyLimit) {
      this.historyLimit = historyLimit;
    }
  }

  /** A ConfigMap key holding the model (DSL, or JSON when the key ends in {@code .json}). */
  public static class ModelFrom {
    private KeyRef configMapKeyRef;

    public KeyRef getConfigMapKeyRef() {
      return configMapKeyRef;
    }

    public void setConfigMapKeyRef(KeyRef configMapKeyRef) {
      this.configMapKeyRef = configMapKeyRef;
    }
  }

  /** A key of a ConfigMap in the same namespace. */
  public static class KeyRef {
    private String name;
    private String key;

    public KeyRef() {}

    public KeyRef(String name, String key) {
      this.name = name;
      this.key = key;
    }

    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }

    public String getKey() {
      return key;
    }

    public void setKey(String key) {
      this.key = key;
    }
  }

  /** Where the current model id is published. */
  public static class Publish {
    private String configMapName;

    public String getConfigMapName() {
      return configMapName;
    }

    public void setConfigMapName(String configMapName) {
      this.configMapName = configMapName;
    }
  }

  /** One model id the resource stood for. */
  public static class HistoryEntry {
    private String hash;
    private String modelId;

    public HistoryEntry() {}

    public HistoryEntry(String hash, String modelId) {
      this.hash = hash;
      this.modelId = modelId;
    }

    public String getHash() {
      return hash;
    }

    public void setHash(String hash) {
      this.hash = hash;
    }

    public String getModelId() {
      return modelId;
    }

    public void setModelId(String modelId) {
      this.modelId = modelId;
    }
  }

  /** What the operator observed and did. */
  public static class Status extends ConditionedStatus {
    private String storeId;
    private String modelId;
    private String lastWrittenHash;
    private String testedKey;
    private String testsFailure;
    private List<HistoryEntry> history = new ArrayList<>();

    public String getStoreId() {
      return storeId;
    }

    public void setStoreId(String storeId) {
      this.storeId = storeId;
    }

    /** The model id published: the model this resource stands for. */
    public String getModelId() {
      return modelId;
    }

    public void setModelId(String modelId) {
      this.modelId = modelId;
    }

    /** {@code sha256:} of the normalised model {@link #getModelId} holds. */
    public String getLastWrittenHash() {
      return lastWrittenHash;
    }

    public void setLastWrittenHash(String lastWrittenHash) {
      this.lastWrittenHash = lastWrittenHash;
    }

    /**
     * {@code sha256:} of the model and the {@code spec.tests} last run against it: the same pair is
     * not tested again.
     */
    public String getTestedKey() {
      return testedKey;
    }

    public void setTestedKey(String testedKey) {
      this.testedKey = testedKey;
    }

    /** Why the tests of {@link #getTestedKey} failed, or null when they passed. */
    public String getTestsFailure() {
      return testsFailure;
    }

    public void setTestsFailure(String testsFailure) {
      this.testsFailure = testsFailure;
    }

    /** Earlier models, newest first. */
    public List<HistoryEntry> getHistory() {
      return history;
    }

    public void setHistory(List<HistoryEntry> history) {
      this.history = history == null ? new ArrayList<>() : history;
    }
  }
}
