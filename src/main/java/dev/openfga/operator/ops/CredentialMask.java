package dev.openfga.operator.ops;

import java.util.regex.MatchResult;
import java.util.regex.Pattern;

/**
 * The last line of defence of the log (SPEC §10): every line, rendered, has what looks like a
 * credential replaced by {@code ***} before it is written, whoever logged it. Nothing the operator
 * or its libraries log at the levels they may use carries one; this is for the message nobody
 * foresaw (an exception that quotes a request, a library that starts logging headers).
 *
 * <p>Masked, case-insensitively, in text and in JSON lines (where quotes come escaped):
 *
 * <ul>
 *   <li>the value of an {@code Authorization} (or {@code Proxy-Authorization}) header, written as
 *       {@code Authorization: v}, {@code Authorization=[v]} or {@code "Authorization":"v"}, its
 *       scheme included: {@code Authorization: ***};
 *   <li>the token after {@code Bearer}: {@code Bearer ***};
 *   <li>{@code password}, {@code passwd} and {@code client_secret} values ({@code password=***}, as
 *       in a PostgreSQL key/value connection string or a token request's form);
 *   <li>the password of a URI's user information, up to its last {@code @} (a password may hold
 *       one): {@code postgres://user:***@host/db}.
 * </ul>
 *
 * Over-masking is the price: a word after "bearer" in prose is masked too.
 */
final class CredentialMask {

  static final String MASK = "***";

  private static final String QUOTES = "[\"'\\\\]*";

  private static final Pattern CREDENTIAL =
      Pattern.compile(
          String.join(
              "|",
              // 1: Authorization header; an optional scheme, then the credentials
              "(\\bauthorization"
                  + QUOTES
                  + "\\s*[:=]\\s*[\"'\\\\\\[]*)(?:[a-z][a-z0-9_-]*\\s+)?[^\\s\"'\\\\\\],;]+",
              // 2: a bearer token (RFC 6750's token68 characters)
              "(\\bbearer\\s+)[a-z0-9\\-._~+/]+=*",
              // 3: password=, client_secret=
              "(\\b(?:password|passwd|client_secret)"
                  + QUOTES
                  + "\\s*[:=]\\s*"
                  + QUOTES
                  + ")[^\\s\"'\\\\&,;]+",
              // 4: scheme://user:password@ (the password up to the last @ before a blank)
              "(\\b[a-z][a-z0-9+.-]*://[^/\\s:@\"'\\\\]*:)[^\\s\"'\\\\]*@"),
          Pattern.CASE_INSENSITIVE);

  private CredentialMask() {}

  /** {@code line} with every credential it seems to hold replaced by {@link #MASK}. */
  static String mask(String line) {
    return CREDENTIAL.matcher(line).replaceAll(CredentialMask::masked);
  }

  private static String masked(MatchResult match) {
    for (int group = 1; group <= 3; group++) {
      if (match.group(group) != null) {
        return quoted(match.group(group) + MASK);
      }
    }
    return quoted(match.group(4) + MASK + "@");
  }

  /** As a replacement string: {@code $} and {@code \} stand for themselves. */
  private static String quoted(String text) {
    return java.util.regex.Matcher.quoteReplacement(text);
  }
}
