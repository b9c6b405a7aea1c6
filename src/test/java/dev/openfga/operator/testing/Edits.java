package dev.openfga.operator.testing;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.util.function.Consumer;

/**
 * A test's edit of an object the operator also writes. fabric8's {@code edit} sends the
 * resourceVersion it read, so an operator write in between (a status patch, a finalizer) makes the
 * API server answer 409. That is a race with the operator, not the test's answer: read again and
 * apply the same change, as {@code kubectl edit} users do.
 */
public final class Edits {
  private static final int ATTEMPTS = 20;

  private Edits() {}

  /** Applies {@code change} to what {@code resource} is now, again after each 409; the result. */
  public static <T extends HasMetadata> T edit(Resource<T> resource, Consumer<T> change) {
    for (int attempt = 1; ; attempt++) {
      try {
        return resource.edit(
            object -> {
              change.accept(object);
              return object;
            });
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt >= ATTEMPTS) {
          throw e;
        }
      }
    }
  }
}
