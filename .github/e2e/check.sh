#!/usr/bin/env bash
# Checks, in namespace $NS, that the operator migrated the `openfga` Deployment to version $1: the
# status ConfigMap records it, the operator's Job for it completed (as the migration
# ServiceAccount), and the Deployment rolled out that version with no MigrationFailed condition.
# Used by .github/workflows/e2e-kind.yml.
set -euo pipefail
want=$1
fail() { echo "e2e: $*" >&2; exit 1; }
get() { kubectl -n "$NS" get "$1" -o jsonpath="$2"; }

echo "waiting for configmap/openfga-migration-status to record $want"
got=""
for _ in $(seq 1 90); do
  got=$(get configmap/openfga-migration-status '{.data.version}' 2>/dev/null || true)
  [ "$got" = "$want" ] && break
  sleep 2
done
[ "$got" = "$want" ] || fail "the status ConfigMap records '$got', expected $want"

# the Job that recorded it (kept for ttlSecondsAfterFinished, 300 s by default)
job=$(get configmap/openfga-migration-status '{.data.jobName}')
[ "$(get "job/$job" '{.metadata.labels.app\.kubernetes\.io/managed-by}')" = openfga-operator ] \
  || fail "job/$job is not the operator's"
[ "$(get "job/$job" '{.metadata.annotations.openfga\.dev/desired-version}')" = "$want" ] \
  || fail "job/$job is not for $want"
[ "$(get "job/$job" '{.spec.template.spec.serviceAccountName}')" = openfga-migration ] \
  || fail "job/$job does not run as the migration ServiceAccount"
kubectl -n "$NS" wait --for=condition=Complete "job/$job" --timeout=30s

kubectl -n "$NS" rollout status deployment/openfga --timeout=180s
[ "$(get deployment/openfga '{.spec.template.spec.containers[0].image}')" = "openfga/openfga:$want" ] \
  || fail "the Deployment does not run openfga/openfga:$want"
[ "$(get deployment/openfga '{.status.readyReplicas}')" = "$(get deployment/openfga '{.spec.replicas}')" ] \
  || fail "not every replica is ready"
[ "$(get deployment/openfga '{.status.conditions[?(@.type=="MigrationFailed")].status}')" != True ] \
  || fail "MigrationFailed=True on the Deployment"
echo "e2e: migrated to $want (status ConfigMap, job/$job, rollout)"
