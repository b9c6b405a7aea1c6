package dev.openfga.operator.realcluster;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.interfaces.RSAPublicKey;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * A minimal OIDC issuer on loopback for the real OpenFGA server's {@code oidc} authentication:
 * discovery, a JWKS with one RSA key, and a {@code client_credentials} token endpoint that answers
 * one client with an RS256 JWT for the audience.
 */
final class OidcIssuer implements AutoCloseable {
  private final HttpServer server;
  private final KeyPair key;
  private final String clientId;
  private final String clientSecret;
  private final String audience;
  private final List<String> issued = new CopyOnWriteArrayList<>();

  OidcIssuer(String clientId, String clientSecret, String audience) throws Exception {
    this.clientId = clientId;
    this.clientSecret = clientSecret;
    this.audience = audience;
    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(2048);
    this.key = generator.generateKeyPair();
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/.well-known/openid-configuration", this::discovery);
    server.createContext("/jwks", this::jwks);
    server.createContext("/oauth/token", this::token);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  int tokensIssued() {
    return issued.size();
  }

  /** The access tokens the token endpoint answered with, oldest first. */
  List<String> issuedTokens() {
    return List.copyOf(issued);
  }

  /** A valid access token for the audience (what the token endpoint answers). */
  String token() throws Exception {
    long now = Instant.now().getEpochSecond();
    String header = b64("{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"k1\"}");
    String payload =
        b64(
            "{\"iss\":\""
                + url()
                + "\",\"aud\":\""
                + audience
                + "\",\"sub\":\""
                + clientId
                + "\",\"iat\":"
                + now
                + ",\"exp\":"
                + (now + 3600)
                + "}");
    Signature signature = Signature.getInstance("SHA256withRSA");
    signature.initSign(key.getPrivate());
    signature.update((header + "." + payload).getBytes(StandardCharsets.US_ASCII));
    return header + "." + payload + "." + b64(signature.sign());
  }

  private void discovery(HttpExchange exchange) throws IOException {
    answer(
        exchange,
        200,
        "{\"issuer\":\""
            + url()
            + "\",\"jwks_uri\":\""
            + url()
            + "/jwks\",\"token_endpoint\":\""
            + url()
            + "/oauth/token\",\"id_token_signing_alg_values_supported\":[\"RS256\"]}");
  }

  private void jwks(HttpExchange exchange) throws IOException {
    RSAPublicKey pub = (RSAPublicKey) key.getPublic();
    answer(
        exchange,
        200,
        "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"k1\",\"use\":\"sig\",\"alg\":\"RS256\",\"n\":\""
            + b64(unsigned(pub.getModulus()))
            + "\",\"e\":\""
            + b64(unsigned(pub.getPublicExponent()))
            + "\"}]}");
  }

  private void token(HttpExchange exchange) throws IOException {
    Map<String, String> form =
        Arrays.stream(
                new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)
                    .split("&"))
            .map(p -> p.split("=", 2))
            .collect(
                Collectors.toMap(
                    p -> URLDecoder.decode(p[0], StandardCharsets.UTF_8),
                    p -> p.length > 1 ? URLDecoder.decode(p[1], StandardCharsets.UTF_8) : ""));
    if (!"client_credentials".equals(form.get("grant_type"))
        || !clientId.equals(form.get("client_id"))
        || !clientSecret.equals(form.get("client_secret"))) {
      answer(exchange, 401, "{\"error\":\"invalid_client\"}");
      return;
    }
    try {
      String jwt = token();
      issued.add(jwt);
      answer(
          exchange,
          200,
          "{\"access_token\":\"" + jwt + "\",\"token_type\":\"Bearer\",\"expires_in\":3600}");
    } catch (Exception e) {
      answer(exchange, 500, "{}");
    }
  }

  private static void answer(HttpExchange exchange, int status, String body) throws IOException {
    byte[] out = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, out.length);
    try (OutputStream o = exchange.getResponseBody()) {
      o.write(out);
    }
  }

  private static byte[] unsigned(BigInteger value) {
    byte[] bytes = value.toByteArray();
    return bytes[0] == 0 ? Arrays.copyOfRange(bytes, 1, bytes.length) : bytes;
  }

  private static String b64(String text) {
    return b64(text.getBytes(StandardCharsets.UTF_8));
  }

  private static String b64(byte[] bytes) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
