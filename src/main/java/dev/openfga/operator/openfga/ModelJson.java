package dev.openfga.operator.openfga;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.openfga.language.DslToJsonTransformer;
import dev.openfga.language.JsonToDslTransformer;
import dev.openfga.language.errors.DslErrorsException;
import dev.openfga.language.errors.ParsingError;
import dev.openfga.language.validation.ModelValidator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An authorization model as the FGAModel controller compares models: its JSON normalised, and a
 * hash of that. Two models that OpenFGA treats the same hash the same, whatever their source (DSL
 * with other whitespace or comments, JSON with other key order, or a model read back from the API
 * with its id and empty fields), so an unchanged model is never written twice and a model already
 * in the store is recognised (openfga/openfga #811: every write is a new model id).
 *
 * <p>Normalising: the model's {@code id} and the provenance fields ({@code source_info}, {@code
 * module}, {@code file}) are dropped, and every null and empty string; an empty {@code conditions},
 * {@code metadata}, {@code relations}, {@code directly_related_user_types} or {@code generic_types}
 * (of a condition's parameter type) is as none (an empty {@code this} or {@code wildcard} is kept:
 * it means something); object keys are sorted; the type definitions are sorted by type and each
 * relation's directly related user types by their JSON. The order of a rewrite's children ({@code
 * union}, {@code intersection}) is kept: it is what the author wrote.
 */
public final class ModelJson {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final String ROOT = "$root";

  /**
   * Keys whose empty value means the same as no value; elsewhere {@code {}} has a meaning. OpenFGA
   * answers with each of them present, e.g. {@code "generic_types": []} on every parameter type of
   * a condition, which a model JSON written by hand leaves out.
   */
  private static final java.util.Set<String> EMPTY_IS_ABSENT =
      java.util.Set.of(
          "conditions", "metadata", "relations", "directly_related_user_types", "generic_types");

  /** Fields that say where a model came from, not what it says. */
  private static final java.util.Set<String> PROVENANCE =
      java.util.Set.of("source_info", "module", "file");

  private ModelJson() {}

  /** The model cannot be used; the message says where and why (the DSL parser's own words). */
  public static final class InvalidModel extends Exception {
    public InvalidModel(String message) {
      super(message);
    }
  }

  /** A normalised model: canonical JSON and {@code sha256:<hex>} of it. */
  public record Normalised(JsonNode json, String hash) {}

  /** From the DSL, through OpenFGA's own transformer and validator. */
  public static Normalised fromDsl(String dsl) throws InvalidModel {
    return fromDsl(dsl, "the model DSL");
  }

  /**
   * From the DSL, through OpenFGA's own transformer and validator; {@code source} names the text in
   * a message ({@code spec.model}, a ConfigMap key), and a message's line and column are counted as
   * an editor shows them, from 1 at the start of that text.
   */
  public static Normalised fromDsl(String dsl, String source) throws InvalidModel {
    String json;
    try {
      json = new DslToJsonTransformer().transform(dsl);
    } catch (DslErrorsException e) {
      throw new InvalidModel(source + " does not parse: " + errors(e, true));
    } catch (IOException e) {
      throw new InvalidModel(source + " cannot be read: " + e.getMessage());
    }
    validate(dsl, source, true);
    try {
      return of(JSON.readTree(json));
    } catch (IOException e) {
      throw new InvalidModel(source + " cannot be read: " + e.getMessage());
    }
  }

  /**
   * OpenFGA's semantic checks (undefined types and relations, cycles, ...) on the DSL; {@code
   * located}: say where in it (not for a DSL made from the user's JSON, which they never saw).
   */
  private static void validate(String dsl, String source, boolean located) throws InvalidModel {
    try {
      ModelValidator.validateDsl(dsl);
    } catch (DslErrorsException e) {
      throw new InvalidModel(source + " is not valid: " + errors(e, located));
    } catch (IOException | RuntimeException e) {
      throw new InvalidModel(source + " cannot be validated: " + e.getMessage());
    }
  }

  /**
   * The parser's and validator's errors, joined. They count lines and columns from 0 ({@code
   * line=5, column=19} is the sixth line's twentieth character): said here from 1, as an editor and
   * {@code fga model validate} show them.
   */
  static String errors(DslErrorsException e, boolean located) {
    String all =
        e.getErrors().stream()
            .map(error -> error(error, located))
            .map(String::strip)
            .collect(java.util.stream.Collectors.joining("; "));
    return all.isEmpty() ? String.valueOf(e.getMessage()) : all;
  }

  /** One error of the parser's, validator's or {@code fga.mod} reader's, located from 1. */
  static String located(Object error) {
    return error(error, true).strip();
  }

  private static String error(Object error, boolean located) {
    if (!(error instanceof ParsingError p) || p.getMessage() == null) {
      return String.valueOf(error);
    }
    if (!located || p.getLine() == null || p.getColumn() == null) {
      return p.getMessage();
    }
    return "line "
        + (p.getLine().getStart() + 1)
        + ", column "
        + (p.getColumn().getStart() + 1)
        + ": "
        + p.getMessage();
  }

  /** From JSON (as {@code fga model write --file model.json} takes it). */
  public static Normalised fromJson(String json) throws InvalidModel {
    return fromJson(json, "the model JSON");
  }

  /** From JSON; {@code source} names the text in a message ({@code spec.modelJson}, a key). */
  public static Normalised fromJson(String json, String source) throws InvalidModel {
    JsonNode node;
    try {
      node = JSON.readTree(json);
    } catch (IOException e) {
      throw new InvalidModel(source + " does not parse: " + e.getMessage());
    }
    if (node == null
        || !node.path("schema_version").isTextual()
        || !node.path("type_definitions").isArray()) {
      throw new InvalidModel(
          source + " needs schema_version (a string) and type_definitions (an array)");
    }
    try {
      validate(new JsonToDslTransformer().transform(json), source, false);
    } catch (IOException e) {
      throw new InvalidModel(source + " is not an authorization model: " + e.getMessage());
    } catch (RuntimeException e) {
      throw new InvalidModel(source + " is not an authorization model: " + e);
    }
    return of(node);
  }

  /**
   * From a modular model: {@code modFile} the text of an {@code fga.mod}, {@code files} the texts
   * it may name, by key ({@link ModularModel#modules} says how a path is looked up); combined as
   * the {@code fga} CLI combines them ({@link ModularModel#combine}), then validated as any model.
   * {@code source} names the {@code fga.mod} in a message; an error in a module file names that
   * file, and its line and column from 1.
   */
  public static Normalised fromModFile(String modFile, Map<String, String> files, String source)
      throws InvalidModel {
    ObjectNode model;
    try {
      ModularModel.ModFile mod = ModularModel.modFile(modFile);
      List<ModularModel.Module> modules;
      try {
        modules = ModularModel.modules(mod, files);
      } catch (ModularModel.Invalid e) {
        throw new InvalidModel(source + ": a file it lists is missing: " + e.getMessage());
      }
      try {
        model = ModularModel.combine(modules, mod.schema());
      } catch (ModularModel.Invalid e) {
        throw new InvalidModel(source + ": its modules do not combine: " + e.getMessage());
      }
    } catch (ModularModel.Invalid e) {
      throw new InvalidModel(source + " is not a valid fga.mod: " + e.getMessage());
    }
    String json = model.toString();
    try {
      validate(new JsonToDslTransformer().transform(json), source + " (combined)", false);
    } catch (IOException | RuntimeException e) {
      throw new InvalidModel(source + ": the combined model cannot be read: " + e.getMessage());
    }
    return of(model);
  }

  /** Any model JSON, e.g. one the API returned. */
  public static Normalised of(JsonNode model) {
    JsonNode normal = normalise(model, ROOT);
    if (normal == null) {
      normal = NODES.objectNode();
    }
    return new Normalised(normal, hash(normal));
  }

  /** The normal form of {@code node}, the value of {@code key}; null when it is to be left out. */
  private static JsonNode normalise(JsonNode node, String key) {
    if (node == null || node.isNull() || node.isMissingNode()) {
      return null;
    }
    if (node.isTextual() && node.asText().isEmpty()) {
      return null;
    }
    if (node.isObject()) {
      Map<String, JsonNode> fields = new TreeMap<>();
      for (var field : node.properties()) {
        String name = field.getKey();
        if (PROVENANCE.contains(name) || (key.equals(ROOT) && name.equals("id"))) {
          continue;
        }
        JsonNode value = normalise(field.getValue(), name);
        if (value != null) {
          fields.put(name, value);
        }
      }
      if (fields.isEmpty() && EMPTY_IS_ABSENT.contains(key)) {
        return null;
      }
      ObjectNode out = NODES.objectNode();
      fields.forEach(out::set);
      return out;
    }
    if (node.isArray()) {
      List<JsonNode> items = new ArrayList<>();
      for (JsonNode item : node) {
        JsonNode value = normalise(item, "");
        if (value != null) {
          items.add(value);
        }
      }
      if (items.isEmpty() && EMPTY_IS_ABSENT.contains(key)) {
        return null;
      }
      if (key.equals("type_definitions")) {
        items.sort(Comparator.comparing(t -> t.path("type").asText()));
      } else if (key.equals("directly_related_user_types")) {
        items.sort(Comparator.comparing(JsonNode::toString));
      }
      ArrayNode out = NODES.arrayNode();
      items.forEach(out::add);
      return out;
    }
    return node;
  }

  private static String hash(JsonNode normal) {
    return sha256(normal.toString());
  }

  /** {@code sha256:<hex>} of {@code text} (UTF-8): the form of every hash an FGAModel records. */
  public static String sha256(String text) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return "sha256:" + HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
