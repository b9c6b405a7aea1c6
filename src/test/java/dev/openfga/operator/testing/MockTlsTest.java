package dev.openfga.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;

/** The mock API server over TLS speaks as a real one: HTTP/2 by ALPN, a checkable certificate. */
class MockTlsTest {

  @Test
  void servesHttp2WithACertificateForItsHostName() throws Exception {
    try (MockCluster cluster = MockCluster.overTls()) {
      X509Certificate ca;
      try (InputStream in = Files.newInputStream(cluster.certificateAuthorityFile())) {
        ca = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
      }
      assertThat(ca.getSubjectAlternativeNames())
          .extracting(name -> (Object) name.get(1))
          .contains("localhost", "127.0.0.1");

      KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
      trust.load(null, null);
      trust.setCertificateEntry("mock", ca);
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext tls = SSLContext.getInstance("TLS");
      tls.init(null, tmf.getTrustManagers(), null);
      // the JDK client checks the host name against the certificate (HTTPS endpoint
      // identification) and asks for HTTP/2 by ALPN
      HttpClient http =
          HttpClient.newBuilder().sslContext(tls).version(HttpClient.Version.HTTP_2).build();
      URI master = URI.create(cluster.client().getConfiguration().getMasterUrl());
      assertThat(master.getScheme()).isEqualTo("https");
      HttpResponse<String> answer =
          http.send(
              HttpRequest.newBuilder(master.resolve("/api/v1/namespaces/openfga/configmaps"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());

      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(answer.version()).isEqualTo(HttpClient.Version.HTTP_2);
    }
  }
}
