package dev.openfga.operator.openfga;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;

/**
 * The API client for an OpenFGA server with the credentials of a Secret, read at each call (the
 * FGAStore and FGAModel controllers share one): the Secret's credentials come from the process's
 * {@link Credentials.Cache} and go only to a server its annotation names ({@link
 * Credentials#checkServer}).
 */
public final class Connector {
  private final KubernetesClient client;
  private final HttpClient http;
  private final Credentials.Cache cache;
  private final Clock clock;

  public Connector(KubernetesClient client, HttpClient http, Credentials.Cache cache, Clock clock) {
    this.client = client;
    this.http = http;
    this.cache = cache;
    this.clock = clock;
  }

  /**
   * The API client for {@code url}, with the credentials of the Secret {@code secretName} of {@code
   * namespace} (null: none), read now.
   */
  public FgaApi connect(String namespace, String url, String secretName)
      throws Credentials.CredentialsException {
    return connect(credentials(namespace, secretName), url);
  }

  /** The API client for {@code url} with these credentials, if their Secret names it. */
  public FgaApi connect(Credentials credentials, String url)
      throws Credentials.CredentialsException {
    credentials.checkServer(url);
    return new FgaApi(http, URI.create(url), bearer(credentials, http, clock));
  }

  /**
   * The credentials of a Secret gone or unreadable, as last read (the deletion of a store that used
   * them), if the cache still keeps them.
   */
  public Optional<Credentials> kept(String namespace, String secretName) {
    return cache.kept(namespace + "/" + secretName, clock.instant());
  }

  /** The bearer token of each call from these credentials; one OpenFGA refuses is dropped. */
  static FgaApi.Bearer bearer(Credentials credentials, HttpClient http, Clock clock) {
    return new FgaApi.Bearer() {
      @Override
      public Optional<String> get() throws IOException, InterruptedException {
        return credentials.bearer(http, clock);
      }

      @Override
      public void refused(String token) {
        credentials.refused(token);
      }
    };
  }

  /** The credentials the Secret {@code secretName} holds, or none without one. */
  Credentials credentials(String namespace, String secretName)
      throws Credentials.CredentialsException {
    if (secretName == null) {
      return Credentials.none();
    }
    Secret secret;
    try {
      secret = client.secrets().inNamespace(namespace).withName(secretName).get();
    } catch (KubernetesClientException e) {
      throw new Credentials.CredentialsException(
          "Secret " + namespace + "/" + secretName + " cannot be read: HTTP " + e.getCode());
    }
    if (secret == null) {
      cache.gone(namespace + "/" + secretName, clock.instant());
      throw new Credentials.CredentialsException(
          "Secret " + namespace + "/" + secretName + " (openfgaRef.credentialsRef) does not exist",
          true);
    }
    Map<String, String> annotations = secret.getMetadata().getAnnotations();
    return cache.get(
        namespace + "/" + secretName,
        secret.getMetadata().getUid(),
        secret.getMetadata().getResourceVersion(),
        annotations == null ? null : annotations.get(Credentials.SERVERS),
        secret.getData());
  }
}
