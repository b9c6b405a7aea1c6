package dev.openfga.operator.kube;

import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/**
 * The part of a custom resource's status that {@link Conditions} and {@link StatusWrites} work on:
 * the generation looked at and the conditions (the FGAStore's and FGAModel's statuses extend it).
 */
public class ConditionedStatus {
  private Long observedGeneration;
  private List<Condition> conditions = new ArrayList<>();

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public void setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
  }

  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions == null ? new ArrayList<>() : conditions;
  }
}
