{{/* Chart name, at most 63 characters (a DNS label). */}}
{{- define "gantry.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: the release name, prefixed to the chart name unless it already contains it. */}}
{{- define "gantry.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* The operator's objects: the full name with an -operator suffix, within 63 characters. */}}
{{- define "gantry.operatorName" -}}
{{- printf "%s-operator" (include "gantry.fullname" . | trunc 54 | trimSuffix "-") }}
{{- end }}

{{/* Labels every object of the release carries. */}}
{{- define "gantry.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gantry
{{- end }}

{{/* Data plane pods. Unchanged since 0.1: a Deployment's selector cannot change on upgrade. */}}
{{- define "gantry.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gantry.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: dataplane
{{- end }}

{{- define "gantry.labels" -}}
{{ include "gantry.commonLabels" . }}
{{ include "gantry.selectorLabels" . }}
{{- end }}

{{- define "gantry.operatorSelectorLabels" -}}
app.kubernetes.io/name: {{ include "gantry.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "gantry.operatorLabels" -}}
{{ include "gantry.commonLabels" . }}
{{ include "gantry.operatorSelectorLabels" . }}
{{- end }}

{{- define "gantry.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "gantry.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "gantry.operatorServiceAccountName" -}}
{{- if .Values.operator.serviceAccount.create }}
{{- default (include "gantry.operatorName" .) .Values.operator.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.operator.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* "true" in operator mode, empty in standalone mode. */}}
{{- define "gantry.operatorMode" -}}
{{- if eq .Values.mode "operator" }}true{{ end }}
{{- end }}

{{- define "gantry.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The operator's Lease; two releases in one namespace would need different names. */}}
{{- define "gantry.leaseName" -}}
{{ include "gantry.operatorName" . }}
{{- end }}

{{/* More than one data plane pod can run: shared state is required and a PDB is meaningful. */}}
{{- define "gantry.multiReplica" -}}
{{- if or .Values.autoscaling.enabled (gt (int .Values.replicaCount) 1) }}true{{ end }}
{{- end }}

{{/*
Shared-state env for any container that talks to Redis. The password only ever comes from a
Secret (secretKeyRef), never as a literal value in the pod spec.
*/}}
{{- define "gantry.redisEnv" -}}
{{- with .Values.redis.url }}
- name: GANTRY_REDIS_URL
  value: {{ . | quote }}
{{- end }}
{{- if .Values.redis.existingSecret }}
- name: GANTRY_REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.existingSecret }}
      key: {{ .Values.redis.passwordKey }}
{{- end }}
{{- end }}

{{/* Refusals that apply to the whole release, checked once (from deployment.yaml). */}}
{{- define "gantry.validate" -}}
{{- if and (include "gantry.multiReplica" .) (not .Values.redis.url) }}
{{- fail "more than one replica needs shared state: set redis.url (budgets, rate limits and wallets must be shared by every pod)" }}
{{- end }}
{{- if regexMatch "://[^/]*@" .Values.redis.url }}
{{- fail "redis.url must not carry credentials (they would be a plain env value in the pod spec): put the password in a Secret and set redis.existingSecret and redis.passwordKey" }}
{{- end }}
{{- if and .Values.redis.existingSecret (not .Values.redis.url) }}
{{- fail "redis.existingSecret is set but redis.url is empty" }}
{{- end }}
{{- range .Values.providerEnv }}
{{- if regexMatch "(?i)^gantry_" . }}
{{- fail (printf "providerEnv: %s is one of the gateway's own settings, never a provider key" .) }}
{{- end }}
{{- end }}
{{- if and (include "gantry.operatorMode" .) .Values.providerSecrets (not .Values.providerEnv) }}
{{- fail "providerSecrets in operator mode: list in providerEnv the variables of those Secrets that ModelDeployments may name with apiKeyEnv (the data plane offers them no other; docs/chart.md, Upgrading to 0.3)" }}
{{- end }}
{{- if gt (add .Values.shutdown.preStopSeconds .Values.shutdown.drainSeconds .Values.shutdown.journalDrainSeconds 5) (int .Values.terminationGracePeriodSeconds) }}
{{- fail "shutdown.preStopSeconds + shutdown.drainSeconds + shutdown.journalDrainSeconds must leave at least 5 s of terminationGracePeriodSeconds (for closing the stores and exit)" }}
{{- end }}
{{- if and .Values.journal.persistence.enabled (not .Values.redis.url) }}
{{- fail "journal.persistence needs redis.url: the settlement journal only holds charges a Redis outage kept from Redis (in-process stores have none)" }}
{{- end }}
{{- end }}
