package dev.openfga.operator.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class EchoesTest {
  private static final Instant T0 = Instant.parse("2026-12-02T00:00:00Z");
  private final Echoes echoes = new Echoes();

  @Test
  void theAddOfAJobThisProcessIsCreatingIsAnEchoOnce() {
    echoes.create(job(null), "ns", T0);

    assertThat(echoes.isEchoOfCreate(job("1"))).isTrue();
    assertThat(echoes.isEchoOfCreate(job("1"))).isFalse();
  }

  @Test
  void aFailedCreateHasNoEcho() {
    echoes.create(job(null), "ns", T0);
    echoes.failed(job(null), "ns");

    assertThat(echoes.isEchoOfCreate(job("1"))).isFalse();
  }

  @Test
  void aChangeFromThePatchedVersionIsAnEchoOnceAndNoOtherIs() {
    echoes.patch(record("5"), T0);

    assertThat(echoes.isEchoOfPatch(record("7"), record("4"))).isFalse();
    assertThat(echoes.isEchoOfCreate(record("6"))).isFalse();
    assertThat(echoes.isEchoOfPatch(record("6"), record("5"))).isTrue();
    assertThat(echoes.isEchoOfPatch(record("6"), record("5"))).isFalse();
  }

  @Test
  void onceTheAnswerIsInOnlyTheVersionTheWriteMadeIsAnEcho() {
    // a watch broke before the echoes came; listing again shows later writes of somebody else
    echoes.create(job(null), "ns", T0);
    echoes.written(job("1"));
    echoes.patch(record("5"), T0);
    echoes.written(record("6"));

    assertThat(echoes.isEchoOfCreate(job("2"))).isFalse();
    assertThat(echoes.isEchoOfPatch(record("8"), record("5"))).isFalse();
    assertThat(echoes.isEchoOfCreate(job("1"))).isTrue();
    assertThat(echoes.isEchoOfPatch(record("6"), record("5"))).isTrue();
  }

  @Test
  void anEchoBeforeTheAnswerEndsTheAnnouncement() {
    echoes.patch(record("5"), T0);
    assertThat(echoes.isEchoOfPatch(record("6"), record("5"))).isTrue();
    echoes.written(record("6"));

    assertThat(echoes.isEchoOfPatch(record("6"), record("5"))).isFalse();
  }

  @Test
  void aKindOrNameOrNamespaceOtherThanTheWrittenOneIsNoEcho() {
    echoes.create(job(null), "ns", T0);
    echoes.patch(record("5"), T0);

    ConfigMap sameNameOtherKind =
        new ConfigMapBuilder(record("1"))
            .editMetadata()
            .withName("x-migrate")
            .endMetadata()
            .build();
    assertThat(echoes.isEchoOfCreate(sameNameOtherKind)).isFalse();
    assertThat(
            echoes.isEchoOfCreate(
                new JobBuilder(job("1"))
                    .editMetadata()
                    .withNamespace("other")
                    .endMetadata()
                    .build()))
        .isFalse();
    assertThat(
            echoes.isEchoOfPatch(
                new ConfigMapBuilder(record("6"))
                    .editMetadata()
                    .withName("y")
                    .endMetadata()
                    .build(),
                new ConfigMapBuilder(record("5"))
                    .editMetadata()
                    .withName("y")
                    .endMetadata()
                    .build()))
        .isFalse();
  }

  @Test
  void anAnnouncementWithoutItsEchoIsForgottenAfterAMinute() {
    echoes.create(job(null), "ns", T0);
    echoes.patch(record("5"), T0.plus(Echoes.MEMORY).plusSeconds(1));

    assertThat(echoes.isEchoOfCreate(job("1"))).isFalse();
    assertThat(echoes.isEchoOfPatch(record("6"), record("5"))).isTrue();
  }

  /** The migration Job {@code ns/x-migrate} (no namespace set when it is about to be created). */
  private static Job job(String resourceVersion) {
    return new JobBuilder()
        .withNewMetadata()
        .withName("x-migrate")
        .withNamespace(resourceVersion == null ? null : "ns")
        .withResourceVersion(resourceVersion)
        .endMetadata()
        .build();
  }

  private static ConfigMap record(String resourceVersion) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName("x-migration-status")
        .withNamespace("ns")
        .withResourceVersion(resourceVersion)
        .endMetadata()
        .build();
  }
}
