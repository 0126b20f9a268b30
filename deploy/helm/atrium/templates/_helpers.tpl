{{/*
Helpers of the Atrium chart. A component is one of gateway, collections,
crm, data, actions, webhooks, audit; most helpers take (dict "root" $ "component" $c).
*/}}

{{- define "atrium.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The prefix of every resource name: <release>-atrium unless the release name already holds the chart name. */}}
{{- define "atrium.fullname" -}}
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

{{/* The six gRPC services, in the order they start. */}}
{{- define "atrium.services" -}}
collections crm data actions webhooks audit
{{- end }}

{{/*
The chart's own components that call a service over gRPC, besides the
gateway, which calls all six: crm asks collections whether a site exists
and which agency owns it, collections asks crm whether a site's agency and
client exist, data and actions ask crm which clients an agency may reach, actions writes
records through data and reads the agency's report logo from collections,
webhooks asks crm which agencies a client is linked
to, audit asks collections which agency owns a site.
*/}}
{{- define "atrium.internalCallers" -}}
{{- $callers := dict "collections" (list "crm" "audit" "actions") "crm" (list "collections" "data" "actions" "webhooks") "data" (list "actions") "actions" (list) "webhooks" (list) "audit" (list) -}}
{{- get $callers . | join " " -}}
{{- end }}

{{/* <fullname>-<component>, the name of a component's resources. */}}
{{- define "atrium.componentName" -}}
{{- printf "%s-%s" (include "atrium.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "atrium.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The Kubernetes recommended labels of a component's resources. */}}
{{- define "atrium.labels" -}}
helm.sh/chart: {{ include "atrium.chart" .root }}
{{ include "atrium.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: atrium
{{- end }}

{{/* The labels selecting a component's pods; NetworkPolicies use them too. */}}
{{- define "atrium.selectorLabels" -}}
app.kubernetes.io/name: {{ include "atrium.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* The image of a component: its own override, else the chart's image. */}}
{{- define "atrium.image" -}}
{{- $global := .root.Values.image }}
{{- $own := .image | default dict }}
{{- $repository := $own.repository | default $global.repository }}
{{- $tag := $own.tag | default $global.tag | default .root.Chart.AppVersion }}
{{- $digest := $own.digest | default $global.digest }}
{{- if $digest }}
{{- printf "%s@%s" $repository $digest }}
{{- else }}
{{- printf "%s:%s" $repository $tag }}
{{- end }}
{{- end }}

{{/* The gRPC address of a service as the other components reach it: the
DNS name of its headless Service, which resolves to every ready pod, so
that callers spread their calls over the replicas and move off one that
goes away (platform/rpc.Dial). */}}
{{- define "atrium.serviceAddr" -}}
{{- $values := index .root.Values .component }}
{{- printf "dns:///%s-headless.%s.svc.%s:%d" (include "atrium.componentName" .) .root.Release.Namespace .root.Values.clusterDomain (int $values.grpcPort) }}
{{- end }}

{{/* An env entry taking its value from an existing Secret. */}}
{{- define "atrium.secretEnv" -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .ref.name }}
      key: {{ .ref.key }}
{{- end }}

{{/* The NATS URL, from its Secret when one is named. */}}
{{- define "atrium.natsSecretEnv" -}}
{{- if .Values.nats.urlSecret.name }}
{{ include "atrium.secretEnv" (dict "env" "ATRIUM_NATS_URL" "ref" .Values.nats.urlSecret) }}
{{- end }}
{{- end }}

{{/* The settings every component's ConfigMap holds. */}}
{{- define "atrium.commonConfig" -}}
{{- $values := index .root.Values .component }}
ATRIUM_LOG_FORMAT: {{ .root.Values.logging.format | quote }}
ATRIUM_LOG_LEVEL: {{ .root.Values.logging.level | quote }}
{{- if not .root.Values.nats.urlSecret.name }}
ATRIUM_NATS_URL: {{ .root.Values.nats.url | quote }}
{{- end }}
ATRIUM_DRAIN_DELAY: {{ $values.drainDelay | quote }}
ATRIUM_SHUTDOWN_TIMEOUT: {{ $values.shutdownTimeout | quote }}
{{- range $name, $value := .root.Values.otel.env }}
{{ $name }}: {{ $value | toString | quote }}
{{- end }}
{{- end }}

{{/* Whether a component keeps or serves files (the object store's users). */}}
{{- define "atrium.usesFiles" -}}
{{- if has . (list "gateway" "collections" "actions") }}true{{ end }}
{{- end }}

{{/*
Whether a component mounts the data directory (/var/lib/atrium/data): without
a bucket, the collections and actions services always (a claim or an emptyDir),
the gateway only when it is a shared claim (an emptyDir of its own holds
nothing to serve); with a bucket, each of the three when persistence is on
(images an older version kept there move to the bucket at start).
*/}}
{{- define "atrium.mountsData" -}}
{{- $os := .root.Values.objectStore }}
{{- if include "atrium.usesFiles" .component }}
{{- if $os.persistence.enabled }}true
{{- else if and (not $os.s3.bucket) (ne .component "gateway") }}true
{{- end }}
{{- end }}
{{- end }}

{{/* The object store settings of the gateway, collections and actions. */}}
{{- define "atrium.objectStoreConfig" -}}
{{- $s3 := .root.Values.objectStore.s3 }}
{{- if include "atrium.usesFiles" .component }}
{{- if $s3.bucket }}
ATRIUM_S3_BUCKET: {{ $s3.bucket | quote }}
{{- with $s3.endpoint }}
ATRIUM_S3_ENDPOINT: {{ . | quote }}
{{- end }}
{{- with $s3.region }}
ATRIUM_S3_REGION: {{ . | quote }}
{{- end }}
{{- with $s3.prefix }}
ATRIUM_S3_PREFIX: {{ . | quote }}
{{- end }}
{{- end }}
{{- if include "atrium.mountsData" . }}
ATRIUM_DATA_DIR: "/var/lib/atrium/data"
{{- end }}
{{- end }}
{{- end }}

{{/* The base URL of generated media links and asset URLs: actions.publicURL, else the first ingress host. */}}
{{- define "atrium.publicURL" -}}
{{- $v := .Values }}
{{- if $v.actions.publicURL }}
{{- $v.actions.publicURL }}
{{- else if and $v.ingress.enabled $v.ingress.hosts }}
{{- $host := (first $v.ingress.hosts).host }}
{{- $scheme := "http" }}
{{- range $v.ingress.tls }}
{{- if has $host .hosts }}{{ $scheme = "https" }}{{ end }}
{{- end }}
{{- printf "%s://%s" $scheme $host }}
{{- end }}
{{- end }}

{{/* A component's ConfigMap data: every non-secret setting as its ATRIUM_* variable. */}}
{{- define "atrium.config" -}}
{{- $root := .root }}
{{- $values := index $root.Values .component }}
{{- include "atrium.commonConfig" . }}
{{- include "atrium.objectStoreConfig" . }}
{{- if eq .component "gateway" }}
ATRIUM_HTTP_ADDR: {{ printf ":%d" (int $values.httpPort) | quote }}
ATRIUM_ADMIN_ADDR: {{ printf ":%d" (int $values.adminPort) | quote }}
{{- range $service := splitList " " (include "atrium.services" $root) }}
ATRIUM_{{ upper $service }}_ADDR: {{ include "atrium.serviceAddr" (dict "root" $root "component" $service) | quote }}
{{- end }}
ATRIUM_REQUEST_TIMEOUT: {{ $values.requestTimeout | quote }}
ATRIUM_MAX_BODY_BYTES: {{ $values.maxBodyBytes | int64 | toString | quote }}
ATRIUM_KEY_CACHE_TTL: {{ $values.keyCacheTTL | quote }}
ATRIUM_KEY_CACHE_SIZE: {{ $values.keyCacheSize | int64 | toString | quote }}
ATRIUM_RATE_LIMIT: {{ $values.rateLimit | toString | quote }}
{{- if not (kindIs "invalid" $values.rateLimitBurst) }}
ATRIUM_RATE_LIMIT_BURST: {{ $values.rateLimitBurst | int64 | toString | quote }}
{{- end }}
ATRIUM_MAX_IN_FLIGHT: {{ $values.maxInFlight | int64 | toString | quote }}
ATRIUM_MAX_LONG_REQUESTS: {{ $values.maxLongRequests | int64 | toString | quote }}
ATRIUM_MAX_STREAMS_PER_KEY: {{ $values.maxStreamsPerKey | int64 | toString | quote }}
ATRIUM_MAX_STREAMS_PER_TENANT: {{ $values.maxStreamsPerTenant | int64 | toString | quote }}
ATRIUM_MIN_TRANSFER_RATE: {{ $values.minTransferRate | int64 | toString | quote }}
ATRIUM_REALTIME_HEARTBEAT: {{ $values.realtimeHeartbeat | quote }}
ATRIUM_REALTIME_MAX_STREAMS_PER_KEY: {{ $values.realtimeMaxStreamsPerKey | int64 | toString | quote }}
ATRIUM_REALTIME_MAX_STREAMS_PER_SITE: {{ $values.realtimeMaxStreamsPerSite | int64 | toString | quote }}
ATRIUM_MCP_READ_ONLY: {{ $values.mcpReadOnly | toString | quote }}
ATRIUM_STUDIO: {{ $values.studio | toString | quote }}
ATRIUM_COOKIE_SECURE: {{ $values.cookieSecure | toString | quote }}
{{- with $values.oidc.issuer }}
ATRIUM_OIDC_ISSUER: {{ . | quote }}
ATRIUM_OIDC_CLIENT_ID: {{ required "gateway.oidc.clientID is required with gateway.oidc.issuer" $values.oidc.clientID | quote }}
{{- $public := include "atrium.publicURL" $root }}
{{- if not (or $values.oidc.redirectURL $public) }}
{{- fail "gateway.oidc.redirectURL is required with gateway.oidc.issuer when the chart knows no public URL (actions.publicURL, or an ingress host)" }}
{{- end }}
ATRIUM_OIDC_REDIRECT_URL: {{ $values.oidc.redirectURL | default (printf "%s/api/v1/sessions/oidc/callback" (trimSuffix "/" $public)) | quote }}
{{- end }}
ATRIUM_LOGIN_ATTEMPTS_PER_EMAIL: {{ $values.loginAttemptsPerEmail | int64 | toString | quote }}
ATRIUM_LOGIN_ATTEMPTS_PER_ADDRESS: {{ $values.loginAttemptsPerAddress | int64 | toString | quote }}
ATRIUM_LOGIN_ATTEMPT_WINDOW: {{ $values.loginAttemptWindow | quote }}
ATRIUM_TRUSTED_PROXIES: {{ $values.trustedProxies | quote }}
{{- else }}
ATRIUM_GRPC_ADDR: {{ printf ":%d" (int $values.grpcPort) | quote }}
ATRIUM_METRICS_ADDR: {{ printf ":%d" (int $root.Values.metrics.port) | quote }}
{{- /* The hook Job migrates; a service only checks that the schema is at its version. */}}
ATRIUM_MIGRATE: "false"
ATRIUM_NATS_STREAM_REPLICAS: {{ $root.Values.nats.streamReplicas | int64 | toString | quote }}
{{- end }}
{{- if has .component (list "crm" "audit") }}
ATRIUM_COLLECTIONS_ADDR: {{ include "atrium.serviceAddr" (dict "root" $root "component" "collections") | quote }}
{{- end }}
{{- if eq .component "crm" }}
ATRIUM_PASSWORD_HASH_CONCURRENCY: {{ $values.passwordHashConcurrency | int64 | toString | quote }}
{{- /* Invitation and password reset links start with the public URL; they are emailed through the actions service's SMTP server. */}}
{{- with include "atrium.publicURL" $root }}
ATRIUM_PUBLIC_URL: {{ . | quote }}
{{- end }}
{{- with $root.Values.actions.smtp.addr }}
ATRIUM_SMTP_ADDR: {{ . | quote }}
ATRIUM_SMTP_FROM: {{ $root.Values.actions.smtp.from | quote }}
{{- with $root.Values.actions.smtp.username }}
ATRIUM_SMTP_USERNAME: {{ . | quote }}
{{- end }}
ATRIUM_SMTP_TLS: {{ $root.Values.actions.smtp.tls | quote }}
{{- end }}
{{- end }}
{{- if has .component (list "collections" "data" "actions" "webhooks") }}
ATRIUM_CRM_ADDR: {{ include "atrium.serviceAddr" (dict "root" $root "component" "crm") | quote }}
{{- end }}
{{- if eq .component "collections" }}
ATRIUM_MAX_ASSET_BYTES: {{ $values.maxAssetBytes | int64 | toString | quote }}
ATRIUM_ALLOW_SVG_ASSETS: {{ $values.allowSVGAssets | toString | quote }}
ATRIUM_REVISION_RETENTION: {{ $values.revisionRetention | quote }}
{{- with include "atrium.publicURL" $root }}
ATRIUM_PUBLIC_URL: {{ . | quote }}
{{- end }}
{{- end }}
{{- if eq .component "actions" }}
ATRIUM_COLLECTIONS_ADDR: {{ include "atrium.serviceAddr" (dict "root" $root "component" "collections") | quote }}
ATRIUM_DATA_ADDR: {{ include "atrium.serviceAddr" (dict "root" $root "component" "data") | quote }}
{{- with include "atrium.publicURL" $root }}
ATRIUM_PUBLIC_URL: {{ . | quote }}
{{- end }}
ATRIUM_ACTION_TIMEOUT: {{ $values.actionTimeout | quote }}
ATRIUM_PROVIDER_TIMEOUT: {{ $values.providerTimeout | quote }}
ATRIUM_RECOVERY_INTERVAL: {{ $values.recoveryInterval | quote }}
ATRIUM_ACTION_WORKERS: {{ $values.actionWorkers | int64 | toString | quote }}
ATRIUM_AGENCY_MAX_QUEUED: {{ $values.agencyMaxQueued | int64 | toString | quote }}
ATRIUM_SCHEDULE_MIN_INTERVAL: {{ $values.schedules.minInterval | quote }}
ATRIUM_SCHEDULE_CATCHUP: {{ $values.schedules.catchup | quote }}
ATRIUM_SCHEDULE_TICK: {{ $values.schedules.tick | quote }}
ATRIUM_MAX_SCHEDULES: {{ $values.schedules.maxPerAgency | int64 | toString | quote }}
{{- with $values.llm.baseURL }}
ATRIUM_LLM_BASE_URL: {{ . | quote }}
ATRIUM_LLM_MODEL: {{ $values.llm.model | quote }}
{{- end }}
{{- with $values.smtp.addr }}
ATRIUM_SMTP_ADDR: {{ . | quote }}
ATRIUM_SMTP_FROM: {{ $values.smtp.from | quote }}
{{- with $values.smtp.username }}
ATRIUM_SMTP_USERNAME: {{ . | quote }}
{{- end }}
ATRIUM_SMTP_TLS: {{ $values.smtp.tls | quote }}
{{- end }}
ATRIUM_INDEXNOW_ENDPOINT: {{ $values.indexNow.endpoint | quote }}
{{- with $values.indexNow.keyLocation }}
ATRIUM_INDEXNOW_KEY_LOCATION: {{ . | quote }}
{{- end }}
ATRIUM_SEO_PROVIDER: {{ $values.seo.provider | quote }}
ATRIUM_SEO_CACHE_TTL: {{ $values.seo.cacheTTL | quote }}
{{- if eq $values.seo.provider "dataforseo" }}
ATRIUM_DATAFORSEO_LOGIN: {{ $values.seo.dataForSEO.login | quote }}
ATRIUM_DATAFORSEO_BASE_URL: {{ $values.seo.dataForSEO.baseURL | quote }}
ATRIUM_DATAFORSEO_LOCATION: {{ $values.seo.dataForSEO.location | quote }}
ATRIUM_DATAFORSEO_RATE_LIMIT: {{ $values.seo.dataForSEO.rateLimit | int64 | toString | quote }}
{{- end }}
{{- end }}
{{- if eq .component "webhooks" }}
ATRIUM_WEBHOOK_TIMEOUT: {{ $values.timeout | quote }}
ATRIUM_WEBHOOK_RETRY_SCHEDULE: {{ $values.retrySchedule | quote }}
ATRIUM_WEBHOOK_DISABLE_AFTER: {{ $values.disableAfter | quote }}
ATRIUM_WEBHOOK_WORKERS: {{ $values.workers | int64 | toString | quote }}
ATRIUM_WEBHOOK_ENDPOINT_CONCURRENCY: {{ $values.endpointConcurrency | int64 | toString | quote }}
ATRIUM_WEBHOOK_LOG_RETENTION: {{ $values.logRetention | quote }}
{{- end }}
{{- if eq .component "audit" }}
ATRIUM_AUDIT_RETENTION: {{ $values.retention | quote }}
{{- end }}
{{- end }}

{{/* A component's secret settings, each from its existing Secret. */}}
{{- define "atrium.secretEnvs" -}}
{{- $s := .root.Values.secrets }}
{{- include "atrium.secretEnv" (dict "env" "ATRIUM_INTERNAL_SECRET" "ref" $s.internalSecret) }}
{{- if eq .component "gateway" }}
{{ include "atrium.secretEnv" (dict "env" "ATRIUM_ADMIN_TOKEN" "ref" $s.adminToken) }}
{{- if and $s.oidcClientSecret.name .root.Values.gateway.oidc.issuer }}
{{ include "atrium.secretEnv" (dict "env" "ATRIUM_OIDC_CLIENT_SECRET" "ref" $s.oidcClientSecret) }}
{{- end }}
{{- else }}
{{ include "atrium.secretEnv" (dict "env" "ATRIUM_DATABASE_URL" "ref" $s.databaseURL) }}
{{- end }}
{{- include "atrium.natsSecretEnv" .root }}
{{- $creds := .root.Values.objectStore.s3.credentialsSecret }}
{{- if and .root.Values.objectStore.s3.bucket $creds.name (include "atrium.usesFiles" .component) }}
{{ include "atrium.secretEnv" (dict "env" "AWS_ACCESS_KEY_ID" "ref" (dict "name" $creds.name "key" $creds.accessKeyIDKey)) }}
{{ include "atrium.secretEnv" (dict "env" "AWS_SECRET_ACCESS_KEY" "ref" (dict "name" $creds.name "key" $creds.secretAccessKeyKey)) }}
{{- end }}
{{- if and (eq .component "crm") $s.smtpPassword.name .root.Values.actions.smtp.addr }}
{{ include "atrium.secretEnv" (dict "env" "ATRIUM_SMTP_PASSWORD" "ref" $s.smtpPassword) }}
{{- end }}
{{- if eq .component "actions" }}
{{- if $s.llmAPIKey.name }}
{{ include "atrium.secretEnv" (dict "env" "ATRIUM_LLM_API_KEY" "ref" $s.llmAPIKey) }}
{{- end }}
{{- if $s.smtpPassword.name }}
{{ include "atrium.secretEnv" (dict "env" "ATRIUM_SMTP_PASSWORD" "ref" $s.smtpPassword) }}
{{- end }}
{{- if $s.indexNowKey.name }}
{{ include "atrium.secretEnv" (dict "env" "ATRIUM_INDEXNOW_KEY" "ref" $s.indexNowKey) }}
{{- end }}
{{- if and (eq .root.Values.actions.seo.provider "dataforseo") $s.dataForSEOPassword.name }}
{{ include "atrium.secretEnv" (dict "env" "ATRIUM_DATAFORSEO_PASSWORD" "ref" $s.dataForSEOPassword) }}
{{- end }}
{{- end }}
{{- end }}

{{- define "atrium.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
fsGroup: {{ .Values.securityContext.fsGroup }}
fsGroupChangePolicy: OnRootMismatch
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "atrium.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
allowPrivilegeEscalation: false
privileged: false
readOnlyRootFilesystem: true
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* The pod template annotations: the config checksum (a change rolls the pods), scrape hints, the user's own. */}}
{{- define "atrium.podAnnotations" -}}
{{- $values := index .root.Values .component }}
checksum/config: {{ include "atrium.config" . | sha256sum }}
{{- if .root.Values.metrics.scrapeAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/path: /metrics
prometheus.io/port: {{ ternary $values.adminPort .root.Values.metrics.port (eq .component "gateway") | toString | quote }}
{{- end }}
{{- with $values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Scheduling settings of a component's pods. */}}
{{- define "atrium.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
Settings the schema cannot check, refused with a message naming the value.
*/}}
{{- define "atrium.validate" -}}
{{- $v := .Values }}
{{- range $c := list "gateway" "collections" "crm" "data" "actions" "webhooks" "audit" }}
{{- $values := index $v $c }}
{{- if and $values.autoscaling.enabled (not (dig "requests" "cpu" "" $values.resources)) }}
{{- fail (printf "%s.autoscaling.enabled needs %s.resources.requests.cpu: the autoscaler scales on CPU use relative to the request" $c $c) }}
{{- end }}
{{- if and $values.autoscaling.enabled (gt (int $values.autoscaling.minReplicas) (int $values.autoscaling.maxReplicas)) }}
{{- fail (printf "%s.autoscaling.minReplicas (%d) is above maxReplicas (%d)" $c (int $values.autoscaling.minReplicas) (int $values.autoscaling.maxReplicas)) }}
{{- end }}
{{- end }}
{{- $actions := $v.actions }}
{{- $os := $v.objectStore }}
{{- $shared := and $os.persistence.enabled (or $os.persistence.existingClaim (has "ReadWriteMany" $os.persistence.accessModes)) }}
{{- if and $os.persistence.enabled (not $shared) }}
{{- fail "objectStore.persistence needs accessModes [ReadWriteMany] (or an existingClaim that is one): the gateway, collections and actions Deployments all mount the claim" }}
{{- end }}
{{- $most := ternary $actions.autoscaling.maxReplicas $actions.replicaCount $actions.autoscaling.enabled | int }}
{{- if and (gt $most 1) (not $os.s3.bucket) (not $shared) }}
{{- fail "actions may run more than one replica only with objectStore.s3.bucket, or objectStore.persistence on a ReadWriteMany volume: generated images are files every replica and the gateway must read" }}
{{- end }}
{{- if and $actions.llm.baseURL (not $actions.llm.model) }}
{{- fail "actions.llm.model is required with actions.llm.baseURL" }}
{{- end }}
{{- if and $actions.smtp.addr (not $actions.smtp.from) }}
{{- fail "actions.smtp.from is required with actions.smtp.addr" }}
{{- end }}
{{- if and (eq $actions.seo.provider "dataforseo") (not (and $actions.seo.dataForSEO.login $v.secrets.dataForSEOPassword.name)) }}
{{- fail "actions.seo.provider dataforseo needs actions.seo.dataForSEO.login and secrets.dataForSEOPassword (the Secret holding the API password)" }}
{{- end }}
{{- if and $v.ingress.enabled (not $v.ingress.hosts) }}
{{- fail "ingress.enabled needs at least one entry in ingress.hosts" }}
{{- end }}
{{- end }}
