package dev.openfga.operator.migration;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Read-after-write: what this process wrote counts until its cache shows it, and no longer. */
class OwnWritesTest {
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
  private final OwnWrites own = new OwnWrites();

  private static ConfigMap record(String resourceVersion, String version) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withNamespace("ns")
        .withName("openfga-migration-status")
        .withResourceVersion(resourceVersion)
        .endMetadata()
        .addToData("version", version)
        .build();
  }

  private Optional<ConfigMap> seen(Optional<ConfigMap> cached, Instant at) {
    return own.record("ns", "openfga-migration-status", cached, "uid-1", at);
  }

  @Test
  void aRecordWrittenForADeploymentDeletedAndCreatedAgainIsNotTheNewOnes() {
    ConfigMap written =
        new ConfigMapBuilder(record("11", "v1.9.0"))
            .editMetadata()
            .addNewOwnerReference()
            .withApiVersion("apps/v1")
            .withKind("Deployment")
            .withName("openfga")
            .withUid("uid-1")
            .withController(true)
            .endOwnerReference()
            .endMetadata()
            .build();
    own.recordWritten(null, written, NOW);

    // the same Deployment: the cache is behind, the write counts
    assertThat(seen(Optional.empty(), NOW.plusSeconds(1))).contains(written);
    // created again under the same name (another UID): its record is what the cache shows
    assertThat(
            own.record(
                "ns", "openfga-migration-status", Optional.empty(), "uid-2", NOW.plusSeconds(1)))
        .isEmpty();
  }

  @Test
  void aCacheStillShowingTheReplacedRecordIsBehind() {
    ConfigMap old = record("10", "v1.8.0");
    ConfigMap written = record("11", "v1.9.0");
    own.recordWritten(old, written, NOW);

    assertThat(seen(Optional.of(old), NOW.plusSeconds(1))).contains(written);
  }

  @Test
  void aCacheShowingNothingIsBehindARecordCreatedHere() {
    ConfigMap written = record("11", "v1.9.0");
    own.recordWritten(null, written, NOW);

    assertThat(seen(Optional.empty(), NOW.plusSeconds(1))).contains(written);
  }

  @Test
  void aCacheThatShowsTheWriteOrALaterOneIsTheTruthAndTheMemoryEnds() {
    ConfigMap old = record("10", "v1.8.0");
    ConfigMap written = record("11", "v1.9.0");
    own.recordWritten(old, written, NOW);
    ConfigMap later = record("15", "v1.9.0");

    assertThat(seen(Optional.of(later), NOW.plusSeconds(1))).contains(later);
    // forgotten: an older cached state is not replaced by the write any more
    assertThat(seen(Optional.of(old), NOW.plusSeconds(2))).contains(old);
  }

  @Test
  void twoWritesInARowReplaceBothEarlierStates() {
    ConfigMap old = record("10", "v1.8.0");
    ConfigMap first = record("11", "v1.9.0");
    ConfigMap second = record("12", "v1.9.0");
    own.recordWritten(old, first, NOW);
    own.recordWritten(first, second, NOW);

    assertThat(seen(Optional.of(old), NOW.plusSeconds(1))).contains(second);
    assertThat(seen(Optional.of(first), NOW.plusSeconds(1))).contains(second);
    assertThat(seen(Optional.of(second), NOW.plusSeconds(1))).contains(second);
  }

  @Test
  void theMemoryEndsAfterTwoMinutes() {
    ConfigMap old = record("10", "v1.8.0");
    own.recordWritten(old, record("11", "v1.9.0"), NOW);

    assertThat(seen(Optional.of(old), NOW.plus(OwnWrites.MEMORY).plusSeconds(1))).contains(old);
  }

  @Test
  void anotherRecordIsNotAffected() {
    own.recordWritten(null, record("11", "v1.9.0"), NOW);

    assertThat(own.record("ns", "other-migration-status", Optional.empty(), "uid-1", NOW))
        .isEmpty();
  }

  private static Job job(String name) {
    return new JobBuilder()
        .withNewMetadata()
        .withNamespace("ns")
        .withName(name)
        .endMetadata()
        .build();
  }

  @Test
  void aCreatedJobCountsUntilTheCacheShowsItOrTwoMinutesPass() {
    own.jobCreated(job("a-migrate"), NOW);
    own.jobCreated(job("b-migrate"), NOW.plusSeconds(60));

    assertThat(own.jobsCreated(j -> true, NOW.plusSeconds(1)))
        .extracting(j -> j.getMetadata().getName())
        .containsExactlyInAnyOrder("a-migrate", "b-migrate");
    assertThat(own.jobsCreated(j -> j.getMetadata().getName().startsWith("b"), NOW)).hasSize(1);

    own.jobCached("ns", "b-migrate");
    assertThat(own.jobsCreated(j -> true, NOW.plusSeconds(1)))
        .extracting(j -> j.getMetadata().getName())
        .containsExactly("a-migrate");
    assertThat(own.jobsCreated(j -> true, NOW.plus(OwnWrites.MEMORY).plusSeconds(1))).isEmpty();
  }
}
