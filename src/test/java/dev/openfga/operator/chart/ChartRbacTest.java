package dev.openfga.operator.chart;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static dev.openfga.operator.testing.Fixtures.openfga;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.openfga.operator.Controllers;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.openfga.Credentials;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.testing.FakeJobController;
import dev.openfga.operator.testing.FakeOpenFga;
import dev.openfga.operator.testing.InMemoryOpenFga;
import dev.openfga.operator.testing.MockCluster;
import dev.openfga.operator.testing.UpstreamChart;
import dev.openfga.operator.tuples.FGATuples;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.LeaderElectionManager;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The chart's RBAC grants every API call the operator makes, and nothing more. The list of calls
 * comes from the code, not from a second hand-written copy: the real operator, started with the
 * flags the chart renders, plays a story (first install, upgrade, failure and retry after the
 * cooldown, a legacy Helm hook Job adopted, a foreign Job in the way, leader election) against a
 * mock API server that records each request; each request is then checked against the rendered
 * Roles, ClusterRoles and bindings as the RBAC authorizer would, and each granted verb must have
 * been used.
 */
class ChartRbacTest {
  private static final String WATCHED = MockCluster.NS;
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final String STORY_VALUES =
      """
      retryCooldown: 2s
      migrationJob:
        ttlSecondsAfterFinished: 1
      """;

  @Test
  void roleInTheWatchedNamespaceGrantsExactlyTheCallsTheOperatorMakes() {
    var manifests = chart().values(STORY_VALUES + "watchNamespace: " + WATCHED + "\n").render();
    RbacRules rules = rulesOf(manifests);

    List<ApiCall> calls = story(manifests, rules, Optional.empty(), null, null);

    System.out.println("API calls of the operator (watching " + WATCHED + "):");
    System.out.println(verbTable(calls));
    assertEveryCallAllowed(calls, rules);
    assertEveryGrantUsed(calls, rules, true);
    // the operator's own namespace holds only the Lease; nothing else of the operator's is there
    assertThat(calls)
        .filteredOn(c -> OperatorChart.NAMESPACE.equals(c.namespace()))
        .allSatisfy(c -> assertThat(c.groupResource()).isEqualTo("coordination.k8s.io/leases"));
  }

  @Test
  void withStoresAndModelsTheRoleGrantsExactlyTheCallsTheOperatorMakes() throws Exception {
    InMemoryOpenFga api = new InMemoryOpenFga();
    List<ApiCall> calls;
    RbacRules rules;
    try (FakeOpenFga openfga = new FakeOpenFga(api)) {
      var manifests =
          chart()
              .values(
                  STORY_VALUES
                      + "watchNamespace: "
                      + WATCHED
                      + "\nstoresAndModels:\n  enabled: true\n  servers: ["
                      + openfga.url()
                      + "]\n")
              .render();
      rules = rulesOf(manifests);

      calls = story(manifests, rules, Optional.empty(), openfga, api);
    }

    System.out.println("API calls of the operator with FGAStores and FGAModels:");
    System.out.println(verbTable(calls));
    assertEveryCallAllowed(calls, rules);
    assertEveryGrantUsed(calls, rules, true);
    assertThat(calls).anyMatch(c -> c.groupResource().equals("openfga.dev/fgamodels/status"));
    // a status write that met a newer object reads it (StatusWrites.update)
    assertThat(calls)
        .anyMatch(c -> c.groupResource().equals("openfga.dev/fgamodels") && c.verb().equals("get"));
  }

  @Test
  void clusterRoleOfAnOperatorWatchingAllNamespacesGrantsExactlyTheCallsItMakes() {
    var manifests = chart().values(STORY_VALUES + "watchAllNamespaces: true\n").render();
    RbacRules rules = rulesOf(manifests);

    List<ApiCall> calls = story(manifests, rules, Optional.of("team-b"), null, null);

    assertEveryCallAllowed(calls, rules);
    assertEveryGrantUsed(calls, rules, true);
    assertThat(calls).anyMatch(c -> c.namespace() == null && c.verb().equals("watch"));
  }

  @Test
  void clusterRoleBoundInSeveralNamespacesGrantsExactlyTheVerbsTheOperatorUses() {
    // and without failure evidence: no pod log is read, and none may be; the migration pods are
    // listed and watched
    var manifests =
        chart()
            .values(
                STORY_VALUES + "watchNamespaces: [" + WATCHED + ", team-b]\nfailureLogLines: 0\n")
            .render();
    RbacRules rules = rulesOf(manifests);

    List<ApiCall> calls = story(manifests, rules, Optional.of("team-b"), null, null);

    assertEveryCallAllowed(calls, rules);
    // the full story runs in one namespace only: every verb is used, not in every namespace
    assertEveryGrantUsed(calls, rules, false);
    assertThat(calls).noneMatch(c -> c.namespace() == null);
    assertThat(calls).noneMatch(c -> c.resource().equals("pods/log"));
    assertThat(calls)
        .filteredOn(c -> c.resource().equals("pods"))
        .extracting(ApiCall::verb)
        .containsOnly("list", "watch");
  }

  @Test
  void aDryRunMakesOnlyTheReadsItsReadOnlyRoleGrants() {
    var manifests =
        chart().values(STORY_VALUES + "watchNamespace: " + WATCHED + "\ndryRun: true\n").render();
    RbacRules rules = rulesOf(manifests);
    List<ApiCall> calls;
    try (RecordingCluster cluster = new RecordingCluster(rules)) {
      KubernetesClient h = cluster.harness();
      create(h, openfga().name("alpha").version("v1.8.0").build());
      Controllers operator = operatorOf(cluster, manifests);
      try {
        operator.start();
        // it decided to create the Job: the direct reads made before every create were sent
        await()
            .atMost(WAIT)
            .until(
                () ->
                    cluster.recorded(
                        c ->
                            c.verb().equals("get")
                                && c.resource().equals("jobs")
                                && "alpha-migrate".equals(c.name())));
      } finally {
        operator.close();
      }
      calls = cluster.calls();
      assertThat(h.batch().v1().jobs().inNamespace(WATCHED).list().getItems()).isEmpty();
      assertThat(h.configMaps().inNamespace(WATCHED).list().getItems()).isEmpty();
      assertThat(h.v1().events().inNamespace(WATCHED).list().getItems()).isEmpty();
    }
    assertEveryCallAllowed(calls, rules);
    assertThat(calls).extracting(ApiCall::verb).containsOnly("get", "list", "watch");
  }

  private static RbacRules rulesOf(OperatorChart.Manifests manifests) {
    var pod = manifests.deployment();
    return RbacRules.of(
        manifests,
        pod.getSpec().getTemplate().getSpec().getServiceAccountName(),
        pod.getMetadata().getNamespace());
  }

  private static void assertEveryCallAllowed(List<ApiCall> calls, RbacRules rules) {
    assertThat(calls).isNotEmpty();
    assertThat(calls.stream().filter(c -> !rules.allows(c)).map(ApiCall::toString).distinct())
        .as("calls the chart's RBAC forbids")
        .isEmpty();
  }

  /**
   * Every granted verb was used — or, never sent, is one that the operator's own start-up check
   * demands (JOSDK asks a SelfSubjectRulesReview whether it may use Leases and refuses to start
   * otherwise): proven by starting the operator with that verb taken away.
   */
  private static void assertEveryGrantUsed(
      List<ApiCall> calls, RbacRules rules, boolean inItsNamespace) {
    List<RbacRules.Grant> unused =
        rules.singleVerbGrants().stream()
            .filter(g -> calls.stream().noneMatch(c -> inItsNamespace ? g.allows(c) : g.matches(c)))
            .toList();
    if (!unused.isEmpty()) {
      assertThat(starts(rules)).as("the operator starts with every grant").isTrue();
    }
    for (RbacRules.Grant grant : unused) {
      assertThat(starts(rules.without(grant)))
          .as(
              "granted but never used, nor demanded at start-up: %s %s/%s from %s",
              grant.rule().getVerbs(),
              grant.rule().getApiGroups(),
              grant.rule().getResources(),
              grant.from())
          .isFalse();
      System.out.println(
          "never sent, demanded by the start-up check: "
              + grant.rule().getVerbs()
              + " "
              + grant.rule().getApiGroups()
              + "/"
              + grant.rule().getResources()
              + " from "
              + grant.from());
    }
  }

  /** The operator as the chart's flags configure it, on the recording cluster. */
  private static Controllers operatorOf(
      RecordingCluster cluster, OperatorChart.Manifests manifests) {
    try {
      return Controllers.create(
          cluster.operatorClient(),
          ChartFlagsTest.parse(manifests).operator(),
          Clock.systemUTC(),
          "operator-under-test",
          false);
    } catch (Exception e) {
      throw new AssertionError("the chart's flags were refused", e);
    }
  }

  /** Whether the operator, with leader election, starts when these are its permissions. */
  private static boolean starts(RbacRules rules) {
    var manifests = chart().render();
    try (RecordingCluster cluster = new RecordingCluster(rules)) {
      Controllers operator = operatorOf(cluster, manifests);
      try {
        operator.start();
        return true;
      } catch (RuntimeException refused) {
        // refused for lack of permission, not for another reason
        assertThat(refused)
            .hasStackTraceContaining(LeaderElectionManager.NO_PERMISSION_TO_LEASE_RESOURCE_MESSAGE);
        return false;
      } finally {
        operator.close();
      }
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** {@code group/resource: verbs} for each resource the operator touched. */
  static String verbTable(List<ApiCall> calls) {
    Map<String, TreeSet<String>> verbs = new TreeMap<>();
    calls.forEach(
        c ->
            verbs
                .computeIfAbsent(
                    c.groupResource()
                        + (c.namespace() == null ? " (cluster-wide)" : " in " + c.namespace()),
                    k -> new TreeSet<>())
                .add(c.verb()));
    return verbs.entrySet().stream()
        .map(e -> "  " + e.getKey() + ": " + String.join(", ", e.getValue()))
        .collect(Collectors.joining("\n"));
  }

  /**
   * Runs the operator as the chart configures it through the whole story; returns every resource
   * call it made. With {@code openfga} (serving {@code api}, one of the chart's
   * storesAndModels.servers) an FGAStore and an FGAModel too; null: none.
   */
  private static List<ApiCall> story(
      OperatorChart.Manifests manifests,
      RbacRules rules,
      Optional<String> otherNamespace,
      FakeOpenFga openfga,
      InMemoryOpenFga api) {
    boolean storesAndModels = openfga != null;
    try (RecordingCluster cluster = new RecordingCluster(rules)) {
      KubernetesClient h = cluster.harness();
      Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
      cluster.runJobs(
          job -> {
            String owner = job.getMetadata().getName().replaceFirst("-migrate$", "");
            if (owner.equals("epsilon")) {
              // its pod is refused: the operator asks the Job's Events why
              return FakeJobController.Script.REFUSE_POD;
            }
            int attempt =
                attempts.computeIfAbsent(owner, k -> new AtomicInteger()).incrementAndGet();
            return owner.equals("beta") && attempt == 1
                ? FakeJobController.Script.FAIL
                : FakeJobController.Script.SUCCEED;
          });

      // a legacy Helm hook Job of the upstream chart, and its Deployment in operator mode
      Job hook = UpstreamChart.load(h, UpstreamChart.HOOK_MODE, Job.class);
      h.batch().v1().jobs().inNamespace(WATCHED).resource(hook).create();
      h.apps()
          .deployments()
          .inNamespace(WATCHED)
          .resource(UpstreamChart.load(h, UpstreamChart.OPERATOR_MODE, Deployment.class))
          .create();
      // a Job the operator does not own holds gamma's Job name
      cluster.createForeignJob("gamma-migrate");
      create(h, openfga().name("alpha").version("v1.8.0").build());
      create(h, openfga().name("beta").version("v1.9.0").build());
      create(h, openfga().name("gamma").version("v1.9.0").build());
      create(h, openfga().name("epsilon").version("v1.9.0").build());
      otherNamespace.ifPresent(
          ns -> {
            Deployment delta = openfga().name("delta").version("v1.8.0").build();
            delta.getMetadata().setNamespace(ns);
            create(h, delta);
          });
      if (storesAndModels) {
        storeAndModel(h, openfga.url());
        // each one's first status write meets a newer object (a reconcile on a stale cached
        // copy): the operator reads the resource and writes on it
        cluster.failNextAt("PATCH", "/fgastores/app/status", 409, 1);
        cluster.failNextAt("PATCH", "/fgamodels/app/status", 409, 1);
        cluster.failNextAt("PATCH", "/fgatuples/app/status", 409, 1);
      }

      Controllers operator = operatorOf(cluster, manifests);
      try {
        operator.start();
        awaitVersion(h, WATCHED, "alpha", "v1.8.0");
        // the upgrade, as a JSON patch that cannot conflict with the operator's own writes
        h.apps()
            .deployments()
            .inNamespace(WATCHED)
            .withName("alpha")
            .patch(
                PatchContext.of(PatchType.JSON),
                "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/image\","
                    + "\"value\":\"openfga/openfga:v1.9.0\"}]");
        awaitVersion(h, WATCHED, "alpha", "v1.9.0");
        awaitVersion(h, WATCHED, "beta", "v1.9.0");
        await()
            .atMost(WAIT)
            .until(
                () -> h.apps().deployments().inNamespace(WATCHED).withName("beta").get(),
                d ->
                    d.getMetadata().getAnnotations() != null
                        && !d.getMetadata()
                            .getAnnotations()
                            .containsKey("openfga.dev/migration-retry-after"));
        assertThat(attempts.get("beta")).hasValue(2);
        awaitVersion(h, WATCHED, "openfga", "v1.18.3");
        await()
            .atMost(WAIT)
            .until(
                () ->
                    h.v1().events().inNamespace(WATCHED).list().getItems().stream()
                        .filter(e -> "gamma".equals(e.getInvolvedObject().getName()))
                        .map(e -> e.getReason())
                        .toList(),
                r -> r.contains("MigrationJobConflict") && r.size() == 1);
        otherNamespace.ifPresent(ns -> awaitVersion(h, ns, "delta", "v1.8.0"));
        await()
            .atMost(WAIT)
            .until(
                () ->
                    cluster.recorded(
                        c -> c.verb().equals("list") && c.resource().equals("events")));
        // the leader renews its Lease
        await()
            .atMost(WAIT)
            .until(
                () ->
                    cluster.recorded(
                        c ->
                            c.resource().equals("leases")
                                && c.verb().equals("patch")
                                && OperatorChart.NAMESPACE.equals(c.namespace())));
        if (storesAndModels) {
          awaitStoreAndModelThenDeleteTheStore(h, api);
        }
      } finally {
        operator.close();
      }
      assertThat(cluster.nonResourceCalls()).as("non-resource requests").isEmpty();
      return cluster.calls();
    }
  }

  /**
   * An FGAStore (its credentials in a Secret, created once alpha is migrated, deleted with the
   * store) and an FGAModel in it, published to a ConfigMap and to alpha, which opts in by label.
   */
  private static void storeAndModel(KubernetesClient h, String url) {
    h.secrets()
        .inNamespace(WATCHED)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("fga-key")
                .addToAnnotations(Credentials.SERVERS, url)
                .endMetadata()
                .addToData("apiToken", "a2V5")
                .build())
        .create();
    FGAStore store = new FGAStore();
    store.setMetadata(new ObjectMetaBuilder().withName("app").withNamespace(WATCHED).build());
    FGAStore.Spec spec = new FGAStore.Spec();
    spec.setName("app");
    spec.setDeletionPolicy(FGAStore.DeletionPolicy.Delete);
    FGAStore.OpenFgaRef ref = new FGAStore.OpenFgaRef();
    ref.setUrl(url);
    ref.setCredentialsRef(new FGAStore.NameRef("fga-key"));
    ref.setDeploymentRef(new FGAStore.NameRef("alpha"));
    spec.setOpenfgaRef(ref);
    store.setSpec(spec);
    h.resources(FGAStore.class).inNamespace(WATCHED).resource(store).create();

    FGAModel model = new FGAModel();
    model.setMetadata(new ObjectMetaBuilder().withName("app").withNamespace(WATCHED).build());
    FGAModel.Spec m = new FGAModel.Spec();
    m.setStoreRef(new FGAStore.NameRef("app"));
    m.setModel(
        "model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n");
    FGAModel.Publish publish = new FGAModel.Publish();
    publish.setConfigMapName("app-fga");
    m.setPublish(publish);
    model.setSpec(m);
    h.resources(FGAModel.class).inNamespace(WATCHED).resource(model).create();

    FGATuples tuples = new FGATuples();
    tuples.setMetadata(new ObjectMetaBuilder().withName("app").withNamespace(WATCHED).build());
    tuples.setSpec(new FGATuples.Spec());
    tuples.getSpec().setStoreRef(new FGAStore.NameRef("app"));
    tuples.getSpec().setModelRef(new FGAStore.NameRef("app"));
    tuples.getSpec().setDeletionPolicy(FGAStore.DeletionPolicy.Delete);
    tuples.getSpec().setTuples(List.of(new FGATuples.TupleSpec("user:anne", "viewer", "doc:1")));
    h.resources(FGATuples.class).inNamespace(WATCHED).resource(tuples).create();
    // a merge patch, not an edit: the fake controllers write alpha meanwhile (an edit is
    // conditional on the resourceVersion it read, and failed once with 409 in a CI run)
    h.apps()
        .deployments()
        .inNamespace(WATCHED)
        .withName("alpha")
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"metadata\":{\"labels\":{\"" + FGAModel.MODEL + "\":\"app\"}}}");
  }

  private static void awaitStoreAndModelThenDeleteTheStore(
      KubernetesClient h, InMemoryOpenFga api) {
    // the store waits for alpha's migration and the model for the store, each looking again
    // every 10 s: about 20 s (more on a loaded machine)
    await()
        .atMost(Duration.ofSeconds(120))
        .until(
            () ->
                Optional.ofNullable(h.configMaps().inNamespace(WATCHED).withName("app-fga").get())
                    .map(ConfigMap::getData)
                    .map(d -> d.get("FGA_MODEL_ID"))
                    .isPresent());
    await()
        .atMost(WAIT)
        .until(
            () ->
                h.apps()
                    .deployments()
                    .inNamespace(WATCHED)
                    .withName("alpha")
                    .get()
                    .getSpec()
                    .getTemplate()
                    .getMetadata()
                    .getAnnotations(),
            a -> a != null && a.containsKey(FGAModel.MODEL_ID));
    assertThat(api.stores).hasSize(1);
    String storeId = api.stores.keySet().iterator().next();
    await()
        .atMost(WAIT)
        .until(() -> api.tuples(storeId).keySet(), k -> k.contains("doc:1#viewer@user:anne"));
    h.resources(FGATuples.class).inNamespace(WATCHED).withName("app").delete();
    await()
        .atMost(WAIT)
        .until(
            () -> h.resources(FGATuples.class).inNamespace(WATCHED).withName("app").get() == null);
    assertThat(api.tuples(storeId)).as("the tuple it wrote, deleted with it").isEmpty();
    h.resources(FGAStore.class).inNamespace(WATCHED).withName("app").delete();
    await()
        .atMost(WAIT)
        .until(
            () -> h.resources(FGAStore.class).inNamespace(WATCHED).withName("app").get() == null);
    assertThat(api.stores).as("the store the operator created, deleted with it").isEmpty();
  }

  private static void create(KubernetesClient h, Deployment deployment) {
    h.apps()
        .deployments()
        .inNamespace(deployment.getMetadata().getNamespace())
        .resource(deployment)
        .create();
  }

  private static void awaitVersion(KubernetesClient h, String ns, String name, String version) {
    await()
        .atMost(WAIT)
        .until(
            () ->
                Optional.ofNullable(
                        h.configMaps().inNamespace(ns).withName(name + "-migration-status").get())
                    .map(ConfigMap::getData)
                    .map(d -> d.get("version"))
                    .orElse(""),
            version::equals);
  }
}
