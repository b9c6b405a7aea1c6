package dev.openfga.operator.openfga;

import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The OpenFGA servers FGAStores may name, as the installer gave them ({@code --openfga-servers},
 * chart value {@code storesAndModels.servers}). A URL is one of them when it names the same server
 * as compared for the credentials annotation ({@link #canonical}: scheme, host, port and path; the
 * case of scheme and host, a default port and a trailing {@code /} do not matter). The operator
 * sends no request to any other: whoever may create an FGAStore must not be able to aim the
 * operator at a server of their choosing.
 */
public final class Servers {
  private final List<String> urls;
  private final Set<String> compared;

  public Servers(List<String> urls) {
    this.urls = List.copyOf(urls);
    this.compared = this.urls.stream().map(Servers::canonical).collect(Collectors.toSet());
  }

  /** Whether {@code url} names one of the servers. */
  public boolean allows(String url) {
    return url != null && compared.contains(canonical(url));
  }

  /**
   * The server a URL names, as compared (by this list, by the deletion and by {@link
   * Credentials#checkServer}): scheme and host in lower case, the default port spelt out, the path
   * without a trailing '/'. (Other names of one server, a Service's short and full names, still
   * differ.)
   */
  public static String canonical(String text) {
    String url = text.strip();
    try {
      URI uri = URI.create(url);
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
      int port = uri.getPort() >= 0 ? uri.getPort() : "https".equals(scheme) ? 443 : 80;
      String path = uri.getRawPath() == null ? "" : uri.getRawPath();
      while (path.endsWith("/")) {
        path = path.substring(0, path.length() - 1);
      }
      String host = uri.getHost() == null ? "" : uri.getHost().toLowerCase(Locale.ROOT);
      return scheme + "://" + host + ":" + port + path;
    } catch (IllegalArgumentException e) {
      return url;
    }
  }

  /** The servers as given, for messages. */
  public List<String> urls() {
    return urls;
  }
}
