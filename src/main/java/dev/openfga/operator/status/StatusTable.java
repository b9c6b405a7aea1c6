package dev.openfga.operator.status;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.openfga.operator.kube.Timestamps;
import dev.openfga.operator.status.StatusRow.EventInfo;
import dev.openfga.operator.status.StatusRow.JobInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Renders status rows: a table like {@code kubectl get}, or JSON for scripts. */
public final class StatusTable {
  private StatusTable() {}

  /** Shown for an empty cell, as kubectl does. */
  static final String NONE = "<none>";

  /** The longest event message shown in the table; JSON has it in full. */
  static final int EVENT_MESSAGE_MAX = 60;

  private static final String GAP = "   ";

  /**
   * The table: a header, then one line per row; columns padded to their widest cell, three spaces
   * apart. The NAMESPACE column only when {@code withNamespace} (all namespaces).
   */
  public static String table(List<StatusRow> rows, boolean withNamespace) {
    List<List<String>> lines = new ArrayList<>();
    List<String> header = new ArrayList<>();
    if (withNamespace) {
      header.add("NAMESPACE");
    }
    header.addAll(List.of("DEPLOYMENT", "DESIRED", "MIGRATED", "STATE", "JOB", "LAST EVENT"));
    lines.add(header);
    for (StatusRow row : rows) {
      List<String> cells = new ArrayList<>();
      if (withNamespace) {
        cells.add(row.namespace());
      }
      cells.add(row.deployment());
      cells.add(row.desiredVersion().orElse(NONE));
      cells.add(row.migratedVersion().orElse(NONE));
      cells.add(row.stateText());
      cells.add(row.job().map(StatusTable::jobCell).orElse(NONE));
      cells.add(row.lastEvent().map(StatusTable::eventCell).orElse(NONE));
      lines.add(cells);
    }
    int columns = header.size();
    int[] widths = new int[columns];
    for (List<String> line : lines) {
      for (int i = 0; i < columns; i++) {
        widths[i] = Math.max(widths[i], line.get(i).length());
      }
    }
    StringBuilder out = new StringBuilder();
    for (List<String> line : lines) {
      StringBuilder text = new StringBuilder();
      for (int i = 0; i < columns; i++) {
        String cell = line.get(i);
        text.append(cell);
        if (i < columns - 1) {
          text.append(" ".repeat(widths[i] - cell.length())).append(GAP);
        }
      }
      out.append(text.toString().stripTrailing()).append('\n');
    }
    return out.toString();
  }

  /**
   * {@code openfga-migrate (failed)}; a Job the operator does not own is marked {@code foreign}.
   */
  static String jobCell(JobInfo job) {
    return job.name() + " (" + (job.managed() ? job.status() : "foreign, " + job.status()) + ")";
  }

  /** {@code MigrationFailed 42s ago: Migration Job ... (cut)}. */
  static String eventCell(EventInfo event) {
    String message = oneLine(event.message());
    if (message.length() > EVENT_MESSAGE_MAX) {
      message = message.substring(0, EVENT_MESSAGE_MAX - 3).stripTrailing() + "...";
    }
    String age = event.age().map(a -> " " + StatusView.human(a) + " ago").orElse("");
    return event.reason() + age + (message.isEmpty() ? "" : ": " + message);
  }

  private static String oneLine(String text) {
    return text.replaceAll("\\s+", " ").strip();
  }

  /**
   * A JSON array with one object per row. Field names are stable; a value that is not known is
   * {@code null}, never left out:
   *
   * <pre>
   * namespace, deployment, desiredVersion, migratedVersion,
   * state        (UP_TO_DATE, MIGRATING, FAILED, COOLDOWN, WAITING, DOWNGRADED, BLOCKED, SKIPPED:
   *              the planner's state),
   * stateText    (as in the table), summary (the planner's, in full),
   * retryAt      (RFC 3339), retryInSeconds,
   * job          {name, status, version, managed},
   * lastEvent    {type, reason, message (in full), time (RFC 3339), ageSeconds}
   * </pre>
   */
  public static String json(List<StatusRow> rows) {
    List<Map<String, Object>> array = new ArrayList<>();
    for (StatusRow row : rows) {
      Map<String, Object> o = new LinkedHashMap<>();
      o.put("namespace", row.namespace());
      o.put("deployment", row.deployment());
      o.put("desiredVersion", row.desiredVersion().orElse(null));
      o.put("migratedVersion", row.migratedVersion().orElse(null));
      o.put("state", row.state().name());
      o.put("stateText", row.stateText());
      o.put("summary", row.summary());
      o.put("retryAt", time(row.retryAt()));
      o.put("retryInSeconds", seconds(row.retryIn()));
      o.put("job", row.job().map(StatusTable::jobJson).orElse(null));
      o.put("lastEvent", row.lastEvent().map(StatusTable::eventJson).orElse(null));
      array.add(o);
    }
    DefaultPrettyPrinter printer =
        new DefaultPrettyPrinter(
                Separators.createDefaultInstance()
                    .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
                    .withArrayEmptySeparator("")
                    .withObjectEmptySeparator(""))
            .withArrayIndenter(DefaultIndenter.SYSTEM_LINEFEED_INSTANCE);
    try {
      return new ObjectMapper().writer(printer).writeValueAsString(array) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("maps of strings and numbers always serialize", e);
    }
  }

  private static Map<String, Object> jobJson(JobInfo job) {
    Map<String, Object> o = new LinkedHashMap<>();
    o.put("name", job.name());
    o.put("status", job.status());
    o.put("version", job.version().orElse(null));
    o.put("managed", job.managed());
    return o;
  }

  private static Map<String, Object> eventJson(EventInfo event) {
    Map<String, Object> o = new LinkedHashMap<>();
    o.put("type", event.type());
    o.put("reason", event.reason());
    o.put("message", event.message());
    o.put("time", time(event.time()));
    o.put("ageSeconds", seconds(event.age()));
    return o;
  }

  private static String time(Optional<Instant> instant) {
    return instant.map(Timestamps::format).orElse(null);
  }

  private static Long seconds(Optional<Duration> duration) {
    return duration.map(Duration::getSeconds).orElse(null);
  }
}
