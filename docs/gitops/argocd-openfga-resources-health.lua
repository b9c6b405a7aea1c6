-- Argo CD health check for openfga-operator's resources: openfga.dev FGAStore, FGAModel and
-- FGATuples, read from their Ready and InSync conditions.
-- Source: docs/gitops/argocd-openfga-resources-health.lua of openfga-operator (see docs/gitops.md).
-- It uses only the Lua libraries Argo CD loads by default (base and table: no string, no math).
local hs = {}

local metadata = obj.metadata or {}
local status = obj.status or {}

local function condition(conditionType)
  for _, c in ipairs(status.conditions or {}) do
    if c.type == conditionType then
      return c
    end
  end
  return nil
end

local function describe(c)
  local text = c.reason or c.type
  if c.message ~= nil and c.message ~= "" then
    text = text .. ": " .. c.message
  end
  return text
end

-- Ready=False for these waits on something else and clears by itself: no person is needed.
local waiting = {StoreNotReady = true, WaitingForModel = true, WaitingForMigration = true}
-- InSync=False for these is repaired by the operator itself (a deleted tuple is written again).
local repairing = {TuplesMissing = true}
-- The kinds with an InSync condition besides Ready.
local withInSync = {FGAModel = true, FGATuples = true}

if (metadata.generation or 0) > (status.observedGeneration or 0) then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to reconcile the latest spec"
  return hs
end
local ready = condition("Ready")
if ready == nil or (ready.status ~= "True" and ready.status ~= "False") then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to set Ready"
  return hs
end
if ready.status == "False" then
  if waiting[ready.reason] then
    hs.status = "Progressing"
  else
    hs.status = "Degraded"
  end
  hs.message = describe(ready)
  return hs
end
if withInSync[obj.kind] then
  local inSync = condition("InSync")
  if inSync == nil or (inSync.status ~= "True" and inSync.status ~= "False") then
    hs.status = "Progressing"
    hs.message = "Waiting for the operator to set InSync"
    return hs
  end
  if inSync.status == "False" then
    if repairing[inSync.reason] then
      hs.status = "Progressing"
    else
      hs.status = "Degraded"
    end
    hs.message = describe(inSync)
    return hs
  end
end
hs.status = "Healthy"
hs.message = describe(ready)
return hs
