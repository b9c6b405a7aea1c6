package dev.openfga.operator.kube;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.annotation.JacksonStdImpl;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBuilder;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.SettableBeanProperty;
import com.fasterxml.jackson.databind.module.SimpleModule;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the deserializer of a model object's property when a value of it is first read, not when
 * the enclosing object's deserializer is built.
 *
 * <p>Jackson builds a bean's deserializer together with those of every property type it can reach:
 * the first Deployment read builds deserializers for the whole pod-spec graph (thirty volume
 * sources, ephemeral containers, lifecycle hooks, ...), whatever the objects hold. At start-up,
 * under C1, building them is most of the time the first page takes to decode (docs/performance.md,
 * change 14, "Lazy deserializers"); once built they cost nothing. With this module only the types
 * that occur in the data are ever introspected, loaded and compiled.
 *
 * <p>Only properties whose type is, or holds, a fabric8 model class are deferred; a property with a
 * deserializer of its own ({@code @JsonDeserialize(using = ...)}) or with polymorphic type
 * information keeps Jackson's handling. What is read is the same object either way ({@code
 * LazyDeserializersTest}).
 */
final class LazyDeserializers extends BeanDeserializerModifier {
  private static final String MODEL = "io.fabric8.kubernetes.api.model";

  private LazyDeserializers() {}

  /** The module to register on the operator's object mapper. */
  static SimpleModule module() {
    SimpleModule module = new SimpleModule("openfga-operator-lazy-deserializers");
    module.setDeserializerModifier(new LazyDeserializers());
    return module;
  }

  @Override
  public BeanDeserializerBuilder updateBuilder(
      DeserializationConfig config, BeanDescription description, BeanDeserializerBuilder builder) {
    List<SettableBeanProperty> properties = new ArrayList<>();
    builder.getProperties().forEachRemaining(properties::add);
    for (SettableBeanProperty property : properties) {
      if (!property.hasValueDeserializer()
          && property.getValueTypeDeserializer() == null
          && holdsModel(property.getType())) {
        builder.addOrReplaceProperty(
            property.withValueDeserializer(new Deferred(property.getType(), property)), true);
      }
    }
    return builder;
  }

  /** Whether {@code type}, or what it holds (list element, map value), is a fabric8 model class. */
  private static boolean holdsModel(JavaType type) {
    for (JavaType t = type; t != null; t = t.getContentType()) {
      if (t.getRawClass().getName().startsWith(MODEL)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Stands in for a property's deserializer until a value is read.
   *
   * <p>Marked as one of Jackson's own: Blackbird drops its generated setter from a property whose
   * deserializer is not (it cannot know whether a custom deserializer must see every value), and
   * every model-typed property would then be set through {@code Method.invoke}. This one only
   * defers to the deserializer Jackson would have used, and only on object-typed properties, whose
   * generated setter still calls it.
   */
  @JacksonStdImpl
  private static final class Deferred extends JsonDeserializer<Object> {
    private final JavaType type;
    private final BeanProperty property;
    private volatile JsonDeserializer<Object> real;

    Deferred(JavaType type, BeanProperty property) {
      this.type = type;
      this.property = property;
    }

    private JsonDeserializer<Object> real(DeserializationContext context)
        throws JsonMappingException {
      JsonDeserializer<Object> found = real;
      if (found == null) {
        // built once per property; two threads racing here both get Jackson's cached deserializer
        found = context.findContextualValueDeserializer(type, property);
        real = found;
      }
      return found;
    }

    @Override
    public Object deserialize(JsonParser parser, DeserializationContext context)
        throws IOException {
      return real(context).deserialize(parser, context);
    }

    @Override
    public Object deserialize(JsonParser parser, DeserializationContext context, Object into)
        throws IOException {
      return real(context).deserialize(parser, context, into);
    }

    @Override
    public Object getNullValue(DeserializationContext context) throws JsonMappingException {
      return real(context).getNullValue(context);
    }

    @Override
    public Object getEmptyValue(DeserializationContext context) throws JsonMappingException {
      return real(context).getEmptyValue(context);
    }

    @Override
    public Class<?> handledType() {
      return type.getRawClass();
    }
  }
}
