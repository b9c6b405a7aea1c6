package dev.openfga.operator.chart;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

/**
 * What the release workflow ({@code .github/workflows/release.yml}) publishes for the canonical
 * repository (the pom's {@code release.owner}) is what the chart installs by default, what its
 * Artifact Hub annotations announce and what the docs tell people to install.
 */
class ReleaseTest {
  private static final Path WORKFLOW = Path.of(".github", "workflows", "release.yml");

  /** How the workflow names the registry namespace: the repository's owner, lower-cased. */
  private static final String OWNER = "${GITHUB_REPOSITORY_OWNER,,}";

  private static final TypeReference<List<Map<String, Object>>> LIST = new TypeReference<>() {};

  @Test
  void theChartsDefaultImageIsTheOneTheWorkflowPublishesForTheCanonicalOwner() throws Exception {
    String image = published("image");

    assertThat(values().get("image")).extracting("repository").isEqualTo(image);
    assertThat(chart().render().operator().getImage())
        .isEqualTo(image + ":" + chartYaml().get("appVersion"));
  }

  @Test
  void theCanonicalOwnerIsALowerCaseGitHubOwnerNamedByTheChart() throws Exception {
    String owner = pom("/project/properties/release.owner");
    String repository = "https://github.com/" + owner + "/openfga-operator";

    assertThat(owner).matches("[a-z0-9]([a-z0-9-]*[a-z0-9])?");
    assertThat(chartYaml().get("home")).isEqualTo(repository);
    assertThat(chartYaml().get("sources")).isEqualTo(List.of(repository));
  }

  @Test
  void theTagsVersionIsThePomsTheChartsAndTheAppsWithAChangelogSection() throws Exception {
    String version = pom("/project/version");

    assertThat(chartYaml().get("version")).isEqualTo(version);
    assertThat(chartYaml().get("appVersion")).isEqualTo(version);
    assertThat(Files.readString(Path.of("CHANGELOG.md"))).contains("\n## [" + version + "] - ");
  }

  @Test
  void artifactHubImagesIsTheDefaultImage() throws Exception {
    List<Map<String, Object>> images = annotation("artifacthub.io/images");

    assertThat(images)
        .containsExactly(
            Map.of("name", "openfga-operator", "image", chart().render().operator().getImage()));
  }

  @Test
  void artifactHubCrdsAreTheChartsCrds() throws Exception {
    var crds =
        chart()
            .values(
                "storesAndModels:\n  enabled: true\n  servers: [http://openfga.openfga.svc:8080]\n")
            .render()
            .all(CustomResourceDefinition.class);

    assertThat(annotation("artifacthub.io/crds"))
        .extracting(c -> c.get("kind") + " " + c.get("name") + " " + c.get("version"))
        .containsExactlyInAnyOrderElementsOf(
            crds.stream()
                .map(
                    c ->
                        c.getSpec().getNames().getKind()
                            + " "
                            + c.getMetadata().getName()
                            + " "
                            + c.getSpec().getVersions().get(0).getName())
                .toList())
        .hasSize(3);
    assertThat(annotation("artifacthub.io/crds"))
        .allSatisfy(c -> assertThat(c.get("description")).asString().isNotBlank());
  }

  @Test
  void artifactHubChangesUseItsKinds() throws Exception {
    assertThat(annotation("artifacthub.io/changes"))
        .isNotEmpty()
        .allSatisfy(
            c -> {
              assertThat(c.get("kind"))
                  .isIn("added", "changed", "deprecated", "removed", "fixed", "security");
              assertThat(c.get("description")).asString().isNotBlank();
            });
  }

  @Test
  void theDocsInstallThePublishedChart() throws Exception {
    String install =
        "helm install openfga-operator "
            + published("charts")
            + "/openfga-operator --version "
            + chartYaml().get("version");

    assertThat(Files.readString(Path.of("docs", "image.md"))).contains(install);
    assertThat(Files.readString(Path.of("docs", "integration.md"))).contains(install);
    assertThat(Files.readString(OperatorChart.DIR.resolve("README.md"))).contains(install);
  }

  /**
   * A name the workflow's step {@code meta} sets ({@code name="..."}), with the canonical owner in
   * place of the repository's owner.
   */
  static String published(String name) throws Exception {
    Map<String, Object> workflow =
        OperatorChart.YAML.readValue(WORKFLOW.toFile(), OperatorChart.MAP);
    @SuppressWarnings("unchecked")
    var steps =
        (List<Map<String, Object>>)
            ((Map<String, Map<String, Object>>) workflow.get("jobs")).get("publish").get("steps");
    String run =
        steps.stream()
            .filter(s -> "meta".equals(s.get("id")))
            .map(s -> (String) s.get("run"))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no step meta in " + WORKFLOW));
    Matcher line = Pattern.compile("(?m)^\\s*" + name + "=\"([^\"]+)\"\\s*$").matcher(run);
    assertThat(line.find()).as("%s=\"...\" in the step meta of %s", name, WORKFLOW).isTrue();
    String template = line.group(1);
    assertThat(template).as("derived from the repository's owner").contains(OWNER);
    String owner = pom("/project/properties/release.owner");
    return template.replace(OWNER, owner.toLowerCase(Locale.ROOT));
  }

  private static String pom(String xpath) throws Exception {
    Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse("pom.xml");
    String value = XPathFactory.newInstance().newXPath().evaluate(xpath, pom).strip();
    assertThat(value).as("%s in pom.xml", xpath).isNotEmpty();
    return value;
  }

  private static Map<String, Object> chartYaml() throws IOException {
    return OperatorChart.YAML.readValue(
        OperatorChart.DIR.resolve("Chart.yaml").toFile(), OperatorChart.MAP);
  }

  private static Map<String, Object> values() throws IOException {
    return OperatorChart.YAML.readValue(
        OperatorChart.DIR.resolve("values.yaml").toFile(), OperatorChart.MAP);
  }

  /** An annotation of Chart.yaml that holds a YAML list (Artifact Hub's form). */
  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> annotation(String name) throws IOException {
    var annotations = (Map<String, String>) chartYaml().get("annotations");
    assertThat(annotations).containsKey(name);
    return OperatorChart.YAML.readValue(annotations.get(name), LIST);
  }
}
