{{/*
List-generator elements, one per fleet cluster.
*/}}
{{- define "fleet-addons.elements" -}}
{{- range .Values.clusters }}
- cluster: {{ .name }}
  url: {{ .url | quote }}
{{- end }}
{{- end }}

{{/* The observability cluster's API server. */}}
{{- define "fleet-addons.obsServer" -}}
{{- required "observability.cluster.apiServer is required" .cluster.apiServer -}}
{{- end }}
