package dev.openfga.operator.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ConfigMapListBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.StandardHttpRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/** Compressed reads: asked for on plain reads only, inflated exactly, anything else untouched. */
class GzipResponsesTest {
  private static final byte[] JSON =
      ("{\"kind\":\"ConfigMapList\",\"items\":["
              + String.join(
                  ",",
                  IntStream.range(0, 2_000)
                      .mapToObj(i -> "{\"metadata\":{\"name\":\"cm-" + i + "\"}}")
                      .toList())
              + "]}")
          .getBytes(StandardCharsets.UTF_8);

  /** Collects what the inner consumer is handed. */
  private static final class Collected implements AsyncBody.Consumer<List<ByteBuffer>> {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final List<ByteBuffer> buffers = new ArrayList<>();

    @Override
    public void consume(List<ByteBuffer> value, AsyncBody asyncBody) {
      for (ByteBuffer b : value) {
        buffers.add(b);
        ByteBuffer copy = b.duplicate();
        byte[] a = new byte[copy.remaining()];
        copy.get(a);
        bytes.writeBytes(a);
      }
    }
  }

  private static byte[] gzip(byte[] plain) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
      gz.write(plain);
    }
    return out.toByteArray();
  }

  /** Feeds {@code body} in chunks of random sizes (1 byte to 4 KiB), several per call. */
  private static void feed(AsyncBody.Consumer<List<ByteBuffer>> consumer, byte[] body, long seed)
      throws Exception {
    Random random = new Random(seed);
    int at = 0;
    while (at < body.length) {
      List<ByteBuffer> call = new ArrayList<>();
      for (int k = random.nextInt(3) + 1; k > 0 && at < body.length; k--) {
        int n = Math.min(body.length - at, random.nextBoolean() ? 1 : random.nextInt(4096) + 1);
        call.add(ByteBuffer.wrap(body, at, n).slice());
        at += n;
      }
      consumer.consume(call, null);
    }
  }

  private static StandardHttpRequest request(String method, String uri) {
    StandardHttpRequest.Builder builder = new StandardHttpRequest.Builder().uri(URI.create(uri));
    if (!method.equals("GET")) {
      builder.method(method, "application/json", "{}");
    }
    return builder.build();
  }

  @Test
  void aGzipBodyIsInflatedWhateverItsChunks() throws Exception {
    byte[] body = gzip(JSON);
    assertThat(body.length).isLessThan(JSON.length / 5);
    for (long seed = 0; seed < 20; seed++) {
      Collected inner = new Collected();
      feed(new GzipResponses.Gunzip(inner), body, seed);
      assertThat(inner.bytes.toByteArray()).as("seed %d", seed).isEqualTo(JSON);
    }
  }

  @Test
  void aHeaderWithExtraFieldNameCommentAndCrcIsSkipped() throws Exception {
    Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
    deflater.setInput(JSON);
    deflater.finish();
    byte[] buffer = new byte[JSON.length];
    int deflated = deflater.deflate(buffer);
    CRC32 crc = new CRC32();
    crc.update(JSON);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.writeBytes(new byte[] {0x1f, (byte) 0x8b, 8, 4 | 8 | 16 | 2, 0, 0, 0, 0, 0, 3});
    body.writeBytes(new byte[] {3, 0, 'a', 'b', 'c'}); // FEXTRA: length 3
    body.writeBytes("list.json\0".getBytes(StandardCharsets.ISO_8859_1)); // FNAME
    body.writeBytes("a comment\0".getBytes(StandardCharsets.ISO_8859_1)); // FCOMMENT
    body.writeBytes(new byte[] {0x12, 0x34}); // FHCRC (not checked)
    body.write(buffer, 0, deflated);
    for (long v : new long[] {crc.getValue(), JSON.length}) {
      body.writeBytes(new byte[] {(byte) v, (byte) (v >> 8), (byte) (v >> 16), (byte) (v >> 24)});
    }

    Collected inner = new Collected();
    feed(new GzipResponses.Gunzip(inner), body.toByteArray(), 7);
    assertThat(inner.bytes.toByteArray()).isEqualTo(JSON);
  }

  @Test
  void aPlainBodyIsPassedOnUntouched() throws Exception {
    Collected inner = new Collected();
    ByteBuffer first = ByteBuffer.wrap(JSON, 0, 100).slice();
    ByteBuffer rest = ByteBuffer.wrap(JSON, 100, JSON.length - 100).slice();
    GzipResponses.Gunzip gunzip = new GzipResponses.Gunzip(inner);
    gunzip.consume(List.of(), null);
    gunzip.consume(List.of(first), null);
    gunzip.consume(List.of(rest), null);
    assertThat(inner.buffers).containsExactly(first, rest);
    assertThat(inner.buffers.get(0)).isSameAs(first);
    assertThat(inner.bytes.toByteArray()).isEqualTo(JSON);
  }

  @Test
  void aCorruptOrTruncatedBodyFailsInsteadOfDeliveringWrongBytes() throws Exception {
    byte[] body = gzip(JSON);
    byte[] badCrc = body.clone();
    badCrc[body.length - 8] ^= 1;
    assertThatThrownBy(() -> feed(new GzipResponses.Gunzip(new Collected()), badCrc, 1))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("CRC");

    byte[] badData = body.clone();
    for (int i = 20; i < 60; i++) {
      badData[i] = (byte) 0xff;
    }
    assertThatThrownBy(() -> feed(new GzipResponses.Gunzip(new Collected()), badData, 1))
        .isInstanceOf(IOException.class);

    byte[] twice = new byte[body.length + 1];
    System.arraycopy(body, 0, twice, 0, body.length);
    assertThatThrownBy(() -> feed(new GzipResponses.Gunzip(new Collected()), twice, 1))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("after the end");
  }

  @Test
  void onlyPlainReadsAskForGzip() {
    assertThat(GzipResponses.asksForGzip(request("GET", "https://api/api/v1/configmaps?limit=100")))
        .isTrue();
    assertThat(GzipResponses.asksForGzip(request("GET", "https://api/api/v1/namespaces/a/pods/p")))
        .isTrue();
    assertThat(
            GzipResponses.asksForGzip(
                request("GET", "https://api/api/v1/configmaps?labelSelector=a&watch=true")))
        .isFalse();
    assertThat(
            GzipResponses.asksForGzip(
                request("GET", "https://api/api/v1/namespaces/a/pods/p/log?follow=true")))
        .isFalse();
    assertThat(GzipResponses.asksForGzip(request("POST", "https://api/api/v1/configmaps")))
        .isFalse();
  }

  /**
   * The operator's own client, against an HTTP server that compresses when asked (as the API server
   * does above 128 KiB): the list arrives whole, and was asked for and sent as gzip.
   */
  @Test
  void theOperatorsClientReadsACompressedList() throws Exception {
    List<ConfigMap> items =
        IntStream.range(0, 500)
            .mapToObj(
                i ->
                    new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("cm-" + i)
                        .withNamespace("ns")
                        .endMetadata()
                        .addToData("payload", "x".repeat(500))
                        .build())
            .toList();
    byte[] json =
        io.fabric8.kubernetes.client.utils.Serialization.asJson(
                new ConfigMapListBuilder()
                    .withNewMetadata()
                    .withResourceVersion("1")
                    .endMetadata()
                    .withItems(items)
                    .build())
            .getBytes(StandardCharsets.UTF_8);
    List<String> encodings = new CopyOnWriteArrayList<>();
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/",
        exchange -> {
          String accept = exchange.getRequestHeaders().getFirst("Accept-Encoding");
          encodings.add(String.valueOf(accept));
          byte[] out = "gzip".equals(accept) ? gzip(json) : json;
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          if ("gzip".equals(accept)) {
            exchange.getResponseHeaders().add("Content-Encoding", "gzip");
          }
          exchange.sendResponseHeaders(200, out.length);
          try (OutputStream body = exchange.getResponseBody()) {
            body.write(out);
          }
        });
    server.start();
    try (KubernetesClient client =
        OperatorClient.create(
            new ConfigBuilder()
                .withMasterUrl("http://127.0.0.1:" + server.getAddress().getPort())
                .withNamespace("ns")
                .build())) {
      List<ConfigMap> read = client.configMaps().inNamespace("ns").list().getItems();
      assertThat(read).isEqualTo(items);
      assertThat(encodings).containsExactly("gzip");
    } finally {
      server.stop(0);
    }
  }
}
