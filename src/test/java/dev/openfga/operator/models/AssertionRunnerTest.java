package dev.openfga.operator.models;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.openfga.operator.openfga.FgaApi;
import dev.openfga.operator.openfga.ModelJson;
import dev.openfga.operator.testing.FakeOpenFga;
import dev.openfga.operator.testing.InMemoryOpenFga;
import java.net.URI;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A run of a model's tests against an OpenFGA server, slice by slice. */
class AssertionRunnerTest {
  @Test
  void aRunThatYieldsGoesOnWhereItStoodInTheSameScratchStores() throws Exception {
    InMemoryOpenFga server = new InMemoryOpenFga();
    try (FakeOpenFga openfga = new FakeOpenFga(server)) {
      FgaApi api =
          new FgaApi(
              FgaApi.defaultHttpClient(),
              URI.create("http://127.0.0.1:" + openfga.port()),
              Optional::empty,
              d -> {});
      JsonNode model =
          ModelJson.fromDsl(
                  "model\n  schema 1.1\ntype user\ntype doc\n  relations\n"
                      + "    define viewer: [user]\n")
              .json();
      // two tests of 3 x 2 x 2 checks each
      JsonNode tests = ModelAssertions.parse(combinations(3, 2, 2) + combinations(3, 2, 2));
      AssertionRunner.Progress progress = new AssertionRunner.Progress();

      // each slice yields once it has made 5 checks
      int slices = 0;
      AssertionRunner.Outcome outcome;
      do {
        int before = server.checks.get();
        outcome =
            AssertionRunner.resume(
                api,
                "fgamodel-test-x",
                model,
                tests,
                progress,
                () -> server.checks.get() >= before + 5);
        slices++;
      } while (outcome.state() == AssertionRunner.State.YIELDED && slices < 100);

      assertThat(outcome.state()).isEqualTo(AssertionRunner.State.PASSED);
      // every check once, none again after a yield, and one scratch store per test, kept across
      // the slices and deleted at its end
      assertThat(server.checks).hasValue(24);
      assertThat(slices).isEqualTo(5);
      assertThat(server.created).hasValue(2);
      assertThat(server.stores).isEmpty();
    }
  }

  private static String combinations(int users, int objects, int relations) {
    return dev.openfga.operator.testing.Fixtures.modelTestCombinations(users, objects, relations);
  }
}
