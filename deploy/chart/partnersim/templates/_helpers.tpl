{{- define "partnersim.name" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "partnersim.labels" -}}
app.kubernetes.io/name: partnersim
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "partnersim.selector" -}}
app.kubernetes.io/name: partnersim
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "partnersim.secret" -}}
{{- if .Values.token.existingSecret -}}{{ .Values.token.existingSecret }}{{- else -}}{{ include "partnersim.name" . }}-token{{- end -}}
{{- end -}}
