package dev.openfga.operator.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.DeserializerCache;
import dev.openfga.operator.testing.Fixtures;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.lang.reflect.Field;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The operator's client builds a property's deserializer when a value of it is first read; what it
 * reads is exactly what fabric8's own serialization reads.
 */
class LazyDeserializersTest {

  /** A pod spec that uses most of the model: volume sources, probes, hooks, scheduling, nulls. */
  private static final String RICH =
      """
      {"apiVersion":"apps/v1","kind":"Deployment",
       "metadata":{"name":"rich","namespace":"ns","labels":{"a":"b"},"annotations":{"x":"y"},
         "ownerReferences":[{"apiVersion":"v1","kind":"X","name":"o","uid":"u","controller":true}]},
       "spec":{"replicas":2,"selector":{"matchLabels":{"a":"b"}},
         "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":1}},
         "template":{"metadata":{"labels":{"a":"b"}},"spec":{
           "containers":[{"name":"c","image":"i:1","args":["run"],
             "env":[{"name":"E","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}},
                    {"name":"F","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},
                    {"name":"G","value":null}],
             "envFrom":[{"configMapRef":{"name":"cm"}}],
             "ports":[{"containerPort":8080,"name":"http"}],
             "livenessProbe":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":5},
             "readinessProbe":{"grpc":{"port":8081}},
             "startupProbe":{"exec":{"command":["true"]}},
             "lifecycle":{"preStop":{"sleep":{"seconds":3}}},
             "resources":{"limits":{"cpu":"500m","memory":"128Mi"},"requests":{"cpu":"0.1"}},
             "securityContext":{"runAsNonRoot":true,"capabilities":{"drop":["ALL"]}},
             "volumeMounts":[{"name":"v1","mountPath":"/a"},{"name":"v2","mountPath":"/b"}]}],
           "initContainers":[{"name":"proxy","image":"p:1","restartPolicy":"Always",
             "startupProbe":{"tcpSocket":{"port":5432}}}],
           "ephemeralContainers":null,
           "volumes":[{"name":"v1","configMap":{"name":"cm","items":[{"key":"k","path":"p"}]}},
             {"name":"v2","projected":{"sources":[{"serviceAccountToken":{"path":"t"}},
               {"secret":{"name":"s"}}]}},
             {"name":"v3","emptyDir":{"medium":"Memory","sizeLimit":"1Gi"}},
             {"name":"v4","csi":{"driver":"d","volumeAttributes":{"k":"v"}}},
             {"name":"v5","persistentVolumeClaim":{"claimName":"c"}},
             {"name":"v6","secret":null}],
           "affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
             {"weight":1,"podAffinityTerm":{"topologyKey":"k","labelSelector":{"matchExpressions":
               [{"key":"a","operator":"In","values":["b"]}]}}}]}},
           "tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule"}],
           "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"z",
             "whenUnsatisfiable":"DoNotSchedule"}],
           "securityContext":{"fsGroup":1000,"seccompProfile":{"type":"RuntimeDefault"}},
           "serviceAccountName":"sa","imagePullSecrets":[{"name":"r"}],
           "nodeSelector":{"n":"1"},"dnsConfig":{"options":[{"name":"ndots","value":"2"}]},
           "unknownField":{"nested":[1,2]}}}},
       "status":{"replicas":2,"conditions":[{"type":"Available","status":"True",
         "lastTransitionTime":"2026-01-01T00:00:00Z"}]}}
      """;

  private static final KubernetesSerialization FABRIC8 = new KubernetesSerialization();

  static Stream<HasMetadata> objects() {
    return Stream.of(
        FABRIC8.unmarshal(RICH, Deployment.class),
        Fixtures.upstreamChart("operator-mode.yaml", Deployment.class),
        Fixtures.upstreamChart("hook-mode.yaml", Deployment.class),
        Fixtures.upstreamChart("hook-mode.yaml", Job.class),
        Fixtures.upstreamChart("hook-mode.yaml", Pod.class),
        Fixtures.upstreamChart("operator-mode.yaml", Pod.class));
  }

  @ParameterizedTest
  @MethodSource("objects")
  void readsWhatFabric8Reads(HasMetadata object) {
    String json = FABRIC8.asJson(object);

    HasMetadata lazy = OperatorClient.serialization().unmarshal(json, object.getClass());

    HasMetadata expected = FABRIC8.unmarshal(json, object.getClass());
    if (expected instanceof Job job) {
      // the operator reads its Jobs without their pod template (OperatorClient)
      assertThat(job.getSpec().getTemplate()).isNotNull();
      job.getSpec().setTemplate(null);
    }
    if (expected instanceof Pod pod) {
      // and its Pods as metadata and phase (OperatorClient; the failure evidence reads them whole)
      assertThat(pod.getSpec()).isNotNull();
      pod.setSpec(null);
      if (pod.getStatus() != null) {
        pod.getStatus().setConditions(new java.util.ArrayList<>());
        pod.getStatus().setContainerStatuses(new java.util.ArrayList<>());
        pod.getStatus().setInitContainerStatuses(new java.util.ArrayList<>());
        pod.getStatus().setEphemeralContainerStatuses(new java.util.ArrayList<>());
        pod.getStatus().setResourceClaimStatuses(new java.util.ArrayList<>());
      }
    }
    assertThat(lazy).isEqualTo(expected);
    // and again, with every deserializer now built
    assertThat(OperatorClient.serialization().unmarshal(json, object.getClass())).isEqualTo(lazy);
  }

  @Test
  void explicitNullsReadAsNulls() {
    Deployment d = OperatorClient.serialization().unmarshal(RICH, Deployment.class);

    assertThat(d.getSpec().getTemplate().getSpec().getEphemeralContainers()).isNull();
    assertThat(d.getSpec().getTemplate().getSpec().getVolumes().get(5).getSecret()).isNull();
    assertThat(d.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().get(2))
        .satisfies(e -> assertThat(e.getValue()).isNull());
  }

  @Test
  void buildsOnlyTheDeserializersOfWhatItReads() throws Exception {
    String minimal =
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"a\"}}";
    ObjectMapper lazyMapper = new ObjectMapper().registerModule(LazyDeserializers.module());
    ObjectMapper eagerMapper = new ObjectMapper();

    lazyMapper.readValue(minimal, Deployment.class);
    eagerMapper.readValue(minimal, Deployment.class);

    int lazy = cachedDeserializers(lazyMapper);
    int eager = cachedDeserializers(eagerMapper);
    assertThat(eager).as("eager builds the pod-spec graph").isGreaterThan(100);
    assertThat(lazy).as("lazy builds Deployment and ObjectMeta").isLessThan(eager / 10);
  }

  private static int cachedDeserializers(ObjectMapper mapper) throws Exception {
    Field cache = DeserializationContext.class.getDeclaredField("_cache");
    cache.setAccessible(true);
    return ((DeserializerCache) cache.get(mapper.getDeserializationContext()))
        .cachedDeserializersCount();
  }
}
