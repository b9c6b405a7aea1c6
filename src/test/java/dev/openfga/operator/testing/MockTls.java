package dev.openfga.operator.testing;

import io.fabric8.mockwebserver.MockWebServer;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PfxOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * TLS for the mock API server as a real API server speaks it: a certificate that names the host in
 * a subjectAltName (fabric8's own self-signed one names it only in the subject's CN, which OkHttp
 * rightly refuses) and HTTP/2 offered by ALPN (fabric8's mock lists the protocols but never turns
 * ALPN on, so every client falls back to HTTP/1.1). Used by the AOT cache's training run, so that
 * the classes a pod loads talking to a real API server are the ones in the cache.
 *
 * <p>fabric8's {@link MockWebServer} has no hook for either: this replaces its Vert.x instance with
 * a proxy that adjusts the TLS server's options just before the server is created, and delegates
 * everything else.
 */
final class MockTls {
  private static final String PASSWORD = "mock-api-server";

  /** The PEM file of the certificate, which is its own certificate authority. */
  final Path certificateAuthorityFile;

  private final Path keyStore;

  private MockTls(Path keyStore, Path certificateAuthorityFile) {
    this.keyStore = keyStore;
    this.certificateAuthorityFile = certificateAuthorityFile;
  }

  /**
   * A self-signed RSA certificate for {@code localhost} and {@code 127.0.0.1}, valid for two days,
   * made by the running JDK's {@code keytool}; {@code web} will serve it, with HTTP/2 by ALPN.
   */
  static MockTls install(MockWebServer web) {
    try {
      Path dir = Files.createTempDirectory("mock-api-tls");
      dir.toFile().deleteOnExit();
      Path keyStore = dir.resolve("server.p12");
      Path pem = dir.resolve("ca.crt");
      keytool(
          "-genkeypair",
          "-alias",
          "api",
          "-keyalg",
          "RSA",
          "-keysize",
          "2048",
          "-dname",
          "CN=localhost",
          "-ext",
          "SAN=dns:localhost,ip:127.0.0.1",
          "-validity",
          "2",
          "-storetype",
          "PKCS12",
          "-keystore",
          keyStore.toString(),
          "-storepass",
          PASSWORD);
      keytool(
          "-exportcert",
          "-rfc",
          "-alias",
          "api",
          "-keystore",
          keyStore.toString(),
          "-storepass",
          PASSWORD,
          "-file",
          pem.toString());
      keyStore.toFile().deleteOnExit();
      pem.toFile().deleteOnExit();
      MockTls tls = new MockTls(keyStore, pem);
      tls.adjust(web);
      return tls;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void keytool(String... args) throws IOException {
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    List<String> command = new ArrayList<>(List.of(keytool.toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      if (p.waitFor() != 0) {
        throw new IOException("keytool " + String.join(" ", args) + " failed: " + out);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted waiting for keytool", e);
    }
  }

  /** Puts the proxy in place of {@code web}'s Vert.x instance (before the server starts). */
  private void adjust(MockWebServer web) {
    try {
      Field field = MockWebServer.class.getDeclaredField("vertx");
      field.setAccessible(true);
      Vertx real = (Vertx) field.get(web);
      Vertx proxy =
          (Vertx)
              Proxy.newProxyInstance(
                  Vertx.class.getClassLoader(),
                  new Class<?>[] {Vertx.class},
                  (self, method, args) -> {
                    if (method.getName().equals("createHttpServer")
                        && args != null
                        && args.length == 1
                        && args[0] instanceof HttpServerOptions options
                        && options.isSsl()) {
                      options
                          .setUseAlpn(true)
                          .setKeyCertOptions(
                              new PfxOptions().setPath(keyStore.toString()).setPassword(PASSWORD));
                    }
                    try {
                      return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                      throw e.getCause();
                    }
                  });
      field.set(web, proxy);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(
          "fabric8's MockWebServer no longer holds its Vert.x instance in the field 'vertx'", e);
    }
  }
}
