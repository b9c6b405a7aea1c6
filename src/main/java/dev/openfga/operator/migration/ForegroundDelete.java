package dev.openfga.operator.migration;

import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The delete of a Job (rule 9): foreground, with UID and resourceVersion preconditions. The Job
 * object (and its name) stays until its pod is gone, so a replacement can never overlap a running
 * migration; and a Job that changed or was replaced since it was observed is not deleted. NotFound
 * is success.
 */
final class ForegroundDelete {
  private ForegroundDelete() {}

  static void of(KubernetesClient client, Job job) {
    DeleteOptions options =
        new DeleteOptionsBuilder()
            .withPropagationPolicy("Foreground")
            .withNewPreconditions()
            .withUid(job.getMetadata().getUid())
            .withResourceVersion(job.getMetadata().getResourceVersion())
            .endPreconditions()
            .build();
    String url =
        client.getMasterUrl().toString().replaceAll("/$", "")
            + "/apis/batch/v1/namespaces/"
            + job.getMetadata().getNamespace()
            + "/jobs/"
            + job.getMetadata().getName();
    HttpRequest request =
        client
            .getHttpClient()
            .newHttpRequestBuilder()
            .uri(url)
            .method("DELETE", "application/json", Serialization.asJson(options))
            .build();
    HttpResponse<String> response;
    try {
      response = client.getHttpClient().sendAsync(request, String.class).get(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KubernetesClientException(
          "interrupted deleting Job " + job.getMetadata().getName(), e);
    } catch (ExecutionException | TimeoutException e) {
      throw new KubernetesClientException(
          "deleting Job " + job.getMetadata().getName() + " failed: " + e.getMessage(), e);
    }
    int code = response.code();
    if (code == 404 || (code >= 200 && code < 300)) {
      return;
    }
    throw new KubernetesClientException(
        "deleting Job "
            + job.getMetadata().getName()
            + " failed: HTTP "
            + code
            + " "
            + response.body(),
        code,
        null);
  }
}
