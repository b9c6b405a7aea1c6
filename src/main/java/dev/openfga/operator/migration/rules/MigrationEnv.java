package dev.openfga.operator.migration.rules;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The environment of the Job's {@code migrate-database} container (rule 8, ADR 0002): filtered from
 * the selected container's, then the migration Secret's credentials, if one is named.
 */
public final class MigrationEnv {
  private MigrationEnv() {}

  /** Variables {@code openfga migrate} reads besides {@code OPENFGA_DATASTORE_*}. */
  static final Set<String> MIGRATE_ENV =
      Set.of(
          "OPENFGA_TIMEOUT",
          "OPENFGA_VERBOSE",
          "OPENFGA_LOG_FORMAT",
          "OPENFGA_LOG_LEVEL",
          "OPENFGA_LOG_TIMESTAMP_FORMAT");

  static final String DATASTORE_PREFIX = "OPENFGA_DATASTORE_";

  /**
   * {@code $(NAME)} is a reference; {@code $$} is an escaped {@code $}, so {@code $$(NAME)} is not.
   */
  private static final Pattern REFERENCE =
      Pattern.compile("\\$\\$|\\$\\(([A-Za-z_][A-Za-z0-9_.-]*)\\)");

  /** The filtered environment, then the migration Secret's credentials (if one is named). */
  static List<EnvVar> of(List<EnvVar> env, DeploymentSettings settings) {
    List<EnvVar> kept = new ArrayList<>(filterEnv(env));
    settings.migrationSecret().ifPresent(secret -> kept.addAll(migrationCredentials(secret)));
    return kept;
  }

  /**
   * Keeps {@code OPENFGA_DATASTORE_*}, the variables {@code openfga migrate} reads, and every
   * variable a kept value references as {@code $(NAME)}, in their original order.
   */
  public static List<EnvVar> filterEnv(List<EnvVar> env) {
    Set<String> keep = new LinkedHashSet<>();
    for (EnvVar var : env) {
      if (var.getName().startsWith(DATASTORE_PREFIX) || MIGRATE_ENV.contains(var.getName())) {
        keep.add(var.getName());
      }
    }
    boolean grew = true;
    while (grew) {
      grew = false;
      for (EnvVar var : env) {
        if (keep.contains(var.getName()) && var.getValue() != null) {
          Matcher m = REFERENCE.matcher(var.getValue());
          while (m.find()) {
            if (m.group(1) != null) {
              grew |= keep.add(m.group(1));
            }
          }
        }
      }
    }
    List<EnvVar> kept = new ArrayList<>();
    for (EnvVar var : env) {
      if (keep.contains(var.getName())) {
        kept.add(new EnvVarBuilder(var).build());
      }
    }
    return kept;
  }

  /**
   * {@code OPENFGA_DATASTORE_URI}, {@code _USERNAME} and {@code _PASSWORD} from the migration
   * Secret's keys, each optional, after the Deployment's own: a key the Secret has wins (the last
   * definition of a name wins in a pod), a key it lacks leaves the Deployment's value. The Secret
   * itself is never read.
   */
  static List<EnvVar> migrationCredentials(String secret) {
    return List.of(
        secretVar(Keys.URI_ENV, secret, Keys.SECRET_KEY_URI),
        secretVar(Keys.USERNAME_ENV, secret, Keys.SECRET_KEY_USERNAME),
        secretVar(Keys.PASSWORD_ENV, secret, Keys.SECRET_KEY_PASSWORD));
  }

  private static EnvVar secretVar(String name, String secret, String key) {
    return new EnvVarBuilder()
        .withName(name)
        .withNewValueFrom()
        .withNewSecretKeyRef()
        .withName(secret)
        .withKey(key)
        .withOptional(true)
        .endSecretKeyRef()
        .endValueFrom()
        .build();
  }
}
