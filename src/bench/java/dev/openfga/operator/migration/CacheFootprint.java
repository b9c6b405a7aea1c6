package dev.openfga.operator.migration;

import dev.openfga.operator.bench.Workload;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;

/**
 * Heap per cached Deployment, measured in a JVM of its own (the benchmark starts it with the JVM
 * under test): N realistic OpenFGA Deployments are deserialised from the JSON an API server sends,
 * as the informer does, and kept — in full, without managedFields and the last-applied copy, and
 * trimmed as {@link TrimmingDeploymentStore} keeps them. Prints one line per form.
 */
public final class CacheFootprint {
  private CacheFootprint() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    KubernetesSerialization serialization = new KubernetesSerialization();
    List<String> json = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      json.add(serialization.asJson(Workload.openfga(i)));
    }
    long jsonBytes = json.stream().mapToLong(String::length).sum();
    System.out.printf(
        Locale.ROOT, "json %d deployments, %.1f KiB each%n", n, jsonBytes / 1024.0 / n);
    measure("full", json, serialization, d -> d);
    measure(
        "no managedFields, no last-applied",
        json,
        serialization,
        d -> {
          d.getMetadata().setManagedFields(null);
          d.getMetadata().getAnnotations().remove(TrimmingDeploymentStore.LAST_APPLIED);
          return d;
        });
    measure(
        "trimmed (TrimmingDeploymentStore)", json, serialization, TrimmingDeploymentStore::trim);
  }

  private static void measure(
      String form,
      List<String> json,
      KubernetesSerialization serialization,
      UnaryOperator<Deployment> keep)
      throws InterruptedException {
    long before = used();
    List<Deployment> cache = new ArrayList<>(json.size());
    for (String j : json) {
      cache.add(keep.apply(serialization.unmarshal(j, Deployment.class)));
    }
    long after = used();
    System.out.printf(
        Locale.ROOT,
        "%s: %.1f KiB per Deployment (%d in %.1f MiB)%n",
        form,
        (after - before) / 1024.0 / cache.size(),
        cache.size(),
        (after - before) / 1024.0 / 1024.0);
    if (cache.isEmpty()) {
      throw new IllegalStateException();
    }
  }

  private static long used() throws InterruptedException {
    Runtime r = Runtime.getRuntime();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
      used = Math.min(used, r.totalMemory() - r.freeMemory());
    }
    return used;
  }
}
