package dev.openfga.operator.openfga;

import java.io.IOException;

/**
 * A call to OpenFGA that failed: its credentials ({@link Credentials.CredentialsException}: the
 * Secret gone or unusable, not for this server, refused by the token endpoint) or the request
 * itself, after {@link FgaApi}'s retries. The message names no secret value and holds of a server's
 * answer only what {@link FgaApi} keeps.
 */
public record CallFailure(boolean credentials, boolean secretGone, String message) {

  /** The failure {@code e} reports. */
  public static CallFailure of(IOException e) {
    if (e instanceof Credentials.CredentialsException c) {
      return new CallFailure(true, c.secretGone(), c.getMessage());
    }
    return new CallFailure(false, false, e.getMessage());
  }
}
