package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.openfga.operator.kube.OperatorClient;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.net.URI;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The real API server compresses a large list when asked, and the operator's client asks and reads
 * it back exactly (GzipResponses; docs/performance.md, "Compressed lists").
 */
class CompressedListIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();

  private static final String SELECTOR = "compressed-list-it=yes";

  @Test
  void theOperatorsClientReadsALargeCompressedListExactly() throws Exception {
    KubernetesClient admin = cluster.client();
    String ns = cluster.namespace();
    // 250 ConfigMaps of 2 KB: a list of about 600 KB, above the API server's 128 KiB threshold
    IntStream.range(0, 250)
        .forEach(
            i ->
                admin
                    .configMaps()
                    .inNamespace(ns)
                    .resource(
                        new ConfigMapBuilder()
                            .withNewMetadata()
                            .withName("big-" + i)
                            .addToLabels("compressed-list-it", "yes")
                            .endMetadata()
                            .addToData("payload", ("line " + i + " of some text\n").repeat(100))
                            .build())
                    .create());

    String path = "/api/v1/namespaces/" + ns + "/configmaps?labelSelector=" + SELECTOR;
    HttpClient http = admin.getHttpClient();
    HttpRequest asked =
        http.newHttpRequestBuilder()
            .uri(URI.create(cluster.plane().url() + path))
            .header("Accept-Encoding", "gzip")
            .build();
    HttpResponse<byte[]> raw = http.sendAsync(asked, byte[].class).get();
    assertThat(raw.code()).isEqualTo(200);
    assertThat(raw.header("Content-Encoding")).as("the API server compresses").isEqualTo("gzip");
    assertThat(raw.body()[0]).isEqualTo((byte) 0x1f);

    List<ConfigMap> plain =
        sorted(
            admin
                .configMaps()
                .inNamespace(ns)
                .withLabel("compressed-list-it", "yes")
                .list()
                .getItems());
    try (KubernetesClient operatorClient = OperatorClient.create(cluster.plane().adminConfig())) {
      List<ConfigMap> viaGzip =
          sorted(
              operatorClient
                  .configMaps()
                  .inNamespace(ns)
                  .withLabel("compressed-list-it", "yes")
                  .list()
                  .getItems());
      assertThat(viaGzip).hasSize(250);
      // the operator's serialization drops managedFields; everything else is the same
      plain.forEach(c -> c.getMetadata().setManagedFields(null));
      viaGzip.forEach(c -> c.getMetadata().setManagedFields(null));
      assertThat(viaGzip).isEqualTo(plain);
    }
  }

  private static List<ConfigMap> sorted(List<ConfigMap> items) {
    return items.stream().sorted(Comparator.comparing(c -> c.getMetadata().getName())).toList();
  }
}
