-- Argo CD health check for apps/Deployment that knows openfga-operator's migration state.
-- Source: docs/gitops/argocd-deployment-health.lua of openfga-operator (see docs/gitops.md).
--
-- A custom check replaces Argo CD's built-in one for EVERY Deployment, so after the
-- migration rules this script repeats the built-in check (gitops-engine
-- pkg/health/health_deployment.go) rule by rule. It uses only the Lua libraries Argo CD
-- loads by default (base and table: no string, no math).
local hs = {}

local metadata = obj.metadata or {}
local labels = metadata.labels or {}
local annotations = metadata.annotations or {}
local spec = obj.spec or {}
local status = obj.status or {}

local function condition(conditionType)
  for _, c in ipairs(status.conditions or {}) do
    if c.type == conditionType then
      return c
    end
  end
  return nil
end

-- The operator acts only on Deployments with both discovery labels and the exact opt-in.
local migrated = labels["app.kubernetes.io/part-of"] == "openfga"
  and labels["app.kubernetes.io/component"] == "authorization-controller"
  and annotations["openfga.dev/migration-enabled"] == "true"

if migrated then
  -- Set by the operator when a migration Job failed; set back to False by the next success.
  local failed = condition("MigrationFailed")
  if failed ~= nil and failed.status == "True" then
    hs.status = "Degraded"
    hs.message = failed.message or "Database migration failed. Check migration job logs."
    local retryAfter = annotations["openfga.dev/migration-retry-after"]
    if retryAfter ~= nil and retryAfter ~= "" then
      hs.message = hs.message .. " No new attempt before " .. retryAfter .. "."
    end
    return hs
  end
  -- First install: applied at 0 replicas, scaled to desired-replicas after the migration.
  local desiredValue = annotations["openfga.dev/desired-replicas"]
  local desired = nil
  if desiredValue ~= nil then
    desired = tonumber(desiredValue)
  end
  if spec.replicas == 0 and desired ~= nil and desired >= 1 and desired <= 2147483647
      and desired % 1 == 0 then
    hs.status = "Progressing"
    hs.message = "Waiting for the database migration before scaling to " .. desired .. " replicas"
    return hs
  end
end

-- Argo CD's built-in Deployment health.
if spec.paused == true then
  hs.status = "Suspended"
  hs.message = "Deployment is paused"
  return hs
end
if (metadata.generation or 0) > (status.observedGeneration or 0) then
  hs.status = "Progressing"
  hs.message = "Waiting for rollout to finish: observed deployment generation less than desired generation"
  return hs
end
local progressing = condition("Progressing")
local replicas = status.replicas or 0
local updated = status.updatedReplicas or 0
local available = status.availableReplicas or 0
if progressing ~= nil and progressing.reason == "ProgressDeadlineExceeded" then
  hs.status = "Degraded"
  hs.message = "Deployment \"" .. (metadata.name or "") .. "\" exceeded its progress deadline"
  return hs
end
if spec.replicas ~= nil and updated < spec.replicas then
  hs.status = "Progressing"
  hs.message = "Waiting for rollout to finish: " .. updated .. " out of " .. spec.replicas
    .. " new replicas have been updated..."
  return hs
end
if replicas > updated then
  hs.status = "Progressing"
  hs.message = "Waiting for rollout to finish: " .. (replicas - updated)
    .. " old replicas are pending termination..."
  return hs
end
if available < updated then
  hs.status = "Progressing"
  hs.message = "Waiting for rollout to finish: " .. available .. " of " .. updated
    .. " updated replicas are available..."
  return hs
end
hs.status = "Healthy"
return hs
