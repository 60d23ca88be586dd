{{/* The release's full name: the release name alone when it already names the chart. */}}
{{- define "kubectl-terminating.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kubectl-terminating.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kubectl-terminating.labels" -}}
{{ include "kubectl-terminating.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kubectl-terminating.serviceAccountName" -}}
{{- default (include "kubectl-terminating.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "kubectl-terminating.image" -}}
{{- printf "%s:%s" .Values.image.repository (default (printf "v%s" .Chart.AppVersion) .Values.image.tag) -}}
{{- end -}}

{{/* The pod security settings of every container of this chart: non-root, nothing writable. */}}
{{- define "kubectl-terminating.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65534
runAsGroup: 65534
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "kubectl-terminating.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* The ConfigMap holding the user's knowledge file (docs/knowledge.md): the chart's own when
knowledge.content is set, else knowledge.existingConfigMap; empty: none is mounted. */}}
{{- define "kubectl-terminating.knowledgeConfigMap" -}}
{{- if .Values.knowledge.content -}}
{{- printf "%s-knowledge" (include "kubectl-terminating.fullname" .) -}}
{{- else -}}
{{- .Values.knowledge.existingConfigMap -}}
{{- end -}}
{{- end -}}
