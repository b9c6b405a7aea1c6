package dev.openfga.operator.config;

/** Neither {@code POD_NAMESPACE} nor the service-account namespace file names a namespace. */
public final class MissingNamespaceException extends Exception {

  public MissingNamespaceException(String message) {
    super(message);
  }

  public MissingNamespaceException(String message, Throwable cause) {
    super(message, cause);
  }
}
