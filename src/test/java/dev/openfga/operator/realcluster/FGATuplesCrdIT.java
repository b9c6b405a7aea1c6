package dev.openfga.operator.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.openfga.operator.models.FGAModel;
import dev.openfga.operator.stores.FGAStore;
import dev.openfga.operator.tuples.FGATuples;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The FGATuples CRD of the chart, installed on the real kube-apiserver: what it refuses at
 * admission (a tuple declared twice, both or neither of tuples and tuplesFrom, a user, relation or
 * object OpenFGA would refuse, a changed storeRef) and what it keeps (a condition's free-form
 * context, field by field). No operator runs: this is the API server's work alone.
 */
class FGATuplesCrdIT {
  @RegisterExtension static final RealCluster cluster = new RealCluster();
  private static final ObjectMapper JSON = new ObjectMapper();

  @BeforeAll
  static void theChartsCrds() {
    // the chart's CRDs and RBAC, applied as the chart renders them; the operator is not started
    cluster.installOperator(
        cluster.namespace(),
        "leaderElection: {enabled: false}\nstoresAndModels:\n  enabled: true\n"
            + "  servers: [http://127.0.0.1:8080]\n");
  }

  private static MixedOperation<FGATuples, ?, Resource<FGATuples>> tuples() {
    return cluster.client().resources(FGATuples.class);
  }

  private static FGATuples.TupleSpec tuple(String user, String relation, String object) {
    return new FGATuples.TupleSpec(user, relation, object);
  }

  /** An FGATuples in the class's namespace for the FGAStore {@code store}, with these tuples. */
  private static FGATuples resource(String name, String store, FGATuples.TupleSpec... declared) {
    FGATuples resource = new FGATuples();
    resource.setMetadata(
        new ObjectMetaBuilder().withName(name).withNamespace(cluster.namespace()).build());
    FGATuples.Spec spec = new FGATuples.Spec();
    spec.setStoreRef(new FGAStore.NameRef(store));
    spec.setTuples(new ArrayList<>(List.of(declared)));
    resource.setSpec(spec);
    return resource;
  }

  private static FGATuples create(FGATuples resource) {
    return tuples().inNamespace(cluster.namespace()).resource(resource).create();
  }

  @Test
  void theChartInstallsTheCrdNamespacedWithItsStatusSubresource() {
    CustomResourceDefinition crd =
        cluster
            .client()
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName("fgatuples.openfga.dev")
            .get();

    assertThat(crd.getSpec().getScope()).isEqualTo("Namespaced");
    assertThat(crd.getStatus().getAcceptedNames().getKind()).isEqualTo("FGATuples");
    assertThat(crd.getStatus().getAcceptedNames().getPlural()).isEqualTo("fgatuples");
    assertThat(crd.getSpec().getVersions())
        .singleElement()
        .satisfies(
            v -> {
              assertThat(v.getName()).isEqualTo("v1alpha1");
              assertThat(v.getSubresources().getStatus()).isNotNull();
            });
  }

  @Test
  void aTupleDeclaredTwiceIsRefused() {
    FGATuples twice =
        resource(
            "twice",
            "payments",
            tuple("user:anne", "viewer", "document:1"),
            tuple("user:bob", "viewer", "document:1"),
            tuple("user:anne", "viewer", "document:1"));

    assertThatThrownBy(() -> create(twice))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("spec.tuples[2]")
        .hasMessageContaining("Duplicate value");
    // the same user and object under another relation is another tuple
    twice.getSpec().getTuples().get(2).setRelation("owner");
    assertThat(create(twice).getSpec().getTuples()).hasSize(3);
  }

  @Test
  void exactlyOneOfTuplesAndTuplesFromIsAccepted() {
    FGATuples both = resource("both", "payments", tuple("user:anne", "viewer", "document:1"));
    FGATuples.TuplesFrom from = new FGATuples.TuplesFrom();
    from.setConfigMapKeyRef(new FGAModel.KeyRef("payments-tuples", "tuples.yaml"));
    both.getSpec().setTuplesFrom(from);
    FGATuples neither = resource("neither", "payments");
    neither.getSpec().setTuples(null);

    assertThatThrownBy(() -> create(both))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("exactly one of tuples, tuplesFrom must be set");
    assertThatThrownBy(() -> create(neither))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("exactly one of tuples, tuplesFrom must be set");
    neither.getSpec().setTuplesFrom(from);
    assertThat(create(neither).getSpec().getTuplesFrom().getConfigMapKeyRef().getKey())
        .isEqualTo("tuples.yaml");
  }

  @Test
  void usersRelationsAndObjectsOpenFgaWouldRefuseAreRefused() {
    FGATuples bad =
        resource(
            "bad-tuples",
            "payments",
            tuple("anne", "viewer", "document:1"),
            tuple("user:anne", "can view", "document:1"),
            tuple("user:anne", "viewer", "document"),
            tuple("user:anne", "viewer", "document:*"),
            tuple("user:anne#", "viewer", "document:2"));

    assertThatThrownBy(() -> create(bad))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("spec.tuples[0].user in body should match")
        .hasMessageContaining("spec.tuples[1].relation in body should match")
        .hasMessageContaining("spec.tuples[2].object in body should match")
        .hasMessageContaining("spec.tuples[3].object in body should match")
        .hasMessageContaining("spec.tuples[4].user in body should match");
    // an object, a userset and a typed wildcard are users
    FGATuples good =
        resource(
            "good-tuples",
            "payments",
            tuple("user:anne", "viewer", "document:1"),
            tuple("group:platform#member", "viewer", "document:1"),
            tuple("user:*", "viewer", "document:handbook"),
            tuple("user:anne@example.com", "viewer", "folder:a/b|c"));
    assertThat(create(good).getSpec().getTuples()).hasSize(4);
  }

  @Test
  void theStoreRefCannotChangeTheModelRefCan() {
    FGATuples created =
        create(resource("moving", "payments", tuple("user:anne", "viewer", "document:1")));

    created.getSpec().setModelRef(new FGAStore.NameRef("payments-model"));
    FGATuples withModel = tuples().inNamespace(cluster.namespace()).resource(created).update();
    assertThat(withModel.getSpec().getModelRef().getName()).isEqualTo("payments-model");

    withModel.getSpec().setStoreRef(new FGAStore.NameRef("billing"));
    assertThatThrownBy(() -> tuples().inNamespace(cluster.namespace()).resource(withModel).update())
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("spec.storeRef is immutable");
  }

  @Test
  void aNameTooLongForItsOwnershipRecordIsRefused() {
    assertThatThrownBy(
            () -> create(resource("t".repeat(240), "payments", tuple("user:a", "r", "d:1"))))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("an FGATuples' name is at most 239 characters");
    assertThat(create(resource("t".repeat(239), "payments", tuple("user:a", "r", "d:1"))))
        .isNotNull();
  }

  @Test
  void aConditionsContextIsKeptFieldByField() throws IOException {
    JsonNode context =
        JSON.readTree(
            """
            {"from": 9, "to": 17, "ratio": 0.5, "regions": ["eu", "us"],
             "limits": {"daily": {"amount": 1000, "currency": "EUR"}}, "strict": true}
            """);
    FGATuples.TupleSpec conditioned = tuple("user:carol", "viewer", "account:1");
    FGATuples.ConditionSpec condition = new FGATuples.ConditionSpec();
    condition.setName("business_hours");
    condition.setContext(context);
    conditioned.setCondition(condition);

    create(resource("conditioned", "payments", conditioned));
    FGATuples read = tuples().inNamespace(cluster.namespace()).withName("conditioned").get();

    FGATuples.ConditionSpec kept = read.getSpec().getTuples().get(0).getCondition();
    assertThat(kept.getName()).isEqualTo("business_hours");
    assertThat(kept.getContext()).isEqualTo(context);
    assertThat(read.getSpec().getDeletionPolicy()).isEqualTo(FGAStore.DeletionPolicy.Retain);
    // a condition name with a space or a '*', or of one character, is not one
    FGATuples.TupleSpec badName = tuple("user:carol", "viewer", "account:2");
    FGATuples.ConditionSpec bad = new FGATuples.ConditionSpec();
    bad.setName("business hours");
    badName.setCondition(bad);
    assertThatThrownBy(() -> create(resource("bad-condition", "payments", badName)))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("spec.tuples[0].condition.name in body should match");
  }

  @Test
  void theExamplesAreAccepted() throws IOException {
    List<Path> examples;
    try (Stream<Path> files = Files.list(Path.of("docs", "examples"))) {
      examples =
          files.filter(f -> f.getFileName().toString().startsWith("fgatuples-")).sorted().toList();
    }
    assertThat(examples).hasSizeGreaterThanOrEqualTo(3);
    List<String> accepted = new ArrayList<>();
    for (Path example : examples) {
      try (InputStream in = Files.newInputStream(example)) {
        for (HasMetadata object : cluster.client().load(in).items()) {
          object.getMetadata().setNamespace(cluster.namespace());
          // a dry run: validated and admitted as a create, stored nowhere
          cluster.client().resource(object).dryRun().create();
          accepted.add(example.getFileName() + ": " + object.getKind());
        }
      }
    }
    assertThat(accepted)
        .contains(
            "fgatuples-inline.yaml: FGATuples",
            "fgatuples-from-configmap.yaml: ConfigMap",
            "fgatuples-from-configmap.yaml: FGATuples",
            "fgatuples-conditioned.yaml: FGATuples");
  }
}
