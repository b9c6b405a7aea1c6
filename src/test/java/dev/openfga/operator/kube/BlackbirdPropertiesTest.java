package dev.openfga.operator.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBase;
import com.fasterxml.jackson.databind.deser.DefaultDeserializationContext;
import com.fasterxml.jackson.databind.deser.SettableBeanProperty;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.apps.DeploymentSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The operator's serialization sets a model object's properties through the accessors Blackbird
 * generates, inside fabric8's delegating wrapper, and not through {@code Method.invoke}: with
 * Blackbird's modifier run after fabric8's, reflection is a large share of an image change's CPU
 * (docs/performance.md, change 21).
 */
class BlackbirdPropertiesTest {

  /** The classes of a property and of every property it delegates to, outermost first. */
  private static List<String> chain(SettableBeanProperty property) {
    List<String> classes = new ArrayList<>();
    for (SettableBeanProperty p = property; p != null; ) {
      classes.add(p.getClass().getName());
      p = p instanceof SettableBeanProperty.Delegating d ? d.getDelegate() : null;
    }
    return classes;
  }

  /** Strings, lists, maps and model objects (the properties LazyDeserializers defers). */
  @Test
  void modelPropertiesAreSetThroughGeneratedAccessorsInsideFabric8sWrapper() throws Exception {
    ObjectMapper mapper = new ObjectMapper();
    OperatorClient.serialization(mapper);
    DeserializationContext context =
        ((DefaultDeserializationContext) mapper.getDeserializationContext())
            .createInstance(mapper.getDeserializationConfig(), null, mapper.getInjectableValues());
    for (var type : List.of(Container.class, ObjectMeta.class, DeploymentSpec.class)) {
      BeanDeserializerBase deserializer =
          (BeanDeserializerBase) context.findRootValueDeserializer(mapper.constructType(type));
      List<SettableBeanProperty> properties = new ArrayList<>();
      deserializer.properties().forEachRemaining(properties::add);
      assertThat(properties).as(type.getSimpleName()).isNotEmpty();
      for (SettableBeanProperty property : properties) {
        Class<?> raw = property.getType().getRawClass();
        if (!(raw == String.class
            || property.getType().isContainerType()
            || raw.getName().startsWith("io.fabric8.kubernetes.api.model."))) {
          // Jackson's own handling of boxed numbers and booleans is left as it is
          continue;
        }
        assertThat(chain(property))
            .as("%s.%s", type.getSimpleName(), property.getName())
            .anySatisfy(c -> assertThat(c).startsWith("io.fabric8.kubernetes.model.jackson."))
            .anySatisfy(c -> assertThat(c).contains(".blackbird."));
      }
    }
  }
}
