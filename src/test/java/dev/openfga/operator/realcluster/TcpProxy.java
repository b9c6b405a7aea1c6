package dev.openfga.operator.realcluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP forwarder run as a process of its own: what the test kubelet starts for a native sidecar
 * with the image {@code openfga-operator-test/tcp-proxy}, standing in for a database proxy such as
 * the Cloud SQL proxy.
 *
 * <pre>
 * java -cp &lt;test classes&gt; dev.openfga.operator.realcluster.TcpProxy \
 *     --listen=127.0.0.1:&lt;port&gt; --target=&lt;host&gt;:&lt;port&gt;
 * </pre>
 *
 * <p>It prints {@code listening on <host>:<port>} once the listen socket is bound (connections are
 * accepted from then on), then for every connection {@code accepted connection <n> from <address>,
 * forwarding to <target>} and, when it ends, {@code closed connection <n>: <x> bytes to target, <y>
 * bytes from target}. Each connection gets a pair of threads, one per direction; an end of stream
 * is passed on as a half-close. SIGTERM ends it the JVM's default way (exit code 143).
 */
final class TcpProxy {
  /** How its first line starts, once it accepts connections. */
  static final String LISTENING = "listening on ";

  private static final AtomicInteger CONNECTIONS = new AtomicInteger();

  private TcpProxy() {}

  /** The command that runs it with {@code args}, with the running JVM's {@code java}. */
  static List<String> command(List<String> args) {
    String java =
        ProcessHandle.current()
            .info()
            .command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> command =
        new ArrayList<>(
            List.of(
                java,
                "-Xmx32m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                classpath(),
                TcpProxy.class.getName()));
    command.addAll(args);
    return command;
  }

  /** Where this class was loaded from (it needs nothing else), else the JVM's class path. */
  private static String classpath() {
    try {
      return Path.of(TcpProxy.class.getProtectionDomain().getCodeSource().getLocation().toURI())
          .toString();
    } catch (URISyntaxException | RuntimeException e) {
      return System.getProperty("java.class.path");
    }
  }

  public static void main(String[] args) {
    String listen = null;
    String target = null;
    for (String arg : args) {
      if (arg.startsWith("--listen=")) {
        listen = arg.substring("--listen=".length());
      } else if (arg.startsWith("--target=")) {
        target = arg.substring("--target=".length());
      } else {
        usage("unknown argument " + arg);
      }
    }
    if (listen == null || target == null) {
      usage("--listen and --target are needed");
    }
    InetSocketAddress listenAddress = address(listen);
    InetSocketAddress targetAddress = address(target); // a malformed target fails here
    String targetHost = targetAddress.getHostString();
    int targetPort = targetAddress.getPort();
    String targetText = target;
    try (ServerSocket server = new ServerSocket()) {
      server.setReuseAddress(true);
      try {
        server.bind(listenAddress, 128);
      } catch (IOException e) {
        print("cannot listen on " + listen + ": " + e);
        System.exit(1);
      }
      print(LISTENING + listenAddress.getHostString() + ":" + server.getLocalPort());
      while (true) {
        Socket client = server.accept();
        int n = CONNECTIONS.incrementAndGet();
        print(
            "accepted connection "
                + n
                + " from "
                + client.getRemoteSocketAddress()
                + ", forwarding to "
                + targetText);
        new Thread(() -> forward(n, client, targetHost, targetPort, targetText), "connection-" + n)
            .start();
      }
    } catch (IOException e) {
      print("stopped accepting: " + e);
      System.exit(1);
    }
  }

  /** Connects to the target and pipes both ways until both directions have ended. */
  private static void forward(int n, Socket client, String host, int port, String target) {
    try (client;
        Socket upstream = new Socket()) {
      try {
        upstream.connect(new InetSocketAddress(host, port), 10_000);
      } catch (IOException e) {
        print("connection " + n + ": cannot connect to " + target + ": " + e);
        return;
      }
      client.setTcpNoDelay(true);
      upstream.setTcpNoDelay(true);
      AtomicLong toTarget = new AtomicLong();
      AtomicLong fromTarget = new AtomicLong();
      Thread up = new Thread(() -> pump(client, upstream, toTarget), "connection-" + n + "-up");
      up.start();
      pump(upstream, client, fromTarget);
      up.join();
      print(
          "closed connection "
              + n
              + ": "
              + toTarget.get()
              + " bytes to target, "
              + fromTarget.get()
              + " bytes from target");
    } catch (IOException e) {
      print("connection " + n + ": " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Copies {@code from} to {@code to}; at the end of the stream half-closes {@code to}, on an error
   * closes both (which ends the other direction too).
   */
  private static void pump(Socket from, Socket to, AtomicLong count) {
    byte[] buffer = new byte[16 * 1024];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      int read;
      while ((read = in.read(buffer)) >= 0) {
        out.write(buffer, 0, read);
        out.flush();
        count.addAndGet(read);
      }
      to.shutdownOutput();
    } catch (IOException e) {
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  /** {@code host:port}; an empty host is 127.0.0.1. */
  private static InetSocketAddress address(String text) {
    int colon = text.lastIndexOf(':');
    if (colon < 0) {
      usage("not host:port: " + text);
    }
    String host = text.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    try {
      return new InetSocketAddress(
          host.isEmpty() ? "127.0.0.1" : host, Integer.parseInt(text.substring(colon + 1)));
    } catch (IllegalArgumentException e) {
      usage("not host:port: " + text);
      throw e; // not reached
    }
  }

  private static void usage(String problem) {
    print("tcp-proxy: " + problem);
    print("usage: --listen=<host>:<port> --target=<host>:<port>");
    System.exit(2);
  }

  private static synchronized void print(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
