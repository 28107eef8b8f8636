{{/*
The name of every object: fixed `mcp-admission` unless fullnameOverride (values.yaml says why).
*/}}
{{- define "mcp-admission.fullname" -}}
{{- default "mcp-admission" .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Labels on every object: app.kubernetes.io/name and part-of (the only ones of the kustomize files,
which test/manifests/generate.ts writes without Helm's: HELM_ONLY_LABELS), Helm's conventional
ones, and commonLabels.
*/}}
{{- define "mcp-admission.labels" -}}
app.kubernetes.io/name: mcp-admission
app.kubernetes.io/part-of: toolhive
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ include "mcp-admission.appVersion" . | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
The metadata every object carries: name, labels and commonAnnotations. Namespaced objects add
their namespace; `labels` (a dict: a selector's, such as a Prometheus's ruleSelector) are added
to the common ones, and `annotations` (a dict) are merged over commonAnnotations.
*/}}
{{- define "mcp-admission.metadata" -}}
name: {{ .name }}
{{- if .namespace }}
namespace: {{ .namespace }}
{{- end }}
labels:
  {{- include "mcp-admission.labels" .root | nindent 2 }}
  {{- with .labels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with merge (dict) (.annotations | default dict) .root.Values.commonAnnotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
Selector labels of the pods: the base's. Not the release instance: a Deployment's selector is
immutable, and keeping the base's lets a kustomize install be taken over by the chart.
*/}}
{{- define "mcp-admission.selectorLabels" -}}
app.kubernetes.io/name: mcp-admission
app.kubernetes.io/component: webhook
{{- end -}}

{{- define "mcp-admission.appVersion" -}}
{{- default .Chart.AppVersion .Values.image.tag -}}
{{- end -}}

{{- define "mcp-admission.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ include "mcp-admission.appVersion" . }}
{{- end -}}
{{- end -}}

{{- define "mcp-admission.tlsSecretName" -}}
{{- default (printf "%s-tls" (include "mcp-admission.fullname" .)) .Values.certificates.secretName -}}
{{- end -}}

{{- define "mcp-admission.leaseNamespace" -}}
{{- default .Release.Namespace .Values.reconciler.leaseNamespace -}}
{{- end -}}

{{/*
The webhooks' caBundle with certificates from an existing Secret: base64 of the PEM bundle,
accepted as PEM or already encoded. A missing bundle fails the render: without it the API server
cannot verify the service, and every fail-closed write it guards would be refused.
*/}}
{{- define "mcp-admission.caBundle" -}}
{{- $bundle := .Values.certificates.caBundle | trim -}}
{{- if not $bundle -}}
{{- fail "certificates.source=secret needs certificates.caBundle: the PEM of the CA that signed the serving certificate in the Secret (e.g. --set-file certificates.caBundle=ca.crt)" -}}
{{- end -}}
{{- if contains "-----BEGIN" $bundle -}}
{{ .Values.certificates.caBundle | b64enc }}
{{- else -}}
{{ $bundle }}
{{- end -}}
{{- end -}}

{{- /*
A webhook's failurePolicy: the configured one while the service enforces what that webhook
answers, Ignore while it only watches (validating webhooks without Deny among the validation
actions, mutating webhooks in observe mode), so a service that changes and refuses nothing can
never block a write by being down. Called with (dict "root" . "webhook" "mutate"|"validate"
"value" <configured policy>).
*/ -}}
{{- define "mcp-admission.failurePolicy" -}}
{{- $values := .root.Values -}}
{{- $enforces := ternary (eq $values.mutationMode "apply") (has "Deny" $values.validationActions) (eq .webhook "mutate") -}}
{{- ternary .value "Ignore" $enforces -}}
{{- end -}}
