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
answers, Ignore while it does not, so a service that changes and refuses nothing there can never
block a write by being down. A mutating webhook enforces in mutationMode apply. A validating one
enforces while one of its `rules` denies: by the rule's ruleActions entry if it has one, else by
validationActions if its default denies, else by its default (the service's own precedence,
src/policy/rule-actions.ts). `rules` is generated into webhooks.yaml from the rule table: each
rule of the webhook that may deny, with its default actions. Called with (dict "root" . "webhook"
"mutate"|"validate" "value" <configured policy> "rules" <dict of rule name to default actions>).
*/ -}}
{{- define "mcp-admission.failurePolicy" -}}
{{- $values := .root.Values -}}
{{- /* An upgrade with --reuse-values from a release before ruleActions has none. */ -}}
{{- $ruleActions := $values.ruleActions | default dict -}}
{{- $enforces := false -}}
{{- if eq .webhook "mutate" -}}
{{- $enforces = eq $values.mutationMode "apply" -}}
{{- else -}}
{{- range $rule, $default := .rules -}}
{{- $actions := $default -}}
{{- if hasKey $ruleActions $rule -}}
{{- $actions = index $ruleActions $rule -}}
{{- else if has "Deny" $default -}}
{{- $actions = $values.validationActions -}}
{{- end -}}
{{- if has "Deny" $actions -}}
{{- $enforces = true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- ternary .value "Ignore" $enforces -}}
{{- end -}}

{{- /*
ruleActions as --rule-actions takes it: `rule=actions` items joined with `;`, by rule name.
*/ -}}
{{- define "mcp-admission.ruleActions" -}}
{{- $items := list -}}
{{- range $rule, $actions := . -}}
{{- $items = append $items (printf "%s=%s" $rule (join "," $actions)) -}}
{{- end -}}
{{- join ";" $items -}}
{{- end -}}
