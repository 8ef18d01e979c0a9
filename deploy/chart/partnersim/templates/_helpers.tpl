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

{{/* The shards to render: the values' list, or one shard serving every institution. */}}
{{- define "partnersim.shards" -}}
{{- if .Values.shards -}}
{{- range .Values.shards -}}
{{- if not (regexMatch "^[a-z0-9]{1,8}$" (toString .name)) -}}
{{- fail (printf "shards: name %q must be 1 to 8 lower-case letters or digits (it begins every id and key the shard issues)" (toString .name)) -}}
{{- end -}}
{{- if not .institutions -}}
{{- fail (printf "shards: shard %q names no institutions" .name) -}}
{{- end -}}
{{- end -}}
{{- toJson .Values.shards -}}
{{- else -}}
{{- toJson (list (dict "name" "" "institutions" (list))) -}}
{{- end -}}
{{- end -}}

{{/* A shard's resource name: the release's, with the shard's name after it when sharded. */}}
{{- define "partnersim.shardName" -}}
{{- $root := index . 0 -}}{{- $shard := index . 1 -}}
{{- if $shard.name -}}{{ include "partnersim.name" $root | trunc 40 | trimSuffix "-" }}-{{ $shard.name }}{{- else -}}{{ include "partnersim.name" $root }}{{- end -}}
{{- end -}}

{{/* A shard's pod labels: the release's selector and, when sharded, the shard. */}}
{{- define "partnersim.shardSelector" -}}
{{- $root := index . 0 -}}{{- $shard := index . 1 -}}
{{ include "partnersim.selector" $root }}
{{- if $shard.name }}
partnersim.dev/shard: {{ $shard.name }}
{{- end -}}
{{- end -}}

{{/* The router's pod labels: a name of its own, so that no shard's Service selects it. */}}
{{- define "partnersim.routerSelector" -}}
app.kubernetes.io/name: partnersim-router
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
