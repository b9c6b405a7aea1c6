package dev.openfga.operator.realcluster;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A real Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver and kube-controller-manager of
 * the pinned version, with free ports, TLS, token authentication, {@code Node,RBAC} authorization
 * and the default admission plugins (PodSecurity and ServiceAccount among them). There is no
 * scheduler and no kubelet: {@link TestKubelet} plays both.
 */
public final class ControlPlane implements AutoCloseable {
  public static final String VERSION = "v1.35.4";

  /** The controllers a cluster needs for Deployments, Jobs, garbage collection and namespaces. */
  private static final List<String> CONTROLLERS =
      List.of(
          "deployment-controller",
          "replicaset-controller",
          "job-controller",
          "ttl-after-finished-controller",
          "garbage-collector-controller",
          "namespace-controller",
          "serviceaccount-controller",
          "serviceaccount-token-controller",
          "root-ca-certificate-publisher-controller",
          "clusterrole-aggregation-controller",
          "pod-garbage-collector-controller",
          "disruption-controller",
          "resourcequota-controller");

  private static final String ADMIN_TOKEN = "admin-" + Long.toHexString(System.nanoTime());
  private static final String KCM_TOKEN = "kcm-" + Long.toHexString(System.nanoTime() + 1);

  /** For the benchmark: an operator user {@code bench-operator} in {@code system:masters}. */
  private static final String BENCH_TOKEN = "bench-" + Long.toHexString(System.nanoTime() + 2);

  public static final String BENCH_USER = "bench-operator";

  private List<String> extraApiServerArgs = List.of();

  private final Path dir;
  private final Path bin;
  private final int etcdPort;
  private final int apiPort;
  private final List<ChildProcess> processes = new ArrayList<>();
  private ChildProcess apiServer;
  private KubernetesClient admin;

  private ControlPlane(Path dir, Path bin) {
    this.dir = dir;
    this.bin = bin;
    this.etcdPort = freePort();
    this.apiPort = freePort();
  }

  /**
   * Builds (or reuses) the binaries — Kubernetes and every pinned openfga version, before any test
   * waits for a pod — starts the three processes and waits until pods can run.
   */
  static ControlPlane start() {
    // on a cold cache an openfga build takes minutes: never inside a test's wait (a build by the
    // kubelet during a 1-minute wait makes the test flaky)
    Binaries.openfga(Binaries.OLD_OPENFGA);
    Binaries.openfga(Binaries.NEW_OPENFGA);
    return launch(
        "real-cluster-",
        List.of(),
        plane -> {
          // after the API server's RBAC bootstrap, or the controller manager is refused and exits
          plane.awaitApiServer(Duration.ofSeconds(90));
          plane.startControllerManager();
          plane.awaitReady(Duration.ofSeconds(90));
        });
  }

  /**
   * For the benchmark: etcd and the API server only (no controller manager: nothing reconciles the
   * benchmark's thousands of Deployments), the API server with these extra flags (an audit log).
   */
  public static ControlPlane apiServerOnly(List<String> extraApiServerArgs) {
    return launch(
        "bench-api-",
        extraApiServerArgs,
        plane -> {
          plane.awaitApiServer(Duration.ofSeconds(90));
          plane.admin = new KubernetesClientBuilder().withConfig(plane.config(ADMIN_TOKEN)).build();
        });
  }

  private static ControlPlane launch(
      String prefix,
      List<String> extraApiServerArgs,
      java.util.function.Consumer<ControlPlane> then) {
    Path bin = Binaries.kubernetes();
    try {
      ControlPlane plane = new ControlPlane(Files.createTempDirectory(prefix), bin);
      plane.extraApiServerArgs = List.copyOf(extraApiServerArgs);
      try {
        plane.writePki();
        plane.startEtcd();
        plane.startApiServer();
        then.accept(plane);
        return plane;
      } catch (RuntimeException | Error e) {
        plane.close();
        throw e;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The token of {@link #BENCH_USER}. */
  public String benchToken() {
    return BENCH_TOKEN;
  }

  /** The admin's client configuration. */
  public Config adminConfig() {
    return config(ADMIN_TOKEN);
  }

  /** A fabric8 client with cluster-admin rights (group {@code system:masters}). */
  public KubernetesClient admin() {
    return admin;
  }

  /** The API server's URL. */
  public String url() {
    return "https://127.0.0.1:" + apiPort;
  }

  /** The CA that signed the API server's serving certificate. */
  public Path caFile() {
    return dir.resolve("ca.crt");
  }

  /** A folder for the harness's own files; deleted with the temp dir. */
  Path dir() {
    return dir;
  }

  /** A client config for the API server that authenticates with {@code token}. */
  Config config(String token) {
    return new ConfigBuilder()
        .withMasterUrl(url())
        .withCaCertFile(caFile().toString())
        .withOauthToken(token)
        .withRequestRetryBackoffLimit(1)
        .build();
  }

  /** A kubeconfig with cluster-admin rights, as a person running {@code kubectl} has. */
  Path adminKubeconfig() {
    return kubeconfig("admin", ADMIN_TOKEN);
  }

  /** A kubeconfig file for the API server that authenticates with {@code token}. */
  public Path kubeconfig(String name, String token) {
    Path file = dir.resolve(name + ".kubeconfig");
    String yaml =
        """
        apiVersion: v1
        kind: Config
        clusters:
        - name: test
          cluster:
            server: %s
            certificate-authority: %s
        users:
        - name: %s
          user:
            token: %s
        contexts:
        - name: test
          context: {cluster: test, user: %s}
        current-context: test
        """
            .formatted(url(), caFile(), name, token, name);
    write(file, yaml);
    return file;
  }

  /**
   * Stops the API server (SIGTERM) and starts it again on the same port and the same etcd, as
   * during an upgrade of the control plane. Clients see refused connections, then a fresh server.
   */
  void restartApiServer(Duration down) {
    apiServer.close();
    processes.remove(apiServer);
    sleep(down);
    startApiServer();
    awaitApiServer(Duration.ofSeconds(90));
  }

  private void writePki() {
    Path san = dir.resolve("san.ext");
    write(
        san,
        "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,"
            + "DNS:kubernetes.default,DNS:kubernetes.default.svc,"
            + "DNS:kubernetes.default.svc.cluster.local\n");
    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt");
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=kube-apiserver",
        "-keyout",
        "apiserver.key",
        "-out",
        "apiserver.csr");
    openssl(
        "x509",
        "-req",
        "-in",
        "apiserver.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        "-out",
        "apiserver.crt");
    openssl("genrsa", "-out", "sa.key", "2048");
    openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub");
    write(
        dir.resolve("tokens.csv"),
        ADMIN_TOKEN
            + ",admin,admin,\"system:masters\"\n"
            + KCM_TOKEN
            + ",system:kube-controller-manager,kcm\n"
            + BENCH_TOKEN
            + ","
            + BENCH_USER
            + ",bench,\"system:masters\"\n");
  }

  private void openssl(String... args) {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    ChildProcess.run(Duration.ofSeconds(60), dir, command, Map.of());
  }

  private void startEtcd() {
    int peerPort = freePort();
    processes.add(
        spawn(
            "etcd",
            List.of(
                bin.resolve("etcd").toString(),
                "--name=test",
                "--data-dir=" + dir.resolve("etcd-data"),
                "--listen-client-urls=http://127.0.0.1:" + etcdPort,
                "--advertise-client-urls=http://127.0.0.1:" + etcdPort,
                "--listen-peer-urls=http://127.0.0.1:" + peerPort,
                "--initial-advertise-peer-urls=http://127.0.0.1:" + peerPort,
                "--initial-cluster=test=http://127.0.0.1:" + peerPort,
                "--unsafe-no-fsync=true",
                "--log-level=warn")));
  }

  private void startApiServer() {
    List<String> command =
        new ArrayList<>(
            List.of(
                bin.resolve("kube-apiserver").toString(),
                "--etcd-servers=http://127.0.0.1:" + etcdPort,
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                "--secure-port=" + apiPort,
                "--tls-cert-file=" + dir.resolve("apiserver.crt"),
                "--tls-private-key-file=" + dir.resolve("apiserver.key"),
                "--client-ca-file=" + dir.resolve("ca.crt"),
                "--token-auth-file=" + dir.resolve("tokens.csv"),
                "--authorization-mode=Node,RBAC",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file=" + dir.resolve("sa.pub"),
                "--service-account-signing-key-file=" + dir.resolve("sa.key"),
                "--service-cluster-ip-range=10.0.0.0/24",
                "--endpoint-reconciler-type=none",
                "--allow-privileged=true",
                "--profiling=false",
                "--v=0"));
    command.addAll(extraApiServerArgs);
    apiServer = spawn("kube-apiserver", command);
    processes.add(apiServer);
  }

  private void startControllerManager() {
    Path kubeconfig = kubeconfig("kube-controller-manager", KCM_TOKEN);
    processes.add(
        spawn(
            "kube-controller-manager",
            List.of(
                bin.resolve("kube-controller-manager").toString(),
                "--kubeconfig=" + kubeconfig,
                "--bind-address=127.0.0.1",
                "--secure-port=" + freePort(),
                "--leader-elect=false",
                "--use-service-account-credentials=true",
                "--service-account-private-key-file=" + dir.resolve("sa.key"),
                "--root-ca-file=" + dir.resolve("ca.crt"),
                "--controllers=" + String.join(",", CONTROLLERS),
                "--concurrent-gc-syncs=5",
                "--profiling=false",
                "--v=0")));
  }

  private ChildProcess spawn(String name, List<String> command) {
    return ChildProcess.start(
        name, command, Map.of("PATH", "/usr/bin:/bin"), dir, dir.resolve(name + ".log"));
  }

  private void awaitReady(Duration timeout) {
    awaitApiServer(timeout);
    admin = new KubernetesClientBuilder().withConfig(config(ADMIN_TOKEN)).build();
    // pods are refused in a namespace until its default ServiceAccount exists: this proves the
    // controller manager runs, too
    Instant deadline = Instant.now().plus(timeout);
    while (admin.serviceAccounts().inNamespace("default").withName("default").get() == null) {
      failIfDead(deadline);
      sleep(Duration.ofMillis(200));
    }
  }

  private void awaitApiServer(Duration timeout) {
    HttpClient http = HttpClient.newBuilder().sslContext(trustingCa()).build();
    HttpRequest readyz =
        HttpRequest.newBuilder(URI.create(url() + "/readyz"))
            .header("Authorization", "Bearer " + ADMIN_TOKEN)
            .timeout(Duration.ofSeconds(5))
            .build();
    Instant deadline = Instant.now().plus(timeout);
    while (true) {
      try {
        if (http.send(readyz, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      failIfDead(deadline);
      sleep(Duration.ofMillis(200));
    }
  }

  private void failIfDead(Instant deadline) {
    for (ChildProcess process : processes) {
      if (!process.isAlive()) {
        throw new IllegalStateException(process + " exited:\n" + tail(process.log()));
      }
    }
    if (Instant.now().isAfter(deadline)) {
      StringBuilder logs = new StringBuilder("the control plane did not become ready; logs:");
      processes.forEach(p -> logs.append("\n--- ").append(p).append('\n').append(tail(p.log())));
      throw new IllegalStateException(logs.toString());
    }
  }

  private SSLContext trustingCa() {
    try (InputStream in = Files.newInputStream(caFile())) {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      store.setCertificateEntry(
          "ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
      TrustManagerFactory trust =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init(store);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, trust.getTrustManagers(), null);
      return context;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Stops everything by PID, the API server's clients first, then the processes in reverse. */
  @Override
  public void close() {
    if (admin != null) {
      admin.close();
    }
    for (int i = processes.size() - 1; i >= 0; i--) {
      processes.get(i).close();
    }
    processes.clear();
    // the logs stay for a look after a failed run: target/real-cluster-logs/
    Path logs = Path.of("target", "real-cluster-logs").toAbsolutePath();
    ChildProcess.run(Duration.ofSeconds(60), "rm", "-rf", logs.toString());
    ChildProcess.run(
        Duration.ofSeconds(60),
        dir,
        List.of(
            "bash",
            "-c",
            "mkdir -p \"$1\" && find . -name '*.log' -exec cp --parents {} \"$1\" \\;",
            "copy-logs",
            logs.toString()),
        Map.of());
    ChildProcess.run(Duration.ofSeconds(60), "rm", "-rf", dir.toString());
  }

  static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String tail(String log) {
    List<String> lines = log.lines().toList();
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }

  static void write(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
