{{/*
Expand the name of the chart.
*/}}
{{- define "golf.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Create a default fully qualified app name.
We truncate at 63 chars because some Kubernetes name fields are limited to this (by the DNS naming spec).
If release name contains chart name it will be used as a full name.
*/}}
{{- define "golf.fullname" -}}
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
Create chart name and version as used by the chart label.
*/}}
{{- define "golf.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels
*/}}
{{- define "golf.labels" -}}
helm.sh/chart: {{ include "golf.chart" . }}
{{ include "golf.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels
*/}}
{{- define "golf.selectorLabels" -}}
app.kubernetes.io/name: {{ include "golf.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Create the name of the service account to use
*/}}
{{- define "golf.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "golf.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The image reference: repository and tag (the tag defaults to the chart's appVersion), or a digest.
*/}}
{{- define "golf.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/*
The Secret holding GOLF_DATABASE_URL (and GOLF_TOKEN_KEY): the operator's own, or the chart's.
*/}}
{{- define "golf.secretName" -}}
{{- default (include "golf.fullname" .) .Values.database.existingSecret }}
{{- end }}

{{/*
The environment of the service's container and of the migration Job's: the database URL from the Secret.
*/}}
{{- define "golf.databaseEnv" -}}
- name: GOLF_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .secretName }}
      key: {{ .key }}
{{- end }}

{{/*
The key signing player tokens: tokenKey when set (32 characters or more), else the one this release's Secret
already holds (so upgrades keep players signed in), else a new random one. Every replica reads the same Secret.
*/}}
{{- define "golf.tokenKey" -}}
{{- if .Values.tokenKey -}}
{{- if lt (len .Values.tokenKey) 32 -}}
{{- fail "tokenKey must be at least 32 characters" -}}
{{- end -}}
{{- .Values.tokenKey -}}
{{- else -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "golf.fullname" .) -}}
{{- if and $existing $existing.data (index $existing.data "token-key") -}}
{{- index $existing.data "token-key" | b64dec -}}
{{- else -}}
{{- randAlphaNum 48 -}}
{{- end -}}
{{- end -}}
{{- end }}
