package dev.openfga.operator.kube;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.openfga.operator.bench.Workload;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentList;
import io.fabric8.kubernetes.api.model.apps.DeploymentListBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How long a fresh JVM takes to decode the first list: ten pages of 100 of the benchmark's
 * Deployments, as the informer reads them, with the operator's serialization ({@code lazy}) or with
 * the same serialization whose deserializers Jackson builds all at once ({@code eager}). Run each
 * variant in a JVM of its own, with the image's flags (docs/performance.md, "Lazy deserializers"):
 *
 * <pre>
 * CP=target/openfga-operator-all.jar:target/test-classes
 * java -cp $CP dev.openfga.operator.kube.ListDecoding write target/bench/pages
 * java &lt;flags&gt; -cp $CP dev.openfga.operator.kube.ListDecoding eager target/bench/pages
 * java &lt;flags&gt; -cp $CP dev.openfga.operator.kube.ListDecoding lazy target/bench/pages
 * java &lt;flags&gt; -cp $CP dev.openfga.operator.kube.ListDecoding rounds target/bench/pages
 * </pre>
 */
public final class ListDecoding {
  private static final int PAGES = 10;
  private static final int PAGE_SIZE = 100;

  private ListDecoding() {}

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    Path dir = Path.of(args[1]);
    if (mode.equals("write")) {
      KubernetesSerialization plain = new KubernetesSerialization();
      Files.createDirectories(dir);
      for (int p = 0; p < PAGES; p++) {
        List<Deployment> items = new ArrayList<>();
        for (int i = 0; i < PAGE_SIZE; i++) {
          items.add(Workload.openfga(p * PAGE_SIZE + i));
        }
        DeploymentList list = new DeploymentListBuilder().withItems(items).build();
        Files.writeString(dir.resolve("page-" + p + ".json"), plain.asJson(list));
      }
      return;
    }
    if (mode.equals("rounds")) {
      rounds(dir);
      return;
    }
    KubernetesSerialization serialization =
        switch (mode) {
          case "lazy" -> OperatorClient.serialization();
          case "eager" -> eager();
          default -> throw new IllegalArgumentException("write|eager|lazy|rounds, not " + mode);
        };
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long cpu0 = threads.getCurrentThreadCpuTime();
    long wall0 = System.nanoTime();
    double first = 0;
    int items = 0;
    for (int p = 0; p < PAGES; p++) {
      long start = System.nanoTime();
      try (InputStream in = Files.newInputStream(dir.resolve("page-" + p + ".json"))) {
        items += serialization.unmarshal(in, DeploymentList.class).getItems().size();
      }
      if (p == 0) {
        first = (System.nanoTime() - start) / 1e6;
      }
    }
    System.out.printf(
        Locale.ROOT,
        "%s: %d Deployments in %.0f ms (first page %.0f ms), thread CPU %.0f ms%n",
        mode,
        items,
        (System.nanoTime() - wall0) / 1e6,
        first,
        (threads.getCurrentThreadCpuTime() - cpu0) / 1e6);
  }

  /**
   * The same ten pages decoded 40 times over in one JVM, with the operator's serialization, from
   * bytes already read: the first round is what the informer's first list costs a fresh JVM, the
   * later ones what the same work costs once the JIT has compiled it (thread CPU and bytes
   * allocated per round).
   */
  private static void rounds(Path dir) throws Exception {
    KubernetesSerialization serialization = OperatorClient.serialization();
    List<byte[]> pages = new ArrayList<>();
    for (int p = 0; p < PAGES; p++) {
      pages.add(Files.readAllBytes(dir.resolve("page-" + p + ".json")));
    }
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    for (int round = 1; round <= 40; round++) {
      long cpu0 = threads.getCurrentThreadCpuTime();
      long allocated0 = threads.getCurrentThreadAllocatedBytes();
      int items = 0;
      for (byte[] page : pages) {
        items +=
            serialization
                .unmarshal(new java.io.ByteArrayInputStream(page), DeploymentList.class)
                .getItems()
                .size();
      }
      if (round == 1 || round % 10 == 0) {
        System.out.printf(
            Locale.ROOT,
            "round %d: %d Deployments, thread CPU %.1f ms, %.1f MB allocated%n",
            round,
            items,
            (threads.getCurrentThreadCpuTime() - cpu0) / 1e6,
            (threads.getCurrentThreadAllocatedBytes() - allocated0) / 1e6);
      }
    }
  }

  /** The operator's serialization without {@link LazyDeserializers}. */
  private static KubernetesSerialization eager() {
    ObjectMapper mapper = new ObjectMapper();
    mapper.addMixIn(ObjectMeta.class, WithoutManagedFields.class);
    KubernetesSerialization serialization = new KubernetesSerialization(mapper, false);
    OperatorClient.KINDS.forEach(serialization::registerKubernetesResource);
    return serialization;
  }

  @JsonIgnoreProperties(
      value = {"managedFields"},
      ignoreUnknown = true)
  private abstract static class WithoutManagedFields {}
}
