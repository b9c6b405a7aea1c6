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

  /**
   * A write failed on the store's tuples: a tuple to write already exists, or one to delete does
   * not (400 {@code write_failed_due_to_invalid_input}; OpenFGA names only the first). Nothing of
   * the write was applied. {@link #refused} is true for it too.
   */
  public boolean duplicateOrMissing() {
    return status == 400 && "write_failed_due_to_invalid_input".equals(code);
  }

  /**
   * A tuple the model does not allow (400 {@code validation_error}: a type, relation or condition
   * it does not define, a user that is no object, a condition missing), named in {@link #detail}.
   * Nothing of the write was applied. {@link #refused} is true for it too.
   */
  public boolean invalidTuple() {
    return status == 400 && "validation_error".equals(code);
  }

  /**
   * More writes and deletes in one request than the server takes (400 {@code
   * exceeded_entity_limit}; 100 by default). {@link #refused} is true for it too.
   */
  public boolean entityLimit() {
    return status == 400 && "exceeded_entity_limit".equals(code);
  }

  /**
   * 409: the write conflicted with the store's tuples, e.g. with {@code on_duplicate: ignore} a
   * tuple that exists with another condition, or a concurrent write. Not {@link #refused}.
   */
  public boolean conflict() {
    return status == 409;
  }

  /** OpenFGA's error code, e.g. {@code store_id_not_found}, or empty. */
  public String code() {
    return code;
  }
}
