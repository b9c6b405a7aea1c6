package dev.openfga.operator.bench;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * The API server the benchmark runs against, and the record of the operator's requests to it:
 * fabric8's mock ({@link BenchApi}) or a real kube-apiserver with etcd ({@link RealApi}).
 */
interface Api extends AutoCloseable {

  /** One line for the report: which server, and how requests are recorded. */
  String describe();

  /** The URL the operator and the harness talk to. */
  String url();

  /** The environment that points the operator's Kubernetes client at this server. */
  Map<String, String> operatorEnv();

  /** The harness's own client (its requests are not recorded as the operator's). */
  KubernetesClient client();

  /** The operator's requests recorded so far, in the order they were recorded (a copy). */
  List<BenchApi.Request> requests();

  int requestCount();

  void clearRequests();

  /** When the harness's last request to this path arrived (ns, the clock of {@code atNanos}). */
  long harnessArrival(String method, String pathPrefix);

  /** How long the server took to answer the harness's last request to this path (ns), or 0. */
  long harnessTook(String method, String pathPrefix);

  /** Completes with the next operator request that matches. */
  CompletableFuture<BenchApi.Request> next(Predicate<BenchApi.Request> match);

  /** Operator list requests that asked for pages. */
  long pagedLists();

  @Override
  void close();
}
