{{/* The chart's name (nameOverride). */}}
{{- define "weft.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every resource name: fullnameOverride, else "<release>-<name>", or the release name alone when
it contains the chart's name. Worker names add "-worker-<language>", so it stays short enough for them. */}}
{{- define "weft.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "weft.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every resource; the caller adds app.kubernetes.io/component. */}}
{{- define "weft.labels" -}}
helm.sh/chart: {{ include "weft.chart" . }}
{{ include "weft.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Labels selectors match on; the caller adds app.kubernetes.io/component. */}}
{{- define "weft.selectorLabels" -}}
app.kubernetes.io/name: {{ include "weft.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* An image reference from {repository, tag, digest}; dict "image" the values, "default" the tag when empty. */}}
{{- define "weft.imageRef" -}}
{{- if .image.digest -}}
{{- printf "%s@%s" .image.repository .image.digest -}}
{{- else -}}
{{- printf "%s:%s" .image.repository (default .default .image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The Secret the chart makes from values (database.url, encryption keys, workerKey.value). */}}
{{- define "weft.secretName" -}}
{{- include "weft.fullname" . -}}
{{- end -}}

{{/* true when the chart's Secret has data. */}}
{{- define "weft.ownSecret" -}}
{{- if or .Values.database.url .Values.encryption.aesKey .Values.workerKey.value -}}true{{- end -}}
{{- end -}}

{{/* DATABASE_URL from its Secret: database.existingSecret's, else the chart's; dict "root" ., "secret" the chart's
Secret to read (the migration Job reads the hook's own copy). */}}
{{- define "weft.databaseEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      {{- if .root.Values.database.existingSecret }}
      name: {{ .root.Values.database.existingSecret }}
      key: {{ .root.Values.database.existingSecretKey }}
      {{- else }}
      name: {{ .secret }}
      key: DATABASE_URL
      {{- end }}
{{- end -}}

{{/* WEFT_API_KEY for workers, from workerKey's Secret; nothing with auth.mode none and no key. */}}
{{- define "weft.workerKeyEnv" -}}
{{- if .Values.workerKey.existingSecret }}
- name: WEFT_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.workerKey.existingSecret }}
      key: {{ .Values.workerKey.existingSecretKey }}
{{- else if .Values.workerKey.value }}
- name: WEFT_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "weft.secretName" . }}
      key: WEFT_API_KEY
{{- end }}
{{- end -}}

{{/* env entries from a map (sorted by name, values quoted). */}}
{{- define "weft.envMap" -}}
{{- range $k, $v := . }}
- name: {{ $k }}
  value: {{ $v | toString | quote }}
{{- end }}
{{- end -}}

{{/* The pod's securityContext: non-root (uid 65532, distroless's nonroot), the runtime's seccomp profile. */}}
{{- define "weft.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* A container's securityContext; the argument says whether the root filesystem is read-only. */}}
{{- define "weft.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: {{ . }}
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* A soft spread of a component's pods over nodes; dict "root" ., "component" its name. */}}
{{- define "weft.spread" -}}
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "weft.selectorLabels" .root | nindent 8 }}
        app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The checks on values no schema can express; every manifest includes it, so a bad combination fails the
render with a message naming the value to set. */}}
{{- define "weft.validate" -}}
{{- $v := .Values -}}
{{- if and (not $v.database.url) (not $v.database.existingSecret) -}}
{{- fail "set database.url (the chart keeps it in a Secret) or database.existingSecret (a Secret of yours holding DATABASE_URL)" -}}
{{- end -}}
{{- if and $v.database.url $v.database.existingSecret -}}
{{- fail "set database.url or database.existingSecret, not both" -}}
{{- end -}}
{{- if and $v.encryption.aesKey $v.encryption.existingSecret -}}
{{- fail "set encryption.aesKey or encryption.existingSecret, not both" -}}
{{- end -}}
{{- if and $v.encryption.oldKeys (not $v.encryption.aesKey) -}}
{{- fail "encryption.oldKeys needs encryption.aesKey (the current key)" -}}
{{- end -}}
{{- if and $v.workerKey.value $v.workerKey.existingSecret -}}
{{- fail "set workerKey.value or workerKey.existingSecret, not both" -}}
{{- end -}}
{{- if eq $v.auth.mode "jwt" -}}
{{- if or (not $v.auth.jwt.jwksUrl) (not $v.auth.jwt.issuer) (not $v.auth.jwt.audience) -}}
{{- fail "auth.mode jwt needs auth.jwt.jwksUrl, auth.jwt.issuer and auth.jwt.audience" -}}
{{- end -}}
{{- end -}}
{{- $grace := int $v.server.terminationGracePeriodSeconds -}}
{{- $drain := add (int $v.server.preStopSleepSeconds) (int $v.server.shutdownTimeoutSeconds) -}}
{{- if and $grace (le $grace (int $drain)) -}}
{{- fail (printf "server.terminationGracePeriodSeconds (%d) must exceed server.preStopSleepSeconds + server.shutdownTimeoutSeconds (%d): the server would be killed while draining" $grace (int $drain)) -}}
{{- end -}}
{{- if and $v.metrics.serviceMonitor.enabled (not $v.metrics.enabled) -}}
{{- fail "metrics.serviceMonitor.enabled needs metrics.enabled (the port it scrapes)" -}}
{{- end -}}
{{- range $lang, $w := $v.workers -}}
{{- if $w.enabled -}}
{{- if not $w.image.repository -}}
{{- fail (printf "workers.%s.image.repository: the image of your project's %s worker" $lang $lang) -}}
{{- end -}}
{{- if and (not $w.image.tag) (not $w.image.digest) -}}
{{- fail (printf "workers.%s.image.tag (or .digest): your project image's version" $lang) -}}
{{- end -}}
{{- if and $w.autoscaling.enabled $w.keda.enabled -}}
{{- fail (printf "workers.%s: autoscaling.enabled and keda.enabled both make a HorizontalPodAutoscaler; choose one" $lang) -}}
{{- end -}}
{{- if and (ne $v.auth.mode "none") (not $v.workerKey.value) (not $v.workerKey.existingSecret) -}}
{{- fail (printf "workers.%s is enabled with auth.mode %s: set workerKey.value or workerKey.existingSecret (a key with the worker scope: weft keys create --scope worker)" $lang $v.auth.mode) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
