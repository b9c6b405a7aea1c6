package dev.openfga.operator.fga;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The OpenFGA servers FGAStores may name, as the installer gave them ({@code --openfga-servers},
 * chart value {@code storesAndModels.servers}). A URL is one of them when it names the same server
 * as compared for the credentials annotation ({@link StorePlanner#server(String)}: scheme, host,
 * port and path; the case of scheme and host, a default port and a trailing {@code /} do not
 * matter). The operator sends no request to any other: whoever may create an FGAStore must not be
 * able to aim the operator at a server of their choosing.
 */
public final class Servers {
  private final List<String> urls;
  private final Set<String> compared;

  public Servers(List<String> urls) {
    this.urls = List.copyOf(urls);
    this.compared = this.urls.stream().map(StorePlanner::server).collect(Collectors.toSet());
  }

  /** Whether {@code url} names one of the servers. */
  public boolean allows(String url) {
    return url != null && compared.contains(StorePlanner.server(url));
  }

  /** The servers as given, for messages. */
  public List<String> urls() {
    return urls;
  }
}
