package dev.openfga.operator.openfga;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.openfga.language.DslToJsonTransformer;
import dev.openfga.language.FgaModFile;
import dev.openfga.language.FgaModTransformer;
import dev.openfga.language.ModFileStringProperty;
import dev.openfga.language.antlr.OpenFGALexer;
import dev.openfga.language.antlr.OpenFGAParser;
import dev.openfga.language.errors.DslErrorsException;
import dev.openfga.language.errors.ModFileValidationError;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.antlr.v4.runtime.CharStreams;
import org.antlr.v4.runtime.CommonTokenStream;
import org.antlr.v4.runtime.Token;

/**
 * A modular model — an {@code fga.mod} and the module files it lists — combined into one
 * authorization model, as the {@code fga} CLI combines it. The Java language library parses an
 * {@code fga.mod} ({@code FgaModTransformer}) and one module file ({@code DslToJsonTransformer})
 * but has no combiner; this is a port of the Go library's ({@code
 * transformer.TransformModuleFilesToModel}), over the Java library's own parser. Pure: the files
 * come in as text.
 *
 * <p>The rules are the Go library's, and so are the messages: a type defined in two files is {@code
 * duplicate type definition T}, a condition in two files {@code duplicate condition C}; an {@code
 * extend type T} adds its relations to the type {@code T} some file defines ({@code extended type T
 * does not exist} when none does), and a relation the type already has is {@code relation R already
 * exists on type T}; the extensions are applied after every file's types are known, file by file in
 * the order {@code fga.mod} lists them (Go's order is a map's, so its errors come in any order; the
 * model is the same). A file without a {@code module} line is {@code file is not a module} (Go says
 * so only of its types without relations, and takes the others). The provenance Go records ({@code
 * module}, {@code source_info}) is left out: the operator's normalisation drops it from every model
 * anyway ({@link ModelJson}).
 */
public final class ModularModel {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The lines the Java transformer blanks before it parses (and so must this parse). */
  private static final Pattern BLANK = Pattern.compile("^\\s*$|^\\s*#.*$");

  private ModularModel() {}

  /** Why the files do not make a model: every error found, each naming its file. */
  public static final class Invalid extends Exception {
    private final List<String> errors;

    Invalid(List<String> errors) {
      super(String.join("; ", errors));
      this.errors = List.copyOf(errors);
    }

    public List<String> errors() {
      return errors;
    }
  }

  /** An {@code fga.mod}: its schema version and the files it lists, in its order. */
  public record ModFile(String schema, List<String> contents) {}

  /** A module file: its path as {@code fga.mod} lists it, and its text. */
  public record Module(String name, String text) {}

  /**
   * The {@code fga.mod} parsed and checked by the Java library ({@code schema} must be {@code 1.2},
   * every item of {@code contents} a relative path ending in {@code .fga}), and listing at least
   * one file, each once.
   */
  public static ModFile modFile(String text) throws Invalid {
    FgaModFile parsed;
    try {
      parsed = FgaModTransformer.parse(text);
    } catch (ModFileValidationError e) {
      throw new Invalid(e.getErrors().stream().map(ModelJson::located).toList());
    } catch (IOException | RuntimeException e) {
      throw new Invalid(List.of("does not parse: " + firstLine(e.getMessage())));
    }
    List<String> contents =
        parsed.getContents().getValue().stream().map(ModFileStringProperty::getValue).toList();
    if (contents.isEmpty()) {
      throw new Invalid(List.of("contents lists no file"));
    }
    Set<String> seen = new HashSet<>();
    for (String path : contents) {
      if (!seen.add(path)) {
        throw new Invalid(List.of("contents lists " + path + " twice"));
      }
    }
    return new ModFile(parsed.getSchema().getValue(), contents);
  }

  /**
   * The files {@code mod} lists, looked up in {@code data} (a ConfigMap's keys, which cannot hold a
   * {@code /}): a path is under the key that is the path with every {@code /} written {@code .}
   * ({@code core.fga}, {@code issue-tracker.projects.fga}); failing that, under its base name
   * ({@code projects.fga}, as {@code kubectl create configmap --from-file} names it) when no other
   * file listed has that base name. A file under neither is an error naming the path and the keys
   * tried; so are two paths written as the same key.
   */
  public static List<Module> modules(ModFile mod, Map<String, String> data) throws Invalid {
    Map<String, String> byKey = new HashMap<>();
    Map<String, Integer> baseNames = new HashMap<>();
    for (String path : mod.contents()) {
      String other = byKey.putIfAbsent(key(path), path);
      if (other != null) {
        throw new Invalid(
            List.of(other + " and " + path + " are both written as the key " + key(path)));
      }
      baseNames.merge(baseName(path), 1, Integer::sum);
    }
    List<Module> modules = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    for (String path : mod.contents()) {
      String text = data.get(key(path));
      boolean baseNameStands = path.contains("/") && baseNames.get(baseName(path)) == 1;
      if (text == null && baseNameStands) {
        text = data.get(baseName(path));
      }
      if (text != null) {
        modules.add(new Module(path, text));
      } else if (!path.contains("/")) {
        missing.add("no key " + path + " for the file " + path);
      } else {
        missing.add(
            "no key "
                + key(path)
                + (baseNameStands
                    ? " nor " + baseName(path)
                    : " (another file listed is also named " + baseName(path) + ")")
                + " for the file "
                + path);
      }
    }
    if (!missing.isEmpty()) {
      throw new Invalid(missing);
    }
    return modules;
  }

  /** The ConfigMap key a listed path is first looked up under. */
  static String key(String path) {
    return path.replace('/', '.');
  }

  private static String baseName(String path) {
    return path.substring(path.lastIndexOf('/') + 1);
  }

  /**
   * The modules combined into one model JSON of {@code schemaVersion} (the {@code fga.mod}'s
   * schema), as Go's {@code TransformModuleFilesToModel}; every error of every file, or the model.
   */
  public static ObjectNode combine(List<Module> modules, String schemaVersion) throws Invalid {
    List<String> errors = new ArrayList<>();
    Map<String, ObjectNode> types = new LinkedHashMap<>();
    Map<String, JsonNode> conditions = new LinkedHashMap<>();
    List<Extension> extensions = new ArrayList<>();
    for (Module module : modules) {
      Parsed parsed = parse(module, errors);
      if (parsed == null) {
        continue;
      }
      for (TypeDef def : parsed.types()) {
        if (parsed.extended().contains(def.name())) {
          extensions.add(new Extension(module.name(), def));
        } else if (types.containsKey(def.name())) {
          errors.add(at(module, def.at(), "duplicate type definition " + def.name()));
        } else {
          types.put(def.name(), def.json());
        }
      }
      for (var condition : parsed.conditions().entrySet()) {
        if (conditions.containsKey(condition.getKey())) {
          String message = "duplicate condition " + condition.getKey();
          errors.add(at(module, parsed.conditionAt().get(condition.getKey()), message));
        } else {
          conditions.put(condition.getKey(), condition.getValue());
        }
      }
    }
    for (Extension extension : extensions) {
      extend(types, extension, errors);
    }
    if (!errors.isEmpty()) {
      throw new Invalid(errors);
    }
    ObjectNode model = JSON.createObjectNode().put("schema_version", schemaVersion);
    ArrayNode typeDefinitions = model.putArray("type_definitions");
    types.values().forEach(typeDefinitions::add);
    ObjectNode conditionsNode = model.putObject("conditions");
    conditions.forEach(conditionsNode::set);
    return model;
  }

  /** An {@code extend type}'s relations added to the type it extends, as Go adds them. */
  private static void extend(
      Map<String, ObjectNode> types, Extension extension, List<String> errors) {
    TypeDef def = extension.def();
    ObjectNode original = types.get(def.name());
    if (original == null) {
      errors.add(at(extension.file(), def.at(), "extended type " + def.name() + " does not exist"));
      return;
    }
    ObjectNode relations = objectAt(original, "relations");
    ObjectNode metadata = objectAt(objectAt(original, "metadata"), "relations");
    Set<String> existing = new HashSet<>();
    relations.fieldNames().forEachRemaining(existing::add);
    JsonNode newMetadata = def.json().path("metadata").path("relations");
    for (var relation : def.json().path("relations").properties()) {
      String name = relation.getKey();
      if (existing.contains(name)) {
        errors.add(
            at(
                extension.file(),
                def.relationAt().get(name),
                "relation " + name + " already exists on type " + def.name()));
        continue;
      }
      relations.set(name, relation.getValue());
      if (newMetadata.has(name)) {
        metadata.set(name, newMetadata.get(name));
      }
    }
  }

  /** {@code node}'s object field {@code name}, made an empty object when it is none. */
  private static ObjectNode objectAt(ObjectNode node, String name) {
    JsonNode value = node.get(name);
    if (value instanceof ObjectNode object) {
      return object;
    }
    return node.putObject(name);
  }

  private record TypeDef(String name, ObjectNode json, Token at, Map<String, Token> relationAt) {}

  private record Extension(String file, TypeDef def) {}

  private record Parsed(
      List<TypeDef> types,
      Set<String> extended,
      Map<String, JsonNode> conditions,
      Map<String, Token> conditionAt) {}

  /**
   * One module file: its model JSON from the Java transformer, and from its parse tree which type
   * definitions extend (Go, too, takes every definition in the file of a type the file extends as
   * an extension) and where each name is. Null, its errors added, when it does not parse or is no
   * module.
   */
  private static Parsed parse(Module module, List<String> errors) {
    JsonNode json;
    try {
      json = JSON.readTree(new DslToJsonTransformer().transform(module.text()));
    } catch (DslErrorsException e) {
      errors.add(module.name() + " does not parse: " + ModelJson.errors(e, true));
      return null;
    } catch (IOException | RuntimeException e) {
      errors.add(module.name() + " does not parse: " + firstLine(e.getMessage()));
      return null;
    }
    OpenFGAParser.MainContext tree = tree(module.text());
    if (tree.moduleHeader() == null) {
      errors.add(module.name() + ": file is not a module (it has no module line)");
      return null;
    }
    List<OpenFGAParser.TypeDefContext> defs =
        tree.typeDefs() == null ? List.of() : tree.typeDefs().typeDef();
    JsonNode typeJson = json.path("type_definitions");
    if (typeJson.size() != defs.size()) {
      errors.add(module.name() + ": the parser and the transformer disagree on its types");
      return null;
    }
    List<TypeDef> types = new ArrayList<>();
    Set<String> extended = new HashSet<>();
    for (int i = 0; i < defs.size(); i++) {
      OpenFGAParser.TypeDefContext def = defs.get(i);
      String name = def.typeName.getText();
      if (!name.equals(typeJson.get(i).path("type").asText())) {
        errors.add(module.name() + ": the parser and the transformer disagree on type " + name);
        return null;
      }
      if (def.EXTEND() != null) {
        extended.add(name);
      }
      Map<String, Token> relationAt = new HashMap<>();
      for (OpenFGAParser.RelationDeclarationContext relation : def.relationDeclaration()) {
        relationAt.putIfAbsent(relation.relationName().getText(), relation.relationName().start);
      }
      types.add(new TypeDef(name, (ObjectNode) typeJson.get(i), def.typeName.start, relationAt));
    }
    Map<String, Token> conditionAt = new HashMap<>();
    if (tree.conditions() != null) {
      for (OpenFGAParser.ConditionContext condition : tree.conditions().condition()) {
        conditionAt.putIfAbsent(
            condition.conditionName().getText(), condition.conditionName().start);
      }
    }
    Map<String, JsonNode> conditions = new LinkedHashMap<>();
    json.path("conditions").properties().forEach(c -> conditions.put(c.getKey(), c.getValue()));
    return new Parsed(types, extended, conditions, conditionAt);
  }

  /** The parse tree of a text the transformer took, its lines cleaned as the transformer does. */
  private static OpenFGAParser.MainContext tree(String text) {
    String cleaned =
        Arrays.stream(text.split("\n"))
            .map(line -> BLANK.matcher(line).matches() ? "" : line.split(" #")[0].stripTrailing())
            .collect(Collectors.joining("\n"));
    OpenFGALexer lexer = new OpenFGALexer(CharStreams.fromString(cleaned));
    lexer.removeErrorListeners();
    OpenFGAParser parser = new OpenFGAParser(new CommonTokenStream(lexer));
    parser.removeErrorListeners();
    return parser.main();
  }

  private static String at(Module module, Token token, String message) {
    return at(module.name(), token, message);
  }

  /** {@code file line L, column C: message}, counted from 1 as an editor counts. */
  private static String at(String file, Token token, String message) {
    if (token == null) {
      return file + ": " + message;
    }
    return file
        + " line "
        + token.getLine()
        + ", column "
        + (token.getCharPositionInLine() + 1)
        + ": "
        + message;
  }

  private static String firstLine(String message) {
    return message == null ? "" : message.lines().findFirst().orElse("").strip();
  }
}
