package dev.openfga.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.migration.rules.Plan.State;
import dev.openfga.operator.status.StatusRow.EventInfo;
import dev.openfga.operator.status.StatusRow.JobInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class StatusTableTest {
  private static final Instant AT = Instant.parse("2026-01-01T00:00:42Z");

  private static final StatusRow FAILED =
      new StatusRow(
          "openfga",
          "openfga",
          Optional.of("v1.9.0"),
          Optional.of("v1.8.0"),
          State.FAILED,
          "failed, retrying in 42s",
          "migration to v1.9.0 failed; retrying after 2026-01-01T00:00:42Z",
          Optional.of(AT),
          Optional.of(Duration.ofSeconds(42)),
          Optional.of(new JobInfo("openfga-migrate", "failed", Optional.of("v1.9.0"), true)),
          Optional.of(
              new EventInfo(
                  "Warning",
                  "MigrationFailed",
                  "Migration Job openfga-migrate failed for version v1.9.0 (BackoffLimitExceeded:"
                      + " Job has reached the specified backoff limit); retrying after"
                      + " 2026-01-01T00:00:42Z",
                  Optional.of(Instant.parse("2026-01-01T00:00:00Z")),
                  Optional.of(Duration.ofSeconds(18)))));

  private static final StatusRow NEW =
      new StatusRow(
          "team-b",
          "fga",
          Optional.of("v1.9.0"),
          Optional.empty(),
          State.MIGRATING,
          "migrating",
          "migration needed: recorded none, desired v1.9.0",
          Optional.empty(),
          Optional.empty(),
          Optional.empty(),
          Optional.empty());

  @Test
  void tableLikeKubectlGet() {
    assertThat(StatusTable.table(List.of(FAILED, NEW), false))
        .isEqualTo(
            """
            DEPLOYMENT   DESIRED   MIGRATED   STATE                     JOB                        LAST EVENT
            openfga      v1.9.0    v1.8.0     failed, retrying in 42s   openfga-migrate (failed)   MigrationFailed 18s ago: Migration Job openfga-migrate failed for version v1.9.0 (...
            fga          v1.9.0    <none>     migrating                 <none>                     <none>
            """);
  }

  @Test
  void namespaceColumnOnlyForAllNamespaces() {
    String table = StatusTable.table(List.of(FAILED, NEW), true);
    assertThat(table.lines().findFirst().orElseThrow())
        .startsWith("NAMESPACE   DEPLOYMENT   DESIRED");
    assertThat(table.lines().skip(2).findFirst().orElseThrow()).startsWith("team-b      fga ");
  }

  @Test
  void jsonHasEveryFieldWithStableNames() {
    assertThat(StatusTable.json(List.of(FAILED, NEW)))
        .isEqualTo(
            """
            [
              {
                "namespace": "openfga",
                "deployment": "openfga",
                "desiredVersion": "v1.9.0",
                "migratedVersion": "v1.8.0",
                "state": "FAILED",
                "stateText": "failed, retrying in 42s",
                "summary": "migration to v1.9.0 failed; retrying after 2026-01-01T00:00:42Z",
                "retryAt": "2026-01-01T00:00:42Z",
                "retryInSeconds": 42,
                "job": {
                  "name": "openfga-migrate",
                  "status": "failed",
                  "version": "v1.9.0",
                  "managed": true
                },
                "lastEvent": {
                  "type": "Warning",
                  "reason": "MigrationFailed",
                  "message": "Migration Job openfga-migrate failed for version v1.9.0 (BackoffLimitExceeded: Job has reached the specified backoff limit); retrying after 2026-01-01T00:00:42Z",
                  "time": "2026-01-01T00:00:00Z",
                  "ageSeconds": 18
                }
              },
              {
                "namespace": "team-b",
                "deployment": "fga",
                "desiredVersion": "v1.9.0",
                "migratedVersion": null,
                "state": "MIGRATING",
                "stateText": "migrating",
                "summary": "migration needed: recorded none, desired v1.9.0",
                "retryAt": null,
                "retryInSeconds": null,
                "job": null,
                "lastEvent": null
              }
            ]
            """);
    assertThat(StatusTable.json(List.of())).isEqualTo("[]\n");
  }
}
