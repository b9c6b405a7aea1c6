package dev.openfga.operator.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.or;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.simpleNameEndingWith;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The rooms and the arrows between them, checked on the compiled classes (docs/design.md, "The
 * rooms"). Every room stands on the ones below it; nothing below reaches up; the decisions are pure
 * (parsing a URI is pure; opening one is not).
 */
class ArchitectureTest {
  private static final String BASE = "dev.openfga.operator";

  private static final JavaClasses MAIN =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages(BASE);

  /**
   * The pure decisions: the migration rules, every planner (an observation in, a decision out), and
   * the rules and values the store and model planners decide with (their observations, plans, calls
   * and answers). They read no clock, reach no API server or OpenFGA server, log nothing and touch
   * no file.
   */
  private static final DescribedPredicate<JavaClass> PURE =
      or(
              resideInAPackage(BASE + ".migration.rules.."),
              simpleNameEndingWith("Planner"),
              nameMatching(
                  "\\Q"
                      + BASE
                      + "\\E\\.(stores\\.(ClaimRule|StoreDeletion|MigrationGate|StoreChoice|StoreReadiness"
                      + "|StoreObservation|StorePlan|StoreStep|StoreAnswer)"
                      + "|models\\.(ModelChoice|TestsGate|ModelPublication|ModelDraft"
                      + "|ModelObservation|ModelPlan|ModelStep|ModelAnswer)"
                      + "|tuples\\.(TupleRules|Ledger|TuplesDraft|TuplesWrites|TuplesDeletion"
                      + "|TuplesObservation|TuplesPlan|TuplesStep|TuplesAnswer))(\\$.*)?"))
          .as(
              "the pure decisions (migration.rules, the planners, the store, model and tuple rules)");

  /** The classes that make the calls a plan asks for, or hold what they share between calls. */
  private static final DescribedPredicate<JavaClass> CALLERS =
      DescribedPredicate.describe(
          "make the calls a plan asks for",
          c ->
              c.getName()
                      .matches(
                          "\\Q"
                              + BASE
                              + "\\E\\.(stores\\.(StoreCalls|StoreReconciler|Claims)"
                              + "|models\\.(ModelCalls|ModelReconciler|Publication|AssertionRunner"
                              + "|TestRuns)|tuples\\.(TuplesCalls|TuplesReconciler|OwnershipRecord"
                              + "|StoreReads)|openfga\\.(FgaApi|TupleApi|Connector|Credentials)"
                              + "|kube\\.(StatusWrites|EventRecorder|OperatorClient))(\\$.*)?")
                  // a confirmed claim is a value the observation holds
                  && !c.getName().endsWith("$Entry"));

  @Test
  void theDecisionsArePure() {
    ArchRule rule =
        noClasses()
            .that(PURE)
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage(
                "io.fabric8.kubernetes.client..",
                "io.javaoperatorsdk..",
                "io.micrometer..",
                "org.slf4j..",
                "java.net.http..",
                "java.nio.file..",
                "java.io..",
                "java.util.concurrent..")
            .orShould()
            .dependOnClassesThat()
            .belongToAnyOf(
                java.time.Clock.class,
                Thread.class,
                System.class,
                java.net.URL.class,
                java.net.URLConnection.class,
                java.net.Socket.class,
                java.net.InetAddress.class)
            .orShould()
            .dependOnClassesThat(CALLERS)
            .orShould()
            .callMethod(Instant.class, "now")
            .orShould()
            .callMethod(OffsetDateTime.class, "now")
            .orShould()
            .callMethod(LocalDateTime.class, "now")
            .orShould()
            .callMethod(ZonedDateTime.class, "now")
            .because("a decision is a function of what was observed and the time it was given");
    rule.check(MAIN);
  }

  @Test
  void everyRoomStandsOnTheOnesBelow() {
    layers().check(MAIN);
  }

  @Test
  void theRoomsHaveNoCycle() {
    slices().matching(BASE + ".(*)..").should().beFreeOfCycles().check(MAIN);
  }

  @Test
  void theRulesSeeTheCode() {
    // a rule that finds no classes would pass forever
    assertThat(MAIN.stream().filter(PURE::test).map(JavaClass::getSimpleName))
        .contains(
            "Planner",
            "Observation",
            "Plan",
            "MigrationJob",
            "StorePlanner",
            "ClaimRule",
            "StoreObservation",
            "StoreAnswer",
            "ModelPlanner",
            "TestsGate",
            "ModelObservation",
            "ModelAnswer",
            "TuplesPlanner",
            "TupleRules",
            "Ledger",
            "TuplesObservation");
    assertThat(MAIN.stream().filter(CALLERS::test).map(JavaClass::getSimpleName))
        .contains(
            "StoreCalls", "ModelCalls", "Publication", "FgaApi", "StatusWrites", "TuplesCalls");
    for (String room : List.of("kube", "migration", "openfga", "stores", "models", "tuples")) {
      assertThat(MAIN.containPackage(BASE + "." + room)).as(room).isTrue();
    }
  }

  /** A room: its name and the package(s) it is, in ArchUnit's syntax ({@code ..}: and below). */
  private record Room(String name, String packages) {
    /** Whether the package {@code name} is in this room. */
    boolean holds(String name) {
      String base = packages.replace("..", "");
      return name.equals(base) || packages.endsWith("..") && name.startsWith(base + ".");
    }
  }

  /** The rooms, most specific first (a class is in the first room that holds it). */
  private static final List<Room> ROOMS =
      List.of(
          new Room("Wiring", BASE),
          new Room("Status command", BASE + ".status.."),
          new Room("Migration rules", BASE + ".migration.rules.."),
          new Room("Migration", BASE + ".migration"),
          new Room("Tuples", BASE + ".tuples.."),
          new Room("Stores", BASE + ".stores.."),
          new Room("Models", BASE + ".models.."),
          new Room("OpenFGA client", BASE + ".openfga.."),
          new Room("Config", BASE + ".config.."),
          new Room("Ops", BASE + ".ops.."),
          new Room("Kube", BASE + ".kube.."));

  /**
   * Who may use each room (docs/architecture.md). The stores' migration gate reads the migration's
   * record as the rules do; the models' ConfigMap and the tuples' record carry the operator's
   * managed-by label; an FGATuples names an FGAStore and an FGAModel.
   */
  private static final Map<String, List<String>> USED_BY =
      Map.ofEntries(
          Map.entry("Wiring", List.of()),
          Map.entry("Status command", List.of("Wiring")),
          Map.entry("Migration", List.of("Wiring")),
          Map.entry("Tuples", List.of("Wiring")),
          Map.entry("Models", List.of("Wiring", "Tuples")),
          Map.entry("Stores", List.of("Wiring", "Models", "Tuples")),
          Map.entry("OpenFGA client", List.of("Wiring", "Stores", "Models", "Tuples")),
          Map.entry(
              "Migration rules",
              List.of(
                  "Wiring", "Status command", "Migration", "Stores", "Models", "Tuples", "Config")),
          Map.entry(
              "Config",
              List.of(
                  "Wiring", "Status command", "Migration", "Stores", "Models", "Tuples", "Ops")),
          Map.entry(
              "Ops",
              List.of(
                  "Wiring",
                  "Status command",
                  "Migration",
                  "Stores",
                  "Models",
                  "Tuples",
                  "OpenFGA client")),
          Map.entry(
              "Kube",
              List.of(
                  "Wiring",
                  "Status command",
                  "Migration",
                  "Stores",
                  "Models",
                  "Tuples",
                  "OpenFGA client",
                  "Migration rules")));

  private static final Pattern OURS =
      Pattern.compile("\\b(dev\\.openfga\\.operator(?:\\.[a-z]+)*)\\.[A-Z]\\w*");

  /**
   * The same rooms on the source: every name of ours a main file imports or spells out. The class
   * files miss a constant from another class (the compiler copies its value), the source does not.
   */
  @Test
  void noSourceFileNamesARoomAboveIt() throws IOException {
    Path main = Path.of("src/main/java");
    List<String> violations = new ArrayList<>();
    List<Path> files;
    try (Stream<Path> walk = Files.walk(main)) {
      files = walk.filter(f -> f.toString().endsWith(".java")).toList();
    }
    for (Path file : files) {
      String from = main.relativize(file.getParent()).toString().replace('/', '.');
      Room own = room(from);
      Matcher m = OURS.matcher(Files.readString(file));
      while (m.find()) {
        Room used = room(m.group(1));
        if (used != own && !USED_BY.get(used.name()).contains(own.name())) {
          violations.add(main.relativize(file) + " (" + own.name() + ") names " + m.group());
        }
      }
    }
    assertThat(files).hasSizeGreaterThan(50);
    assertThat(violations).as("names of a room that may not be used from there").isEmpty();
  }

  private static Room room(String packageName) {
    return ROOMS.stream()
        .filter(r -> r.holds(packageName))
        .findFirst()
        .orElseThrow(() -> new AssertionError("in no room: " + packageName));
  }

  private static ArchRule layers() {
    LayeredArchitecture architecture =
        layeredArchitecture().consideringOnlyDependenciesInLayers().withOptionalLayers(true);
    for (Room room : ROOMS) {
      architecture = architecture.layer(room.name()).definedBy(room.packages());
    }
    for (Room room : ROOMS) {
      List<String> users = USED_BY.get(room.name());
      architecture =
          users.isEmpty()
              ? architecture.whereLayer(room.name()).mayNotBeAccessedByAnyLayer()
              : architecture
                  .whereLayer(room.name())
                  .mayOnlyBeAccessedByLayers(users.toArray(String[]::new));
    }
    return architecture;
  }
}
