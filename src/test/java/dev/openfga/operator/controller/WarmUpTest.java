package dev.openfga.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.model.Planner;
import dev.openfga.operator.model.Policy;
import org.junit.jupiter.api.Test;

/** The warm-up's made-up Deployment still makes a Job, so the warm-up runs the create path. */
class WarmUpTest {
  @Test
  void runsThePlannersCreatePathAndTheSerializersOfTheFirstWrites() {
    assertThat(WarmUp.run(new Planner(Policy.DEFAULTS), OperatorClient.serialization())).isTrue();
  }
}
