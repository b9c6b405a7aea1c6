package dev.openfga.operator.testing;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Objects rendered by the stock upstream {@code openfga} chart 0.3.12 (test resources under {@code
 * fixtures/upstream-openfga-chart-0.3.12/}, copied from the project's shared fixtures).
 */
public final class UpstreamChart {
  private UpstreamChart() {}

  public static final String HOOK_MODE = "hook-mode.yaml";
  public static final String OPERATOR_MODE = "operator-mode.yaml";

  /** The first object of the kind in the rendered file, in the test namespace. */
  public static <T extends HasMetadata> T load(
      KubernetesClient client, String file, Class<T> kind) {
    String path = "/fixtures/upstream-openfga-chart-0.3.12/" + file;
    try (InputStream in = UpstreamChart.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("missing test resource " + path);
      }
      T item =
          client.load(in).items().stream()
              .filter(kind::isInstance)
              .map(kind::cast)
              .findFirst()
              .orElseThrow(
                  () -> new IllegalStateException("no " + kind.getSimpleName() + " in " + path));
      item.getMetadata().setNamespace(MockCluster.NS);
      return item;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
