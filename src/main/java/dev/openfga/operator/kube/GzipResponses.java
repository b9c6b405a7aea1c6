package dev.openfga.operator.kube;

import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Asks the API server for gzip-compressed answers to reads, and inflates them (docs/performance.md,
 * "Compressed lists"). The API server compresses a response of more than 128 KiB when asked: a page
 * of 100 Deployments is well above that and compresses well, and the JVM, with C1 only, decrypts
 * TLS in plain Java (AES-GCM has no C1 intrinsic), so decrypting an uncompressed first list is a
 * large part of the start-up. fabric8's clients do not ask for compression (and the JDK's HTTP
 * client does not inflate), hence this interceptor.
 *
 * <p>Watches are left alone: their events are small and must not wait in a compressor's buffer. An
 * answer that is not gzip (the server did not compress it, or the mock server) is passed on as it
 * is: a gzip stream starts with the byte {@code 0x1f}, JSON never does.
 */
final class GzipResponses implements Interceptor {
  static final String NAME = "gzip-responses";

  @Override
  public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    if (asksForGzip(request)) {
      builder.setHeader("Accept-Encoding", "gzip");
    }
  }

  @Override
  public AsyncBody.Consumer<List<ByteBuffer>> consumer(
      AsyncBody.Consumer<List<ByteBuffer>> consumer, HttpRequest request) {
    return asksForGzip(request) ? new Gunzip(consumer) : consumer;
  }

  /** Plain reads: not a watch, nothing streamed. */
  static boolean asksForGzip(HttpRequest request) {
    if (!"GET".equals(request.method())) {
      return false;
    }
    String query = request.uri().getRawQuery();
    return query == null || !(query.contains("watch=true") || query.contains("follow=true"));
  }

  /**
   * Inflates a gzip body (RFC 1952, one member) as it arrives, chunk by chunk, and checks its CRC
   * and length; any other body goes to the consumer unchanged.
   */
  static final class Gunzip implements AsyncBody.Consumer<List<ByteBuffer>> {
    private static final int FEXTRA = 4;
    private static final int FNAME = 8;
    private static final int FCOMMENT = 16;
    private static final int FHCRC = 2;

    private enum State {
      FIRST_BYTE,
      PLAIN,
      HEADER,
      DEFLATED,
      TRAILER,
      DONE
    }

    private final AsyncBody.Consumer<List<ByteBuffer>> delegate;
    private State state = State.FIRST_BYTE;
    private final ByteArrayOutputStream header = new ByteArrayOutputStream();
    private final ByteArrayOutputStream trailer = new ByteArrayOutputStream();
    private final Inflater inflater = new Inflater(true);
    private final CRC32 crc = new CRC32();
    private final byte[] out = new byte[64 * 1024];

    Gunzip(AsyncBody.Consumer<List<ByteBuffer>> delegate) {
      this.delegate = delegate;
    }

    @Override
    public void consume(List<ByteBuffer> value, AsyncBody asyncBody) throws Exception {
      if (state == State.FIRST_BYTE) {
        ByteBuffer first = value.stream().filter(ByteBuffer::hasRemaining).findFirst().orElse(null);
        if (first == null) {
          delegate.consume(value, asyncBody);
          return;
        }
        state = first.get(first.position()) == (byte) 0x1f ? State.HEADER : State.PLAIN;
      }
      if (state == State.PLAIN) {
        delegate.consume(value, asyncBody);
        return;
      }
      List<ByteBuffer> inflated = new ArrayList<>();
      for (ByteBuffer chunk : value) {
        inflate(chunk, inflated);
      }
      delegate.consume(inflated, asyncBody);
    }

    @Override
    public <U> U unwrap(Class<U> target) {
      return delegate.unwrap(target);
    }

    private void inflate(ByteBuffer chunk, List<ByteBuffer> inflated) throws IOException {
      while (chunk.hasRemaining()) {
        switch (state) {
          case HEADER -> {
            header.write(chunk.get());
            if (headerComplete()) {
              state = State.DEFLATED;
            }
          }
          case DEFLATED -> {
            inflater.setInput(chunk);
            try {
              int n;
              while ((n = inflater.inflate(out)) > 0) {
                crc.update(out, 0, n);
                inflated.add(copy(out, n));
              }
            } catch (DataFormatException e) {
              throw new IOException("gzip answer from the API server is corrupt", e);
            }
            if (inflater.finished()) {
              state = State.TRAILER;
            } else if (inflater.needsDictionary() || chunk.hasRemaining()) {
              throw new IOException("gzip answer from the API server cannot be inflated");
            }
          }
          case TRAILER -> {
            trailer.write(chunk.get());
            if (trailer.size() == 8) {
              checkTrailer(trailer.toByteArray());
              state = State.DONE;
              inflater.end();
            }
          }
          case DONE -> throw new IOException("data after the end of a gzip answer");
          default -> throw new IllegalStateException(state.name());
        }
      }
    }

    private static ByteBuffer copy(byte[] bytes, int n) {
      byte[] c = new byte[n];
      System.arraycopy(bytes, 0, c, 0, n);
      return ByteBuffer.wrap(c);
    }

    /** True once the header bytes read so far are a whole gzip header. */
    private boolean headerComplete() throws IOException {
      byte[] h = header.toByteArray();
      if (h.length < 10) {
        return false;
      }
      if ((h[0] & 0xff) != 0x1f || (h[1] & 0xff) != 0x8b || h[2] != 8) {
        throw new IOException("the API server's answer is not gzip with deflate");
      }
      int flags = h[3] & 0xff;
      int at = 10;
      if ((flags & FEXTRA) != 0) {
        if (h.length < at + 2) {
          return false;
        }
        at += 2 + ((h[at] & 0xff) | (h[at + 1] & 0xff) << 8);
      }
      if ((flags & FNAME) != 0) {
        at = afterZero(h, at);
        if (at < 0) {
          return false;
        }
      }
      if ((flags & FCOMMENT) != 0) {
        at = afterZero(h, at);
        if (at < 0) {
          return false;
        }
      }
      if ((flags & FHCRC) != 0) {
        at += 2;
      }
      return h.length >= at;
    }

    private static int afterZero(byte[] h, int from) {
      for (int i = from; i < h.length; i++) {
        if (h[i] == 0) {
          return i + 1;
        }
      }
      return -1;
    }

    private void checkTrailer(byte[] t) throws IOException {
      long expectedCrc = littleEndian(t, 0);
      long expectedSize = littleEndian(t, 4);
      if (expectedCrc != crc.getValue()
          || expectedSize != (inflater.getBytesWritten() & 0xffffffffL)) {
        throw new IOException("gzip answer from the API server fails its CRC or length check");
      }
    }

    private static long littleEndian(byte[] b, int at) {
      return (b[at] & 0xffL)
          | (b[at + 1] & 0xffL) << 8
          | (b[at + 2] & 0xffL) << 16
          | (b[at + 3] & 0xffL) << 24;
    }
  }
}
