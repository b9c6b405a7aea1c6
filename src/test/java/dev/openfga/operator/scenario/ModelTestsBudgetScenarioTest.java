package dev.openfga.operator.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpHandler;
import dev.openfga.operator.config.OperatorConfig;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.models.ModelAssertions;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.testing.FakeOpenFga;
import dev.openfga.operator.testing.InMemoryOpenFga;
import dev.openfga.operator.testing.MockCluster;
import dev.openfga.operator.testing.TestStores;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The budget of an FGAModel's tests (SPEC §10) in the real operator against the mock API server and
 * an in-memory OpenFGA: a suite beyond {@code --model-test-max-checks} is refused before any check;
 * a long suite yields the shared slots to another namespace's FGAStore; an I/O error during the
 * tests is tried again later and later.
 */
class ModelTestsBudgetScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final String OTHER_NS = "team-b";
  private static final String DSL =
      "model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n";

  private final InMemoryOpenFga api = new InMemoryOpenFga();
  @RegisterExtension final MockCluster cluster = new MockCluster();
  private FakeOpenFga openfga;

  /** The operator's clock: the system's, moved ahead by the test. */
  private final AtomicReference<Duration> ahead = new AtomicReference<>(Duration.ZERO);

  private final Clock clock =
      new Clock() {
        @Override
        public ZoneId getZone() {
          return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
          return this;
        }

        @Override
        public Instant instant() {
          return Instant.now().plus(ahead.get());
        }
      };

  private final AtomicInteger looks = new AtomicInteger();

  /** When each scratch store was created, by the operator's clock. */
  private final List<Instant> scratchCreated = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws Exception {
    HttpHandler recording =
        exchange -> {
          if (exchange.getRequestMethod().equals("POST")
              && exchange.getRequestURI().getPath().equals("/stores")
              && api.created.get() > 0) {
            scratchCreated.add(clock.instant());
          }
          api.handle(exchange);
        };
    openfga = new FakeOpenFga(recording);
    // the FGAStores and FGAModels of two namespaces
    OperatorConfig base =
        MockCluster.withStoresAndModels(
            MockCluster.config(Duration.ofSeconds(2), 1), openfga.url());
    OperatorConfig config =
        new OperatorConfig(
            Set.of(MockCluster.NS, OTHER_NS),
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
            OperatorConfig.DEFAULT_MODEL_TEST_MAX_CHECKS,
            base.openfgaServers());
    cluster.startOperator(config, "operator-a", null, clock);
  }

  @AfterEach
  void stop() {
    openfga.close();
  }

  private String url() {
    return "http://127.0.0.1:" + openfga.port();
  }

  /** The FGAStore "app" of {@link MockCluster#NS}, once its store is made. */
  private void createStore() {
    TestStores.create(cluster, "app", "app", url());
    await().atMost(WAIT).until(() -> ready(store(MockCluster.NS, "app")).isPresent());
  }

  private FGAModel createModel(String name, String tests) {
    FGAModel model = new FGAModel();
    model.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(MockCluster.NS).build());
    FGAModel.Spec spec = new FGAModel.Spec();
    spec.setStoreRef(new FGAStore.NameRef("app"));
    spec.setModel(DSL);
    spec.setTests(tests);
    model.setSpec(spec);
    return cluster
        .client()
        .resources(FGAModel.class)
        .inNamespace(MockCluster.NS)
        .resource(model)
        .create();
  }

  private FGAStore store(String ns, String name) {
    return cluster.client().resources(FGAStore.class).inNamespace(ns).withName(name).get();
  }

  private static Optional<Condition> ready(FGAStore store) {
    return store == null || store.getStatus() == null
        ? Optional.empty()
        : store.getStatus().getConditions().stream()
            .filter(c -> c.getType().equals("Ready") && c.getStatus().equals("True"))
            .findFirst();
  }

  private Condition modelReady(String name) {
    FGAModel m = TestStores.getModel(cluster, name);
    return m == null || m.getStatus() == null
        ? null
        : m.getStatus().getConditions().stream()
            .filter(c -> c.getType().equals("Ready"))
            .findFirst()
            .orElse(null);
  }

  @Test
  void testsBeyondTheBudgetAreAnInvalidModelBeforeAnyCheck() {
    createStore();
    // 7 users x 11 objects x 13 relations: 1001 checks, one more than the default budget
    createModel("app", dev.openfga.operator.testing.Fixtures.modelTestCombinations(7, 11, 13));

    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(modelReady("app"))
                    .extracting(Condition::getReason)
                    .isEqualTo("InvalidModel"));
    assertThat(modelReady("app").getMessage())
        .contains("spec.tests expand to 1001 checks")
        .contains("more than the 1000")
        .contains("--model-test-max-checks");
    // not one check, no scratch store (the FGAStore's store only), no model written
    assertThat(api.checks).hasValue(0);
    assertThat(api.created).hasValue(1);
    assertThat(api.modelsWritten).hasValue(0);

    // fewer: every one of them runs, and the model is written
    TestStores.editModel(
        cluster,
        "app",
        m ->
            m.getSpec()
                .setTests(dev.openfga.operator.testing.Fixtures.modelTestCombinations(10, 10, 1)));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(modelReady("app")).extracting(Condition::getStatus).isEqualTo("True"));
    assertThat(api.checks).hasValue(100);
    assertThat(api.modelsWritten).hasValue(2); // the scratch store's and the store's
  }

  @Test
  void twoLongSuitesYieldTheSharedSlotsToAStoreOfAnotherNamespace() {
    createStore();
    // a slow server: each of the 2 x 200 checks takes 10 ms and more, a suite 2 s and more
    api.checkMillis = 10;
    String tests = dev.openfga.operator.testing.Fixtures.modelTestCombinations(10, 10, 2);
    String first = ModelAssertions.scratchName(createModel("first", tests).getMetadata().getUid());
    String second =
        ModelAssertions.scratchName(createModel("second", tests).getMetadata().getUid());
    // both suites under way: they hold both slots
    await()
        .atMost(WAIT)
        .until(
            () ->
                api.log.stream().filter(("check " + first)::equals).count() >= 20
                    && api.log.stream().filter(("check " + second)::equals).count() >= 20);

    FGAStore other = new FGAStore();
    other.setMetadata(new ObjectMetaBuilder().withName("other").withNamespace(OTHER_NS).build());
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName("other");
    FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
    ref.setUrl(url());
    spec.setOpenfgaRef(ref);
    other.setSpec(spec);
    cluster.client().resources(FGAStore.class).inNamespace(OTHER_NS).resource(other).create();

    await().atMost(WAIT).until(() -> ready(store(OTHER_NS, "other")).isPresent());
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(modelReady("first")).extracting(Condition::getStatus).isEqualTo("True");
              assertThat(modelReady("second")).extracting(Condition::getStatus).isEqualTo("True");
            });

    // the other namespace's store was made while both suites still had checks to make: its
    // requests came between theirs
    List<String> log = List.copyOf(api.log);
    int created = log.indexOf("create other");
    assertThat(created).isPositive();
    for (String scratch : List.of(first, second)) {
      assertThat(log.subList(0, created))
          .as("checks of %s before", scratch)
          .contains("check " + scratch);
      assertThat(log.subList(created, log.size()))
          .as("checks of %s after the other namespace's store was made", scratch)
          .contains("check " + scratch);
      // every check once: a suite that yields goes on where it stood
      assertThat(log.stream().filter(("check " + scratch)::equals)).hasSize(200);
    }
  }

  @Test
  void anIoErrorDuringTheTestsIsTriedAgainLaterAndLater() {
    createStore();
    // every check is left without an answer: each run of the tests ends in an I/O error
    api.unanswered = "check";
    createModel(
        "app",
        "- name: anne\n  check:\n    - {user: user:anne, object: doc:1, "
            + "assertions: {viewer: true}}\n");

    awaitMessage("the tests run again in 10s");
    assertThat(scratchCreated).hasSize(1);

    // 10 s later (by the operator's clock), a look runs them again: 20 s next time
    moveAhead(Duration.ofSeconds(10));
    awaitMessage("the tests run again in 20s");
    assertThat(scratchCreated).hasSize(2);

    // half of that later, a look runs nothing (the look after it begins once it is over)
    moveAhead(Duration.ofSeconds(10));
    awaitLook();
    awaitLook();
    assertThat(scratchCreated).hasSize(2);
    // all of it later, a look runs them: 40 s next time
    moveAhead(Duration.ofSeconds(10));
    awaitMessage("the tests run again in 40s");

    assertThat(scratchCreated).hasSize(3);
    assertThat(Duration.between(scratchCreated.get(0), scratchCreated.get(1)))
        .isGreaterThanOrEqualTo(Duration.ofSeconds(10));
    assertThat(Duration.between(scratchCreated.get(1), scratchCreated.get(2)))
        .isGreaterThanOrEqualTo(Duration.ofSeconds(20));
  }

  /** Moves the operator's clock ahead, and has it look at the FGAModel "app" (a label). */
  private void moveAhead(Duration by) {
    ahead.updateAndGet(d -> d.plus(by));
    TestStores.editModel(
        cluster,
        "app",
        m -> m.getMetadata().setLabels(Map.of("looked-at", "look-" + looks.incrementAndGet())));
  }

  /**
   * Has the operator look at the FGAModel "app" (a label), and waits until a look began after that
   * (its read of the FGAStore): one look of a resource begins when the one before is over.
   */
  private void awaitLook() {
    long before = System.nanoTime();
    TestStores.editModel(
        cluster,
        "app",
        m -> m.getMetadata().setLabels(Map.of("looked-at", "look-" + looks.incrementAndGet())));
    await()
        .atMost(WAIT)
        .until(
            () ->
                cluster.requests().stream()
                    .anyMatch(
                        r ->
                            r.receivedNanos() > before
                                && r.method().equals("GET")
                                && MockCluster.OPERATOR_AGENT.equals(r.userAgent())
                                && r.path()
                                    .endsWith("/namespaces/" + MockCluster.NS + "/fgastores/app")));
  }

  private void awaitMessage(String part) {
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(modelReady("app"))
                  .extracting(Condition::getReason)
                  .isEqualTo("OpenFGARequestFailed");
              assertThat(modelReady("app").getMessage()).contains(part);
            });
  }
}
