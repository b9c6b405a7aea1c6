package dev.openfga.operator.openfga;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How the operator authenticates to OpenFGA, from the Secret {@code openfgaRef.credentialsRef}
 * names. Its keys, named as the OpenFGA SDKs' settings:
 *
 * <ul>
 *   <li>{@code apiToken}: a pre-shared key ({@code OPENFGA_AUTHN_METHOD=preshared}), sent as a
 *       bearer token;
 *   <li>or {@code clientId}, {@code clientSecret}, {@code apiTokenIssuer} (a URL, or a host whose
 *       {@code /oauth/token} is the token endpoint, as the SDKs read it), optional {@code
 *       apiAudience} and {@code scopes}: OIDC client credentials; the access token is fetched with
 *       the {@code client_credentials} grant and kept until a minute before it expires (or until
 *       OpenFGA refuses it with 401, {@link #refused}), for as long as this object lives. The
 *       reconcilers read the Secret at each reconcile and take the credentials from a {@link
 *       Cache}, which keeps them while the Secret's uid and resourceVersion stay the same: a token
 *       is fetched once per expiry, not once per reconcile (for up to {@value Cache#KEPT} Secrets
 *       in use), and a changed Secret is used at the next reconcile.
 * </ul>
 *
 * Values are held in memory only: never written to a status, an Event or a log line; messages name
 * the Secret and the key, never a value.
 *
 * <p>A Secret's credentials go only to the OpenFGA servers its annotation {@value #SERVERS} names
 * (one URL, or several separated by commas; {@link #checkServer}): whoever may create an FGAStore
 * in a namespace may name any Secret there, and must not be able to have the operator send its
 * token to a server of their choosing.
 */
public final class Credentials {
  private static final ObjectMapper JSON = new ObjectMapper();
  static final String API_TOKEN = "apiToken";
  static final String CLIENT_ID = "clientId";
  static final String CLIENT_SECRET = "clientSecret";
  static final String TOKEN_ISSUER = "apiTokenIssuer";
  static final String AUDIENCE = "apiAudience";
  static final String SCOPES = "scopes";

  /** The Secret's annotation naming the OpenFGA servers its credentials may be sent to. */
  public static final String SERVERS = "openfga.dev/openfga-url";

  /**
   * The credentials of each Secret, kept while its uid and resourceVersion stay the same (with them
   * an OIDC access token). One per operator process; an entry is replaced when its Secret changes,
   * dropped when its Secret is unusable, and the least recently used goes beyond {@value #KEPT}
   * Secrets, so that no Secret's data outlives its use by much. A Secret found gone is kept for
   * {@link #KEPT_AFTER_GONE} more, only for {@link #kept}: the deletion of a store that used it (a
   * Secret and its FGAStore deleted together, with their namespace or one manifest, where another
   * reconcile of the FGAStore may find the Secret gone first). It is dropped by the first {@link
   * #gone} or {@link #kept} after that time, or when {@value #KEPT} other Secrets push it out.
   */
  public static final class Cache {
    static final int KEPT = 256;

    /** How long the credentials of a Secret found gone are kept for a store's deletion. */
    public static final Duration KEPT_AFTER_GONE = Duration.ofMinutes(5);

    /** {@code goneAt}: when the Secret was found gone, else null. */
    private record Kept(
        String uid, String resourceVersion, Credentials credentials, Instant goneAt) {}

    private final Map<String, Kept> bySecret =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Kept> eldest) {
            return size() > KEPT;
          }
        };

    /**
     * The credentials of the Secret {@code source} (namespace/name) whose metadata and data these
     * are: the kept ones when it has not changed since, else new ones from {@code data}.
     */
    public synchronized Credentials get(
        String source, String uid, String resourceVersion, String servers, Map<String, String> data)
        throws CredentialsException {
      Kept kept = bySecret.get(source);
      if (kept != null
          && kept.goneAt() == null
          && resourceVersion != null
          && Objects.equals(kept.uid(), uid)
          && resourceVersion.equals(kept.resourceVersion())) {
        return kept.credentials();
      }
      Credentials fresh;
      try {
        fresh = fromSecretData(source, data).sentTo(servers);
      } catch (CredentialsException e) {
        bySecret.remove(source);
        throw e;
      }
      bySecret.put(source, new Kept(uid, resourceVersion, fresh, null));
      return fresh;
    }

    /**
     * The credentials last read from the Secret {@code source} (namespace/name), if kept: the
     * Secret is there, or was found gone less than {@link #KEPT_AFTER_GONE} ago.
     */
    public synchronized Optional<Credentials> kept(String source, Instant now) {
      dropGone(now);
      Kept entry = bySecret.get(source);
      return entry == null ? Optional.empty() : Optional.of(entry.credentials());
    }

    /**
     * The Secret {@code source} (namespace/name) is gone: its credentials are no longer handed to
     * {@link #get}, and kept for {@link #kept} until {@link #KEPT_AFTER_GONE} after {@code now}.
     */
    public synchronized void gone(String source, Instant now) {
      dropGone(now);
      Kept entry = bySecret.get(source);
      if (entry != null && entry.goneAt() == null) {
        bySecret.put(
            source, new Kept(entry.uid(), entry.resourceVersion(), entry.credentials(), now));
      }
    }

    private void dropGone(Instant now) {
      bySecret
          .values()
          .removeIf(e -> e.goneAt() != null && !now.isBefore(e.goneAt().plus(KEPT_AFTER_GONE)));
    }
  }

  /** The Secret cannot be used; the message names it and the key. */
  public static final class CredentialsException extends IOException {
    private final boolean secretGone;

    public CredentialsException(String message) {
      this(message, false);
    }

    public CredentialsException(String message, boolean secretGone) {
      super(message);
      this.secretGone = secretGone;
    }

    /** Whether the Secret does not exist (rather than holding unusable data). */
    public boolean secretGone() {
      return secretGone;
    }
  }

  private final String source;
  private final String apiToken;
  private final String clientId;
  private final String clientSecret;
  private final URI tokenEndpoint;
  private final String audience;
  private final String scopes;

  /** The servers these may be sent to, as the Secret names them; null: any (no Secret). */
  private Set<String> servers;

  private String accessToken;
  private Instant expires = Instant.MIN;

  private Credentials(
      String source,
      String apiToken,
      String clientId,
      String clientSecret,
      URI tokenEndpoint,
      String audience,
      String scopes) {
    this.source = source;
    this.apiToken = apiToken;
    this.clientId = clientId;
    this.clientSecret = clientSecret;
    this.tokenEndpoint = tokenEndpoint;
    this.audience = audience;
    this.scopes = scopes;
  }

  /** No authentication. */
  public static Credentials none() {
    return new Credentials("none", null, null, null, null, null, null);
  }

  /**
   * From a Secret's data (base64 values, as the API returns them); {@code source} names the Secret
   * in messages ({@code namespace/name}).
   */
  public static Credentials fromSecretData(String source, Map<String, String> data)
      throws CredentialsException {
    Map<String, String> d = new LinkedHashMap<>();
    if (data != null) {
      for (var e : data.entrySet()) {
        try {
          d.put(
              e.getKey(),
              new String(Base64.getDecoder().decode(e.getValue()), StandardCharsets.UTF_8).strip());
        } catch (IllegalArgumentException notBase64) {
          throw new CredentialsException(
              "Secret " + source + ": key " + e.getKey() + " is not base64");
        }
      }
    }
    if (d.containsKey(API_TOKEN)) {
      if (d.get(API_TOKEN).isEmpty()) {
        throw new CredentialsException("Secret " + source + ": key " + API_TOKEN + " is empty");
      }
      return new Credentials(source, d.get(API_TOKEN), null, null, null, null, null);
    }
    if (d.containsKey(CLIENT_ID) || d.containsKey(CLIENT_SECRET) || d.containsKey(TOKEN_ISSUER)) {
      for (String key : new String[] {CLIENT_ID, CLIENT_SECRET, TOKEN_ISSUER}) {
        if (d.getOrDefault(key, "").isEmpty()) {
          throw new CredentialsException(
              "Secret " + source + ": OIDC client credentials need the key " + key);
        }
      }
      return new Credentials(
          source,
          null,
          d.get(CLIENT_ID),
          d.get(CLIENT_SECRET),
          tokenEndpoint(source, d.get(TOKEN_ISSUER)),
          d.get(AUDIENCE),
          d.get(SCOPES));
    }
    throw new CredentialsException(
        "Secret "
            + source
            + " has neither "
            + API_TOKEN
            + " (a pre-shared key) nor "
            + CLIENT_ID
            + "/"
            + CLIENT_SECRET
            + "/"
            + TOKEN_ISSUER
            + " (OIDC client credentials)");
  }

  /** As the SDKs read it: a URL as it is; a bare host means {@code https://host/oauth/token}. */
  static URI tokenEndpoint(String source, String issuer) throws CredentialsException {
    String url = issuer.contains("://") ? issuer : "https://" + issuer;
    URI uri;
    try {
      uri = URI.create(url);
    } catch (IllegalArgumentException e) {
      throw new CredentialsException("Secret " + source + ": " + TOKEN_ISSUER + " is not a URL");
    }
    if (uri.getHost() == null) {
      throw new CredentialsException("Secret " + source + ": " + TOKEN_ISSUER + " has no host");
    }
    if (uri.getPath() == null || uri.getPath().isEmpty() || uri.getPath().equals("/")) {
      uri = uri.resolve("/oauth/token");
    }
    return uri;
  }

  /**
   * These credentials, to be sent only to the servers {@code annotation} names ({@link #SERVERS}).
   */
  Credentials sentTo(String annotation) {
    servers =
        annotation == null
            ? Set.of()
            : Arrays.stream(annotation.split(","))
                .map(String::strip)
                .filter(u -> !u.isEmpty())
                .map(Servers::canonical)
                .collect(Collectors.toUnmodifiableSet());
    return this;
  }

  /**
   * Refuses to send these credentials to {@code url} unless their Secret names it in {@value
   * #SERVERS}.
   */
  public void checkServer(String url) throws CredentialsException {
    if (servers == null || servers.contains(Servers.canonical(url))) {
      return;
    }
    throw new CredentialsException(
        "Secret "
            + source
            + (servers.isEmpty() ? " has no annotation " : "'s annotation ")
            + SERVERS
            + (servers.isEmpty() ? "" : " does not name " + url)
            + ": its credentials go only to the OpenFGA servers it names; annotate it with "
            + SERVERS
            + "="
            + url
            + " if they are meant for that server");
  }

  /** Which kind of credentials these are, for messages. */
  public String kind() {
    return apiToken != null
        ? "pre-shared key"
        : clientId != null ? "OIDC client credentials" : "none";
  }

  /** The bearer token for the next call: the key, a valid access token, or empty. */
  public synchronized Optional<String> bearer(HttpClient http, Clock clock)
      throws IOException, InterruptedException {
    if (apiToken != null) {
      return Optional.of(apiToken);
    }
    if (clientId == null) {
      return Optional.empty();
    }
    if (accessToken == null || !clock.instant().isBefore(expires)) {
      fetch(http, clock);
    }
    return Optional.of(accessToken);
  }

  /**
   * OpenFGA refused this access token (401): the next call fetches a new one instead of using it
   * until it expires (a rotated signing key, a changed audience). A pre-shared key stays.
   */
  public synchronized void refused(String token) {
    if (token.equals(accessToken)) {
      accessToken = null;
    }
  }

  private void fetch(HttpClient http, Clock clock) throws IOException, InterruptedException {
    Map<String, String> form = new LinkedHashMap<>();
    form.put("grant_type", "client_credentials");
    form.put("client_id", clientId);
    form.put("client_secret", clientSecret);
    if (audience != null && !audience.isEmpty()) {
      form.put("audience", audience);
    }
    if (scopes != null && !scopes.isEmpty()) {
      form.put("scope", scopes);
    }
    String body =
        form.entrySet().stream()
            .map(
                e ->
                    URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8)
                        + "="
                        + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
            .collect(Collectors.joining("&"));
    HttpResponse<String> response;
    try {
      response =
          http.send(
              HttpRequest.newBuilder(tokenEndpoint)
                  .timeout(FgaApi.TIMEOUT)
                  .header("Content-Type", "application/x-www-form-urlencoded")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new CredentialsException(endpoint() + ": " + e.getClass().getSimpleName());
    }
    if (response.statusCode() != 200) {
      throw new CredentialsException(
          endpoint() + " refused the client credentials: HTTP " + response.statusCode());
    }
    JsonNode token;
    try {
      token = JSON.readTree(response.body());
    } catch (IOException notJson) {
      // the parser's message quotes the body: never copied
      throw new CredentialsException(endpoint() + " answered HTTP 200 without a JSON body");
    }
    String value = token.path("access_token").asText("");
    if (value.isEmpty()) {
      throw new CredentialsException(endpoint() + " answered without an access_token");
    }
    long seconds = token.path("expires_in").asLong(300);
    accessToken = value;
    expires = clock.instant().plus(Duration.ofSeconds(Math.max(0, seconds - 60)));
  }

  /**
   * The token endpoint, for messages: by the Secret key it comes from, not its value (nothing of
   * the Secret goes into a status, an Event or a log line; the URL may carry a user or a query).
   */
  private String endpoint() {
    return "the token endpoint (" + TOKEN_ISSUER + " of Secret " + source + ")";
  }

  @Override
  public String toString() {
    return "Credentials[" + kind() + " from " + source + "]";
  }
}
