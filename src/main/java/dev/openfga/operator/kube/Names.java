package dev.openfga.operator.kube;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Names of the objects the operator makes for a Deployment. A name that would be longer than
 * Kubernetes allows keeps a prefix of the Deployment name, then {@code -} and the first 8 hex
 * characters of the SHA-256 of the Deployment name, then the suffix: deterministic and unique per
 * Deployment.
 */
public final class Names {
  private Names() {}

  /** Job names must fit a label value (the Job controller labels its pods with the name). */
  static final int JOB_NAME_MAX = 63;

  /** ConfigMap names are DNS subdomains. */
  static final int CONFIG_MAP_NAME_MAX = 253;

  /** Event names are DNS subdomains too. */
  static final int EVENT_NAME_MAX = 253;

  public static final String JOB_SUFFIX = "-migrate";
  public static final String STATUS_SUFFIX = "-migration-status";

  public static String job(String deployment) {
    return fit(deployment, JOB_SUFFIX, JOB_NAME_MAX);
  }

  public static final String TUPLES_RECORD_SUFFIX = "-tuples-record";

  /** The ownership record of the FGATuples of that name (a ConfigMap in its namespace). */
  public static String tuplesRecord(String fgaTuples) {
    return fit(fgaTuples, TUPLES_RECORD_SUFFIX, CONFIG_MAP_NAME_MAX);
  }

  public static String statusConfigMap(String deployment) {
    return fit(deployment, STATUS_SUFFIX, CONFIG_MAP_NAME_MAX);
  }

  /**
   * The name of the Event for a transition of the Deployment: the Deployment name (shortened by the
   * same rule), {@code .} and 16 hex characters of the transition's key.
   */
  public static String event(String deployment, String key) {
    return fit(deployment, "." + eventId(key), EVENT_NAME_MAX);
  }

  /**
   * The 16 hex characters that end the name of the Event of a transition ({@link #event}): what the
   * migration's {@code Keys.REPORTED_EVENTS} lists of the Events already sent.
   */
  public static String eventId(String key) {
    return shortHash(key) + shortHash(key + "#");
  }

  static String fit(String base, String suffix, int max) {
    if (base.length() + suffix.length() <= max) {
      return base + suffix;
    }
    String hash = shortHash(base);
    int keep = max - suffix.length() - hash.length() - 1;
    String prefix = base.substring(0, keep).replaceAll("[-.]+$", "");
    return prefix + "-" + hash + suffix;
  }

  /** First 8 hex characters of the SHA-256 of the text. */
  public static String shortHash(String text) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 4);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is always available", e);
    }
  }
}
