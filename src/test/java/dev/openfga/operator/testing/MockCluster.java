package dev.openfga.operator.testing;

import dev.openfga.operator.Controllers;
import dev.openfga.operator.config.OperatorConfig;
import dev.openfga.operator.kube.OperatorClient;
import dev.openfga.operator.migration.rules.Keys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRule;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRuleBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReviewBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A fabric8 mock API server in CRUD mode with the fake controllers a real cluster would run (Jobs,
 * Deployments), and operators started against it. Close it to stop everything.
 *
 * <p>A JUnit extension: {@code @RegisterExtension final MockCluster cluster = new MockCluster();}
 * gives each test a cluster of its own, closed after it; on a static field, one cluster for the
 * class, closed after its last test.
 */
public final class MockCluster
    implements AutoCloseable, BeforeAllCallback, AfterEachCallback, AfterAllCallback {
  public static final String NS = "openfga";

  private final Dispatcher dispatcher = new Dispatcher();
  private final MockWebServer web;
  private final KubernetesMockServer server;
  private final KubernetesClient client;
  private final FakeJobController jobController;
  private final FakeDeploymentController deploymentController;
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final MockTls tls;

  /** A cluster with the fake Job and Deployment controllers running. */
  public MockCluster() {
    this(true, false);
  }

  /** Only the API server: nothing changes an object unless the test does. */
  public static MockCluster withoutControllers() {
    return new MockCluster(false, false);
  }

  /**
   * A cluster with the fake controllers whose API server speaks TLS as a real one does: a
   * self-signed certificate naming {@code localhost} and {@code 127.0.0.1} (see {@link
   * #certificateAuthorityFile()}), and HTTP/2 by ALPN ({@link MockTls}). For the AOT cache's
   * training run, so that the TLS handshake with its certificate checks, the TLS records and the
   * HTTP/2 connection run in it.
   */
  public static MockCluster overTls() {
    return new MockCluster(true, true);
  }

  private MockCluster(boolean controllers, boolean tls) {
    web = new MockWebServer();
    this.tls = tls ? MockTls.install(web) : null;
    server = new KubernetesMockServer(new Context(), web, new HashMap<>(), dispatcher, tls);
    server.init();
    client = server.createClient();
    jobController = new FakeJobController(server.createClient(), dispatcher.podLogs);
    deploymentController = controllers ? new FakeDeploymentController(server.createClient()) : null;
  }

  /**
   * The CRUD dispatcher plus what a real API server has and the mock lacks: JOSDK asks, before
   * leader election, whether Leases may be used (a SelfSubjectRulesReview the mock rejects), and
   * pods have logs. It records every request and can inject errors.
   */
  private static final class Dispatcher extends KubernetesCrudDispatcher {
    private final List<Fault> faults = new CopyOnWriteArrayList<>();
    private final List<Delay> delays = new CopyOnWriteArrayList<>();
    private final List<ApiRequest> requests = new CopyOnWriteArrayList<>();

    /** Pod logs by pod name: the mock has no kubelet, so the fake Job controller puts them here. */
    private final Map<String, String> podLogs = new ConcurrentHashMap<>();

    private static final Pattern LOG =
        Pattern.compile("/api/v1/namespaces/[^/]+/pods/([^/?]+)/log(\\?.*)?");

    Dispatcher() {
      super(List.of());
    }

    @Override
    public MockResponse handleGet(String path) {
      Matcher log = LOG.matcher(path);
      if (log.matches()) {
        String text = podLogs.get(log.group(1));
        if (text == null) {
          return new MockResponse().setResponseCode(404);
        }
        Matcher tail = Pattern.compile("tailLines=(\\d+)").matcher(path);
        if (tail.find()) {
          List<String> lines = List.of(text.split("\n"));
          int keep = Math.min(lines.size(), Integer.parseInt(tail.group(1)));
          text =
              String.join("\n", lines.subList(lines.size() - keep, lines.size()))
                  + (text.endsWith("\n") ? "\n" : "");
        }
        // the kubelet cuts the tail at limitBytes, wherever that falls (ASCII logs here)
        Matcher limit = Pattern.compile("limitBytes=(\\d+)").matcher(path);
        if (limit.find() && text.length() > Integer.parseInt(limit.group(1))) {
          text = text.substring(0, Integer.parseInt(limit.group(1)));
        }
        return new MockResponse().setResponseCode(200).setBody(text);
      }
      if (path.contains("/events?") && path.contains("fieldSelector=")) {
        // The mock selects by metadata fields only, and would find no Event by its involved
        // object's: it answers with all of them, which the operator filters again (as it does the
        // API server's answer).
        return super.handleGet(path.replaceAll("fieldSelector=[^&]*&?", ""));
      }
      return super.handleGet(path);
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      // Reading a body consumes it: only DELETE bodies (options the mock ignores) are kept.
      String body = "DELETE".equals(request.getMethod()) ? request.getUtf8Body() : null;
      requests.add(
          new ApiRequest(
              request.getMethod(),
              request.getPath(),
              body,
              request.getHeader("User-Agent"),
              System.nanoTime()));
      MockResponse response = answer(request);
      for (Delay d : delays) {
        if (d.method().equals(request.getMethod()) && d.matches().test(request.getPath())) {
          return response.setBodyDelay(d.delay());
        }
      }
      return response;
    }

    /** An injected fault, or what the CRUD dispatcher answers. */
    private MockResponse answer(RecordedRequest request) {
      for (Fault f : faults) {
        String path = request.getPath();
        boolean matches =
            f.atEnd()
                ? path.split("\\?", 2)[0].endsWith(f.pathPart())
                : path.contains(f.pathPart());
        if (f.method().equals(request.getMethod())
            && matches
            && f.remaining().getAndDecrement() > 0) {
          return new MockResponse()
              .setResponseCode(f.code())
              .setBody(
                  Serialization.asJson(
                      new io.fabric8.kubernetes.api.model.StatusBuilder()
                          .withStatus("Failure")
                          .withCode(f.code())
                          .withMessage(f.message())
                          .build()));
        }
      }
      return super.dispatch(request);
    }

    /** What a SelfSubjectRulesReview answers for a namespace (default: Leases allowed). */
    private volatile Function<String, List<ResourceRule>> rules =
        namespace ->
            List.of(
                new ResourceRuleBuilder()
                    .withApiGroups("coordination.k8s.io")
                    .withResources("leases")
                    .withVerbs("get", "list", "watch", "create", "update", "patch")
                    .build());

    /** A Deployment's status subresource (the path without the query). */
    private static final Pattern DEPLOYMENT_STATUS =
        Pattern.compile("(/apis/apps/v1/namespaces/[^/]+/deployments/[^/?]+)/status(\\?.*)?");

    /**
     * As the API server, a Deployment's status subresource takes changes of its annotations too
     * (the Deployment controller writes its revision annotation so, without moving the generation);
     * the mock would drop them. A JSON patch there that changes only metadata goes to the
     * Deployment itself, which in the mock moves no generation either.
     */
    @Override
    public MockResponse handlePatch(RecordedRequest request) {
      Matcher status = DEPLOYMENT_STATUS.matcher(request.getPath());
      if (!status.matches()) {
        return super.handlePatch(request);
      }
      String body = request.getUtf8Body();
      String path = request.getPath();
      if (body.trim().startsWith("[")
          && Serialization.unmarshal(body, List.class).stream()
              .allMatch(
                  op ->
                      op instanceof Map<?, ?> m
                          && String.valueOf(m.get("path")).startsWith("/metadata/"))) {
        path = status.group(1) + (status.group(2) == null ? "" : status.group(2));
      }
      return super.handlePatch(
          new RecordedRequest(
              request.getHttpVersion(),
              request.method(),
              path,
              request.getHeaders(),
              new io.fabric8.mockwebserver.http.Buffer(
                  body.getBytes(java.nio.charset.StandardCharsets.UTF_8))));
    }

    @Override
    public MockResponse handleCreate(RecordedRequest request) {
      if (request.getPath().contains("/selfsubjectrulesreviews")) {
        SelfSubjectRulesReview asked =
            Serialization.unmarshal(request.getUtf8Body(), SelfSubjectRulesReview.class);
        String namespace = asked.getSpec() == null ? null : asked.getSpec().getNamespace();
        var review =
            new SelfSubjectRulesReviewBuilder(asked)
                .editOrNewMetadata()
                .endMetadata()
                .withNewStatus()
                .withIncomplete(false)
                .withResourceRules(rules.apply(namespace))
                .endStatus()
                .build();
        return new MockResponse().setResponseCode(201).setBody(Serialization.asJson(review));
      }
      return super.handleCreate(request);
    }
  }

  /** The API server answers the next {@code times} matching requests with this HTTP code. */
  public void failNext(String method, String pathPart, int code, int times) {
    failNext(method, pathPart, code, times, "injected by the test");
  }

  /** The same, with this message in the answer's Status (as an admission plugin words it). */
  public void failNext(String method, String pathPart, int code, int times, String message) {
    dispatcher.faults.add(
        new Fault(method, pathPart, code, new AtomicInteger(times), false, message));
  }

  /** The same for requests whose path (without the query) ends with {@code pathEnd}. */
  public void failNextAt(String method, String pathEnd, int code, int times) {
    dispatcher.faults.add(
        new Fault(method, pathEnd, code, new AtomicInteger(times), true, "injected by the test"));
  }

  /**
   * The API server answers every matching request (by method and path, query included) only after
   * this delay; other requests are answered meanwhile.
   */
  public void delayAnswers(String method, Predicate<String> path, Duration delay) {
    dispatcher.delays.add(new Delay(method, path, delay));
  }

  private record Delay(String method, Predicate<String> matches, Duration delay) {}

  /**
   * One request the API server received (the body of DELETE requests only), and when ({@link
   * System#nanoTime()}).
   */
  public record ApiRequest(
      String method, String path, String body, String userAgent, long receivedNanos) {}

  /** Every request the API server received so far, oldest first. */
  public List<ApiRequest> requests() {
    return List.copyOf(dispatcher.requests);
  }

  private record Fault(
      String method,
      String pathPart,
      int code,
      AtomicInteger remaining,
      boolean atEnd,
      String message) {}

  /** The PEM file of the API server's self-signed certificate ({@link #overTls()} only). */
  public Path certificateAuthorityFile() {
    if (tls == null) {
      throw new IllegalStateException("this mock API server does not speak TLS");
    }
    return tls.certificateAuthorityFile;
  }

  public KubernetesClient client() {
    return client;
  }

  /** A fresh client (an operator instance closes nothing of ours). */
  public KubernetesClient newClient() {
    KubernetesClient c = server.createClient();
    closeables.add(c);
    return c;
  }

  /** The User-Agent of the operators this class starts: their requests can be told apart. */
  public static final String OPERATOR_AGENT = "openfga-operator-in-mock";

  /** A fresh client configured as the operator's own ({@link OperatorClient}). */
  public KubernetesClient operatorClient() {
    KubernetesClient c =
        OperatorClient.create(
            new ConfigBuilder(client.getConfiguration()).withUserAgent(OPERATOR_AGENT).build(),
            dev.openfga.operator.Controllers.CUSTOM_KINDS);
    closeables.add(c);
    return c;
  }

  /** A fresh client that names itself with this User-Agent (its requests can be told apart). */
  public KubernetesClient newClient(String userAgent) {
    KubernetesClient c =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(client.getConfiguration()).withUserAgent(userAgent).build())
            .build();
    closeables.add(c);
    return c;
  }

  /**
   * What JOSDK's SelfSubjectRulesReview is answered in each namespace (the mock cannot evaluate
   * RBAC); by default Leases may be used.
   */
  public void answerRulesReviews(Function<String, List<ResourceRule>> rulesByNamespace) {
    dispatcher.rules = rulesByNamespace;
  }

  public FakeJobController jobs() {
    return jobController;
  }

  public FakeDeploymentController deployments() {
    return deploymentController;
  }

  /** Test settings: short cooldown and retention so a retry happens within seconds. */
  public static OperatorConfig config(Duration cooldown, int ttlSeconds) {
    return new OperatorConfig(
        Set.of(NS),
        false,
        Optional.of(NS),
        Optional.empty(),
        Optional.empty(),
        0,
        300,
        ttlSeconds,
        cooldown);
  }

  /**
   * The same configuration with the FGAStore and FGAModel controllers on, for the OpenFGA servers
   * {@code servers} (base URLs).
   */
  public static OperatorConfig withStoresAndModels(OperatorConfig base, String... servers) {
    return new OperatorConfig(
        base.watchNamespaces(),
        base.leaderElect(),
        base.leaseNamespace(),
        base.metricsAddress(),
        base.healthAddress(),
        base.backoffLimit(),
        base.activeDeadlineSeconds(),
        base.ttlSecondsAfterFinished(),
        base.retryCooldown(),
        base.failureLogLines(),
        base.dryRun(),
        true,
        base.leaseName(),
        base.modelTestMaxChecks(),
        List.of(servers));
  }

  public Controllers startOperator(OperatorConfig config, String identity) {
    return startOperator(config, identity, null);
  }

  /** An operator whose metrics go into the registry ({@code null}: none). */
  public Controllers startOperator(OperatorConfig config, String identity, MeterRegistry registry) {
    return startOperator(config, identity, registry, Clock.systemUTC());
  }

  /** An operator that reads the time from {@code clock} (e.g. one a test moves ahead). */
  public Controllers startOperator(
      OperatorConfig config, String identity, MeterRegistry registry, Clock clock) {
    Controllers operator =
        Controllers.create(operatorClient(), config, clock, identity, false, registry);
    closeables.add(operator);
    operator.start();
    return operator;
  }

  public Deployment create(Deployment deployment) {
    return client.apps().deployments().inNamespace(NS).resource(deployment).create();
  }

  /** Changes the image of the Deployment's first container, as `kubectl set image` would. */
  public Deployment setImage(String deployment, String image) {
    String patch =
        "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/image\",\"value\":\""
            + image
            + "\"}]";
    return client
        .apps()
        .deployments()
        .inNamespace(NS)
        .withName(deployment)
        .patch(PatchContext.of(PatchType.JSON), patch);
  }

  /** A Job the operator does not own (a hand-made one, someone else's tool's). */
  public Job createForeignJob(String name) {
    return client
        .batch()
        .v1()
        .jobs()
        .inNamespace(NS)
        .resource(Fixtures.foreignJob(NS, name))
        .create();
  }

  public Deployment deployment(String name) {
    return client.apps().deployments().inNamespace(NS).withName(name).get();
  }

  public Job job(String name) {
    return client.batch().v1().jobs().inNamespace(NS).withName(name).get();
  }

  public ConfigMap configMap(String name) {
    return client.configMaps().inNamespace(NS).withName(name).get();
  }

  public Optional<String> recordedVersion(String deployment) {
    ConfigMap cm = configMap(deployment + "-migration-status");
    return Optional.ofNullable(cm).map(c -> c.getData().get(Keys.DATA_VERSION));
  }

  /** Events on the Deployment, in the order the API server lists them. */
  public List<Event> events(String deployment) {
    return client.v1().events().inNamespace(NS).list().getItems().stream()
        .filter(e -> deployment.equals(e.getInvolvedObject().getName()))
        .toList();
  }

  /** The status of the operator's MigrationFailed condition, or "" when absent. */
  public String fakeCondition(String deployment) {
    return deployments()
        .migrationCondition(deployment(deployment))
        .map(c -> c.getStatus())
        .orElse("");
  }

  public List<String> eventReasons(String deployment) {
    return events(deployment).stream().map(Event::getReason).toList();
  }

  /** Registered on a static field: it lives as long as the test class. */
  private boolean perClass;

  @Override
  public void beforeAll(ExtensionContext context) {
    perClass = true;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    if (!perClass) {
      close();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    close();
  }

  private boolean closed;

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (int i = closeables.size() - 1; i >= 0; i--) {
      AutoCloseable c = closeables.get(i);
      try {
        c.close();
      } catch (Exception e) {
        // closing a test cluster: nothing to do
      }
    }
    jobController.close();
    if (deploymentController != null) {
      deploymentController.close();
    }
    client.close();
    server.destroy();
  }
}
