package dev.openfga.operator.openfga;

import java.io.IOException;

/** An answer other than success: the HTTP status and OpenFGA's own error code and message. */
public final class ApiException extends IOException {
  private final int status;
  private final String code;
  private final String detail;

  ApiException(int status, String code, String where, String detail) {
    super(where + ": " + detail);
    this.status = status;
    this.code = code;
    this.detail = detail;
  }

  public int status() {
    return status;
  }

  /** What OpenFGA answered, without the request: {@code HTTP 400 validation_error: ...}. */
  public String detail() {
    return detail;
  }

  /**
   * OpenFGA refused the request itself (HTTP 400: an invalid model, a relation the model does not
   * define, a tuple it does not allow): sending it again unchanged gets the same answer. Not 422
   * (OpenFGA's {@code throttled_timeout_error}) and not {@code authorization_model_not_found} (a
   * model just written, not yet on a read replica): those pass.
   */
  public boolean refused() {
    return status == 400 && !"authorization_model_not_found".equals(code);
  }

  /** OpenFGA's error code, e.g. {@code store_id_not_found}, or empty. */
  public String code() {
    return code;
  }
}
