package dev.openfga.operator.migration.rules;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The OpenFGA version a container image stands for: its digest when pinned by digest ({@code
 * repo:tag@sha256:...} gives the digest), else its tag, else {@code latest}. A registry port
 * ({@code host:5000/repo}) is not a tag.
 */
public final class ImageVersion {
  private ImageVersion() {}

  private static final Pattern TAG = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
  private static final Pattern DIGEST =
      Pattern.compile("[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[A-Za-z0-9=_-]+");
  private static final Pattern REPOSITORY =
      Pattern.compile(
          "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*");

  /** The version, or empty when the reference cannot be parsed (blank, bad tag or digest). */
  public static Optional<String> of(String image) {
    if (image == null || image.isBlank() || !image.equals(image.strip())) {
      return Optional.empty();
    }
    String reference = image;
    String digest = null;
    int at = image.lastIndexOf('@');
    if (at >= 0) {
      digest = image.substring(at + 1);
      reference = image.substring(0, at);
      if (!DIGEST.matcher(digest).matches()) {
        return Optional.empty();
      }
    }
    int slash = reference.lastIndexOf('/');
    String lastSegment = reference.substring(slash + 1);
    int colon = lastSegment.lastIndexOf(':');
    String tag = colon >= 0 ? lastSegment.substring(colon + 1) : null;
    String path = colon >= 0 ? reference.substring(0, slash + 1 + colon) : reference;
    if (tag != null && !TAG.matcher(tag).matches()) {
      return Optional.empty();
    }
    if (!validPath(path)) {
      return Optional.empty();
    }
    if (digest != null) {
      return Optional.of(digest);
    }
    return Optional.of(tag != null ? tag : "latest");
  }

  /** Accepts {@code [registry[:port]/]repository}; the registry part is checked loosely. */
  private static boolean validPath(String path) {
    if (path.isEmpty()) {
      return false;
    }
    int slash = path.indexOf('/');
    if (slash > 0) {
      String first = path.substring(0, slash);
      if (first.contains(".") || first.contains(":") || first.equals("localhost")) {
        return first.matches("[A-Za-z0-9.-]+(:[0-9]+)?")
            && REPOSITORY.matcher(path.substring(slash + 1)).matches();
      }
    }
    return REPOSITORY.matcher(path).matches();
  }

  private static final Pattern SEMVER =
      Pattern.compile(
          "v?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)"
              + "(?:-([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?(?:\\+[0-9A-Za-z.-]+)?");

  /**
   * Orders two versions when both are semantic versions ({@code v1.8.16}, {@code 1.10.0-rc.1}; the
   * build part is ignored, a pre-release comes before its release): negative when {@code a} is
   * older. Empty when either is not one (a digest, {@code latest}).
   */
  /**
   * Whether a database migrated to {@code recorded} serves {@code desired}: the same version, or a
   * rollback to an older semantic version, for which nothing runs (SPEC section 9).
   */
  public static boolean migratedFor(String desired, Optional<String> recorded) {
    return recorded
        .filter(r -> r.equals(desired) || compare(desired, r).map(c -> c < 0).orElse(false))
        .isPresent();
  }

  public static Optional<Integer> compare(String a, String b) {
    var ma = SEMVER.matcher(a);
    var mb = SEMVER.matcher(b);
    if (!ma.matches() || !mb.matches()) {
      return Optional.empty();
    }
    for (int group = 1; group <= 3; group++) {
      int c =
          new java.math.BigInteger(ma.group(group))
              .compareTo(new java.math.BigInteger(mb.group(group)));
      if (c != 0) {
        return Optional.of(c);
      }
    }
    return Optional.of(comparePreRelease(ma.group(4), mb.group(4)));
  }

  private static int comparePreRelease(String a, String b) {
    if (a == null || b == null) {
      return a == null ? (b == null ? 0 : 1) : -1;
    }
    String[] pa = a.split("\\.");
    String[] pb = b.split("\\.");
    for (int i = 0; i < Math.min(pa.length, pb.length); i++) {
      boolean na = pa[i].matches("[0-9]+");
      boolean nb = pb[i].matches("[0-9]+");
      int c;
      if (na && nb) {
        c = new java.math.BigInteger(pa[i]).compareTo(new java.math.BigInteger(pb[i]));
      } else if (na || nb) {
        c = na ? -1 : 1;
      } else {
        c = pa[i].compareTo(pb[i]);
      }
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(pa.length, pb.length);
  }

  /**
   * The version as a label value: {@code :} becomes {@code _}, cut to 63 characters, and trimmed so
   * that it starts and ends with a letter or digit. The full version goes in an annotation.
   */
  public static String labelValue(String version) {
    String value = version.replace(':', '_');
    if (value.length() > 63) {
      value = value.substring(0, 63);
    }
    value = value.replaceAll("[^A-Za-z0-9_.-]", "_");
    value = value.replaceAll("^[^A-Za-z0-9]+", "").replaceAll("[^A-Za-z0-9]+$", "");
    return value;
  }
}
