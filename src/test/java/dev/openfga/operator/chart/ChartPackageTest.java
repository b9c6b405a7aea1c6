package dev.openfga.operator.chart;

import static dev.openfga.operator.chart.OperatorChart.chart;
import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code helm package}, as the release workflow runs it before {@code helm push}: one archive named
 * as Helm names it, with every file the chart needs, that renders as the chart directory does.
 */
class ChartPackageTest {
  private static final String ROOT = "openfga-operator/";

  @Test
  void packagesTheChartWithItsSchemaTemplatesAndCrds(@TempDir Path dir) throws IOException {
    Map<String, Object> chartYaml =
        OperatorChart.YAML.readValue(
            OperatorChart.DIR.resolve("Chart.yaml").toFile(), OperatorChart.MAP);
    String archive = "openfga-operator-" + chartYaml.get("version") + ".tgz";

    new Helm(OperatorChart.DIR).packageIt().withDestination(dir).call();

    try (var files = Files.list(dir)) {
      assertThat(files.map(f -> f.getFileName().toString())).containsExactly(archive);
    }
    Map<String, byte[]> entries = untar(dir.resolve(archive));
    assertThat(entries)
        .containsKeys(
            ROOT + "Chart.yaml",
            ROOT + "values.yaml",
            ROOT + "README.md",
            ROOT + "templates/NOTES.txt",
            ROOT + "templates/crd-fgastores.yaml",
            ROOT + "templates/crd-fgamodels.yaml",
            ROOT + "templates/crd-fgatuples.yaml");
    for (String file : new String[] {"values.yaml", "values.schema.json"}) {
      assertThat(entries.get(ROOT + file))
          .as(file)
          .isEqualTo(Files.readAllBytes(OperatorChart.DIR.resolve(file)));
    }
    try (var templates = Files.list(OperatorChart.DIR.resolve("templates"))) {
      for (Path template : templates.toList()) {
        assertThat(entries.get(ROOT + "templates/" + template.getFileName()))
            .as("%s", template)
            .isEqualTo(Files.readAllBytes(template));
      }
    }
    // Helm writes Chart.yaml anew from what it read
    assertThat(OperatorChart.YAML.readValue(entries.get(ROOT + "Chart.yaml"), OperatorChart.MAP))
        .isEqualTo(chartYaml);

    // what a user of the published chart gets
    var packaged = chart().at(dir.resolve(archive)).render();
    assertThat(packaged.operator().getImage()).isEqualTo(chart().render().operator().getImage());
    assertThat(
            chart()
                .at(dir.resolve(archive))
                .values(
                    "storesAndModels:\n  enabled: true\n  servers: [http://openfga.openfga.svc:8080]\n")
                .render()
                .yaml())
        .contains(
            "name: fgastores.openfga.dev",
            "name: fgamodels.openfga.dev",
            "name: fgatuples.openfga.dev");
  }

  /** The regular files of a gzipped tar (ustar), by path; directories and PAX headers skipped. */
  private static Map<String, byte[]> untar(Path tgz) throws IOException {
    Map<String, byte[]> entries = new LinkedHashMap<>();
    try (var in = new DataInputStream(new GZIPInputStream(Files.newInputStream(tgz)))) {
      byte[] header = new byte[512];
      while (true) {
        in.readFully(header);
        if (isZero(header)) {
          return entries;
        }
        String name = field(header, 0, 100);
        String prefix = field(header, 345, 155);
        int size = Integer.parseInt(field(header, 124, 12).strip(), 8);
        byte type = header[156];
        byte[] data = new byte[size];
        in.readFully(data);
        in.skipNBytes((512 - size % 512) % 512);
        if (type == '0' || type == 0) {
          entries.put(prefix.isEmpty() ? name : prefix + "/" + name, data);
        }
      }
    }
  }

  private static String field(byte[] header, int offset, int length) {
    int end = offset;
    while (end < offset + length && header[end] != 0) {
      end++;
    }
    return new String(header, offset, end - offset, StandardCharsets.UTF_8);
  }

  private static boolean isZero(byte[] block) {
    for (byte b : block) {
      if (b != 0) {
        return false;
      }
    }
    return true;
  }
}
