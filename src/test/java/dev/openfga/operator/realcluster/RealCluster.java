package dev.openfga.operator.realcluster;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension for the real-cluster tier. The control plane, the test kubelet and PostgreSQL
 * are started once per test JVM (and stopped by PID when it ends); each test class gets its own
 * namespace for OpenFGA (with the ServiceAccount {@code openfga} the upstream chart renders) and
 * one for the operator, both deleted afterwards, and every operator it started is killed.
 *
 * <pre>
 * &#64;RegisterExtension static final RealCluster cluster = new RealCluster();
 * </pre>
 */
public final class RealCluster implements BeforeAllCallback, AfterAllCallback {
  private static final ExtensionContext.Namespace STORE =
      ExtensionContext.Namespace.create(RealCluster.class);

  /** What one test JVM shares: stopped when the JVM's test run ends. */
  private record Shared(ControlPlane plane, TestKubelet kubelet, Postgres postgres)
      implements ExtensionContext.Store.CloseableResource, AutoCloseable {
    static Shared start() {
      ControlPlane plane = ControlPlane.start();
      try {
        Postgres postgres = Postgres.start();
        TestKubelet kubelet = TestKubelet.start(plane.admin(), plane.dir().resolve("kubelet"));
        return new Shared(plane, kubelet, postgres);
      } catch (RuntimeException e) {
        plane.close();
        throw e;
      }
    }

    @Override
    public void close() {
      try (plane;
          postgres) {
        kubelet.close();
      }
    }
  }

  private Shared shared;
  private String namespace;
  private final List<String> namespaces = new ArrayList<>();
  private final List<AutoCloseable> closeAfterClass = new ArrayList<>();

  @Override
  public void beforeAll(ExtensionContext context) {
    shared =
        context
            .getRoot()
            .getStore(STORE)
            .getOrComputeIfAbsent(Shared.class, k -> Shared.start(), Shared.class);
    String base =
        context.getRequiredTestClass().getSimpleName().toLowerCase(Locale.ROOT).replace("it", "");
    namespace =
        newNamespace(
            base.substring(0, Math.min(base.length(), 40))
                + "-"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0xffff)),
            Map.of());
  }

  @Override
  public void afterAll(ExtensionContext context) {
    for (int i = closeAfterClass.size() - 1; i >= 0; i--) {
      try {
        closeAfterClass.get(i).close();
      } catch (Exception e) {
        System.err.println("real cluster: closing " + closeAfterClass.get(i) + ": " + e);
      }
    }
    for (String ns : namespaces) {
      shared.kubelet().forget(ns);
      client().namespaces().withName(ns).delete();
    }
  }

  /** Cluster-admin access to the real API server. */
  public KubernetesClient client() {
    return shared.plane().admin();
  }

  /** This test class's namespace for OpenFGA. */
  public String namespace() {
    return namespace;
  }

  ControlPlane plane() {
    return shared.plane();
  }

  TestKubelet kubelet() {
    return shared.kubelet();
  }

  Postgres postgres() {
    return shared.postgres();
  }

  /**
   * Another namespace (with these labels, e.g. Pod Security ones), with the ServiceAccount {@code
   * openfga}; deleted after the class.
   */
  String newNamespace(String name, Map<String, String> labels) {
    client()
        .namespaces()
        .resource(
            new NamespaceBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(labels)
                .endMetadata()
                .build())
        .create();
    namespaces.add(name);
    client()
        .serviceAccounts()
        .inNamespace(name)
        .resource(
            new ServiceAccountBuilder().withNewMetadata().withName("openfga").endMetadata().build())
        .create();
    return name;
  }

  /**
   * The operator's chart installed to watch {@code watchNamespace} from a namespace of its own,
   * with these values on top of the chart's defaults.
   */
  OperatorInstall installOperator(String watchNamespace, String valuesYaml) {
    String operatorNamespace = watchNamespace + "-op";
    if (!namespaces.contains(operatorNamespace)) {
      client()
          .namespaces()
          .resource(
              new NamespaceBuilder()
                  .withNewMetadata()
                  .withName(operatorNamespace)
                  .endMetadata()
                  .build())
          .create();
      namespaces.add(operatorNamespace);
    }
    return OperatorInstall.apply(plane(), operatorNamespace, watchNamespace, valuesYaml);
  }

  /** Starts an operator process and waits until it is ready; killed after the class. */
  OperatorInstall.OperatorProcess startOperator(
      OperatorInstall install, String name, String... jvmOptions) {
    OperatorInstall.OperatorProcess process = install.start(name, jvmOptions);
    closeAfterClass.add(process);
    return process.awaitReady();
  }

  /** Kills the process at the end of the class (for processes a test starts itself). */
  <T extends AutoCloseable> T closeAfterClass(T closeable) {
    closeAfterClass.add(closeable);
    return closeable;
  }

  /**
   * Creates the Deployment the fixture builds and its datastore Secret {@code <name>-datastore}
   * (key {@code uri}) in the fixture's namespace; returns a view on it.
   */
  OpenFgaView deploy(dev.openfga.operator.testing.Fixtures.DeploymentFixture fixture, String uri) {
    var deployment = fixture.build();
    String ns = deployment.getMetadata().getNamespace();
    String name = deployment.getMetadata().getName();
    client().resource(UpstreamOpenFga.datastoreSecret(ns, name, uri)).create();
    client().resource(deployment).create();
    return new OpenFgaView(client(), ns, name);
  }

  /**
   * An OpenFGA Deployment {@code name} (the stock chart's, on {@code db}, with {@code env} added)
   * whose pods run the real server ({@link TestKubelet#SERVE}); waits until it has an available
   * replica (after the operator's migration, when one runs) and returns its HTTP URL.
   */
  String serveOpenFga(String name, Postgres.Database db, Map<String, String> env) {
    return serveOpenFga(name, db, env, 0);
  }

  /** {@link #serveOpenFga(String, Postgres.Database, Map)} running OpenFGA {@code version}. */
  String serveOpenFga(String version, String name, Postgres.Database db, Map<String, String> env) {
    return serveOpenFga(version, name, db, env, 0);
  }

  /**
   * The same, its HTTP API on loopback port {@code httpPort} ({@link #serverPort}; 0: any), so that
   * its URL, {@code http://127.0.0.1:<httpPort>}, is known before it runs.
   */
  String serveOpenFga(String name, Postgres.Database db, Map<String, String> env, int httpPort) {
    return serveOpenFga(Binaries.NEW_OPENFGA, name, db, env, httpPort);
  }

  /**
   * The same, running OpenFGA {@code version} ({@link Binaries#OLD_OPENFGA} or {@link
   * Binaries#NEW_OPENFGA}; each pinned in src/test/cluster and built once into the cache): what
   * differs between them, such as a Write's {@code on_duplicate} and {@code on_missing} (1.10 and
   * later), can be tested on both.
   */
  String serveOpenFga(
      String version, String name, Postgres.Database db, Map<String, String> env, int httpPort) {
    if (Binaries.openfga(version).isEmpty()) {
      throw new IllegalArgumentException(
          "the test kubelet has no openfga " + version + ": pin it in src/test/cluster");
    }
    var fixture = UpstreamOpenFga.fixture(namespace, name, version, 1, null);
    env.forEach(fixture::envVar);
    var deployment = fixture.build();
    var template = deployment.getSpec().getTemplate().getMetadata();
    if (template.getAnnotations() == null) {
      template.setAnnotations(new java.util.HashMap<>());
    }
    template.getAnnotations().put(TestKubelet.SERVE, "true");
    if (httpPort != 0) {
      template.getAnnotations().put(TestKubelet.HTTP_PORT, Integer.toString(httpPort));
    }
    client().resource(UpstreamOpenFga.datastoreSecret(namespace, name, db.ownerUri())).create();
    client().resource(deployment).create();
    // the URL the wait found, not a second look at the kubelet's servers
    return org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofMinutes(2))
        .until(
            () -> {
              var d = client().apps().deployments().inNamespace(namespace).withName(name).get();
              Integer available =
                  d == null || d.getStatus() == null ? null : d.getStatus().getAvailableReplicas();
              return available != null && available >= 1
                  ? kubelet().serverUrlOf(namespace, name).orElse(null)
                  : null;
            },
            java.util.Objects::nonNull);
  }

  /**
   * A loopback port free now for an OpenFGA server to be started later ({@link #serveOpenFga}),
   * below the range Linux picks ports from by default (32768 to 60999: for a bind to port 0 and for
   * outgoing connections), so that nothing else takes it in between.
   */
  static int serverPort() {
    for (int attempt = 0; attempt < 100; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(20000, 32768);
      try (var socket =
          new java.net.ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
        return port;
      } catch (IOException taken) {
        // another one
      }
    }
    throw new IllegalStateException("no free loopback port from 20000 to 32767");
  }

  /** The objects of a file rendered from the stock upstream {@code openfga} chart. */
  static List<HasMetadata> upstreamChart(KubernetesClient client, String file) {
    String path = "/fixtures/upstream-openfga-chart-0.3.12/" + file;
    try (InputStream in = RealCluster.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("missing test resource " + path);
      }
      return client.load(in).items();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
