{{/*
Chart name, truncated to 63 characters.
*/}}
{{- define "openfga-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: fullnameOverride, else the release name when it already contains the chart name, else
<release>-<chart>; truncated to 63 characters (a DNS label).
*/}}
{{- define "openfga-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Namespace of the operator's own objects.
*/}}
{{- define "openfga-operator.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "openfga-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels.
*/}}
{{- define "openfga-operator.labels" -}}
helm.sh/chart: {{ include "openfga-operator.chart" . }}
{{ include "openfga-operator.selectorLabels" . }}
app.kubernetes.io/component: operator
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: openfga
{{- end }}

{{/*
Selector labels.
*/}}
{{- define "openfga-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "openfga-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The operator's ServiceAccount: the full name (or serviceAccount.name) when the chart creates it;
otherwise serviceAccount.name, which must then be given.
*/}}
{{- define "openfga-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "openfga-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false: name the existing ServiceAccount the operator runs as" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The image: repository@digest when image.digest is set (the tag is then not used), else
repository:tag, the tag defaulting to the chart's appVersion.
*/}}
{{- define "openfga-operator.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}
{{- end }}

{{/*
The namespaces whose OpenFGA Deployments are watched, as a JSON list (empty when every namespace
is watched): watchNamespace and watchNamespaces together, else the operator's own namespace.
Fails on a combination the operator would reject at start-up.
*/}}
{{- define "openfga-operator.watchedNamespaces" -}}
{{- $named := list }}
{{- if .Values.watchNamespace }}
{{- $named = append $named .Values.watchNamespace }}
{{- end }}
{{- range .Values.watchNamespaces }}
{{- $named = append $named . }}
{{- end }}
{{- $named = uniq $named }}
{{- if .Values.watchAllNamespaces }}
{{- if $named }}
{{- fail (printf "watchAllNamespaces cannot be combined with watchNamespace or watchNamespaces (got %s): the operator would refuse to start" (join ", " $named)) }}
{{- end }}
{{- list | toJson }}
{{- else if $named }}
{{- $named | toJson }}
{{- else }}
{{- list (include "openfga-operator.namespace" .) | toJson }}
{{- end }}
{{- end }}

{{/*
Name of cluster-scoped objects: unique per release namespace.
*/}}
{{- define "openfga-operator.clusterName" -}}
{{- printf "%s-%s" (include "openfga-operator.namespace" .) (include "openfga-operator.fullname" .) | trunc 253 | trimSuffix "-" }}
{{- end }}

{{/*
What the operator does in a watched namespace: exactly the API calls of its code (the chart tests
compare these rules with the calls the operator makes against a recording API server).
*/}}
{{- define "openfga-operator.watchRules" -}}
{{- /* dryRun: the reads only; the operator writes nothing and the API server would refuse it */}}
{{- $write := not .Values.dryRun }}
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["list", "watch"{{ if $write }}, "patch"{{ end }}]
{{- if $write }}
- apiGroups: ["apps"]
  resources: ["deployments/status"]
  verbs: ["patch"]
{{- end }}
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "list", "watch"{{ if $write }}, "create", "patch", "delete"{{ end }}]
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch"{{ if $write }}, "create", "patch"{{ end }}]
- apiGroups: [""]
  resources: ["events"]
  verbs: [{{ if $write }}"create", {{ end }}"list"]
{{- /* pods: the migration pods (label openfga.dev/database) are cached, a pod outlives a Job
deleted by someone else and holds its database until it has stopped; and failure evidence */}}
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["list", "watch"]
{{- if gt (int64 .Values.failureLogLines) 0 }}
- apiGroups: [""]
  resources: ["pods/log"]
  verbs: ["get"]
{{- end }}
{{- if .Values.storesAndModels.enabled }}
{{- /* FGAStore, FGAModel and FGATuples: the controllers' watches, finalizers (FGAStore's and
FGATuples') and status (get: the store of a model or of tuples, the model of tuples, and a resource
whose status write met a newer object); the credentials Secrets. The ConfigMaps above hold an
FGAModel's publication and an FGATuples' ownership record <name>-tuples-record (never deleted by
the operator: with deletionPolicy Delete it is given an owner reference and the garbage collector
deletes it). */}}
- apiGroups: ["openfga.dev"]
  resources: ["fgastores", "fgatuples"]
  verbs: ["get", "list", "watch", "patch"]
- apiGroups: ["openfga.dev"]
  resources: ["fgamodels"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["openfga.dev"]
  resources: ["fgastores/status", "fgamodels/status", "fgatuples/status"]
  verbs: ["patch"]
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get"]
{{- end }}
{{- end }}
