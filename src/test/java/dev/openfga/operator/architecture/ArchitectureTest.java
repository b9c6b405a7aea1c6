package dev.openfga.operator.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.or;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.simpleNameEndingWith;
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
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
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
   * The pure decisions: the migration rules, and every planner (an observation in, a decision out).
   * They read no clock, reach no API server or OpenFGA server, log nothing and touch no file.
   */
  private static final DescribedPredicate<JavaClass> PURE =
      or(resideInAPackage(BASE + ".migration.rules.."), simpleNameEndingWith("Planner"))
          .as("the pure decisions (migration.rules, the planners)");

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
        .contains("Planner", "Observation", "Plan", "MigrationJob");
    assertThat(MAIN.containPackage(BASE + ".kube")).isTrue();
    assertThat(MAIN.containPackage(BASE + ".migration")).isTrue();
  }

  private static ArchRule layers() {
    return layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .withOptionalLayers(true)
        .layer("Wiring")
        .definedBy(BASE)
        .layer("Status command")
        .definedBy(BASE + ".status..")
        .layer("Migration")
        .definedBy(BASE + ".migration")
        .layer("Stores")
        .definedBy(BASE + ".stores..")
        .layer("Models")
        .definedBy(BASE + ".models..")
        .layer("Stage 2")
        .definedBy(BASE + ".fga..")
        .layer("OpenFGA client")
        .definedBy(BASE + ".openfga..")
        .layer("Migration rules")
        .definedBy(BASE + ".migration.rules..")
        .layer("Config")
        .definedBy(BASE + ".config..")
        .layer("Ops")
        .definedBy(BASE + ".ops..")
        .layer("Kube")
        .definedBy(BASE + ".kube..")
        .whereLayer("Wiring")
        .mayNotBeAccessedByAnyLayer()
        .whereLayer("Status command")
        .mayOnlyBeAccessedByLayers("Wiring")
        .whereLayer("Migration")
        .mayOnlyBeAccessedByLayers("Wiring")
        .whereLayer("Models")
        .mayOnlyBeAccessedByLayers("Wiring")
        .whereLayer("Stores")
        .mayOnlyBeAccessedByLayers("Wiring", "Models")
        .whereLayer("Stage 2")
        .mayOnlyBeAccessedByLayers("Wiring")
        .whereLayer("OpenFGA client")
        .mayOnlyBeAccessedByLayers("Wiring", "Stores", "Models", "Stage 2")
        .whereLayer("Migration rules")
        .mayOnlyBeAccessedByLayers(
            "Wiring", "Status command", "Migration", "Models", "Stage 2", "Config")
        .whereLayer("Config")
        .mayOnlyBeAccessedByLayers(
            "Wiring", "Status command", "Migration", "Stores", "Models", "Stage 2", "Ops")
        .whereLayer("Ops")
        .mayOnlyBeAccessedByLayers(
            "Wiring",
            "Status command",
            "Migration",
            "Stores",
            "Models",
            "Stage 2",
            "OpenFGA client")
        .whereLayer("Kube")
        .mayOnlyBeAccessedByLayers(
            "Wiring",
            "Status command",
            "Migration",
            "Stores",
            "Models",
            "Stage 2",
            "OpenFGA client",
            "Migration rules");
  }
}
