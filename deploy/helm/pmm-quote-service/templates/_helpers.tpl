{{/* Names and labels. */}}
{{- define "pmm.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object; pod templates add the selector labels to these. */}}
{{- define "pmm.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: pmm-quote-service
{{- end -}}

{{- define "pmm.labels" -}}
{{ include "pmm.commonLabels" . }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Selector labels of one part: (dict "ctx" $ "component" "gateway"). */}}
{{- define "pmm.selectorLabels" -}}
app.kubernetes.io/name: {{ .ctx.Chart.Name }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* An image reference: (dict "image" .Values.image "ctx" $); a digest wins over the tag. */}}
{{- define "pmm.image" -}}
{{- if .image.digest -}}
{{- printf "%s@%s" .image.repository .image.digest -}}
{{- else -}}
{{- printf "%s:%s" .image.repository (default .ctx.Chart.AppVersion .image.tag) -}}
{{- end -}}
{{- end -}}

{{/* A required value, with the message naming it. */}}
{{- define "pmm.required" -}}
{{- required (printf "%s is required (see values.yaml)" .name) .value -}}
{{- end -}}

{{/* The served chains (SERVED_CHAINS): the ids of `chains`, comma-separated. */}}
{{- define "pmm.servedChains" -}}
{{- if not .Values.chains }}{{ fail "chains: at least one chain is required" }}{{ end -}}
{{- range $id, $c := .Values.chains }}
{{- if not (regexMatch "^[0-9]+$" $id) }}{{ fail (printf "chains: %q is not a chain id" $id) }}{{ end -}}
{{- if ne (toString $c.chainId) $id }}{{ fail (printf "chains.%s.chainId must be %s" $id $id) }}{{ end -}}
{{- end -}}
{{- join "," (keys .Values.chains | sortAlpha) -}}
{{- end -}}

{{/* The grace period, checked against what a process needs to stop. */}}
{{- define "pmm.terminationGracePeriod" -}}
{{- $s := .Values.shutdown -}}
{{- if lt (int $s.terminationGracePeriodSeconds) (add (int $s.preStopSeconds) 15 | int) -}}
{{- fail (printf "shutdown.terminationGracePeriodSeconds (%v) must be at least preStopSeconds + 15: the 10 s drain and the close after it" $s.terminationGracePeriodSeconds) -}}
{{- end -}}
{{- $s.terminationGracePeriodSeconds -}}
{{- end -}}

{{/* Pod-level settings every part shares: (dict "ctx" $ "part" .Values.gateway "component" "gateway"). */}}
{{- define "pmm.podSpecCommon" -}}
{{- $ctx := .ctx -}}
automountServiceAccountToken: false
enableServiceLinks: false
securityContext:
  {{- toYaml $ctx.Values.podSecurityContext | nindent 2 }}
{{- with $ctx.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .part.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .part.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "pmm.topologySpread" -}}
topologySpreadConstraints:
  - topologyKey: {{ .ctx.Values.topologySpread.topologyKey }}
    maxSkew: {{ .ctx.Values.topologySpread.maxSkew }}
    whenUnsatisfiable: {{ .ctx.Values.topologySpread.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- include "pmm.selectorLabels" . | nindent 8 }}
{{- end -}}

{{/*
A Redis URL of the values, checked: it must carry no user or password (they would be a secret in a
value); each process's own come as REDIS_USERNAME and REDIS_PASSWORD_FILE, for both URLs:
(dict "name" "redis.url" "url" …).
*/}}
{{- define "pmm.checkedRedisUrl" -}}
{{- if regexMatch "^[^/]*//[^/]*@" .url -}}
{{- fail (printf "%s must carry no user or password: each process connects as its own user (REDIS_USERNAME) with its password from redis.existingSecret" .name) -}}
{{- end -}}
{{- if regexMatch "(?i)[?&]sentinelPassword=" .url -}}
{{- fail (printf "%s must carry no sentinel password: name its key of redis.existingSecret in redis.sentinelPasswordKey" .name) -}}
{{- end -}}
{{- .url -}}
{{- end -}}

{{/* The Redis URL every process shares, `redis.url` (REDIS_URL): what can be rebuilt, and everything without redis.recordsUrl. */}}
{{- define "pmm.redisUrl" -}}
{{- $url := include "pmm.required" (dict "name" "redis.url" "value" .Values.redis.url) -}}
{{- include "pmm.checkedRedisUrl" (dict "name" "redis.url" "url" $url) -}}
{{- end -}}

{{/* The records' Redis, `redis.recordsUrl` (REDIS_RECORDS_URL), or nothing: redis.url holds them too. */}}
{{- define "pmm.redisRecordsUrl" -}}
{{- with .Values.redis.recordsUrl -}}
{{- include "pmm.checkedRedisUrl" (dict "name" "redis.recordsUrl" "url" .) -}}
{{- end -}}
{{- end -}}

{{/*
The key of redis.existingSecret holding the sentinels' own password (redis.sentinelPasswordKey),
or nothing: only when redis.url or redis.recordsUrl is a Sentinel one, and a sentinel user needs it.
*/}}
{{- define "pmm.sentinelPasswordKey" -}}
{{- $key := .Values.redis.sentinelPasswordKey | default "" -}}
{{- $sentinel := or (regexMatch "^rediss?-sentinel://" .Values.redis.url) (regexMatch "^rediss?-sentinel://" (.Values.redis.recordsUrl | default "")) -}}
{{- if and $key (not $sentinel) -}}
{{- fail "redis.sentinelPasswordKey is for a Sentinel redis.url or redis.recordsUrl (redis-sentinel:// or rediss-sentinel://)" -}}
{{- end -}}
{{- if and .Values.redis.sentinelUsername (not $key) -}}
{{- fail "redis.sentinelUsername needs redis.sentinelPasswordKey" -}}
{{- end -}}
{{- $key -}}
{{- end -}}

{{/*
How a process reaches Redis: the shared URL (and the records' one, when set), its role's ACL user
(redis-acl.ts redisStackUsers' names: gateway, signer, indexer-<chain id>, ledger-<chain id>,
operator, risk) and that user's password as the file the redis volume mounts, the same user and
password on both servers: (dict "ctx" $ "user" "gateway").
*/}}
{{- define "pmm.redisEnv" -}}
- name: REDIS_URL
  value: {{ include "pmm.redisUrl" .ctx | quote }}
{{- with include "pmm.redisRecordsUrl" .ctx }}
- name: REDIS_RECORDS_URL
  value: {{ . | quote }}
{{- end }}
- name: REDIS_USERNAME
  value: {{ .user | quote }}
- name: REDIS_PASSWORD_FILE
  value: /run/secrets/redis/password
{{- if include "pmm.sentinelPasswordKey" .ctx }}
- name: REDIS_SENTINEL_PASSWORD_FILE
  value: /run/secrets/redis/sentinel-password
{{- with .ctx.Values.redis.sentinelUsername }}
- name: REDIS_SENTINEL_USERNAME
  value: {{ . | quote }}
{{- end }}
{{- end }}
- name: REDIS_KEY_PREFIX
  value: {{ .ctx.Values.redis.keyPrefix | quote }}
{{- end -}}

{{/* Environment every service process shares: (dict "ctx" $ "user" "gateway"), the user as in pmm.redisEnv. */}}
{{- define "pmm.commonEnv" -}}
{{ include "pmm.redisEnv" . }}
- name: LOG_LEVEL
  value: {{ .ctx.Values.logLevel | quote }}
- name: CONFIG_FILE
  value: /config/chains.json
- name: SECRETS_DIR
  value: /run/secrets/pmm
{{- end -}}

{{/*
The environment of one chain's ledger, built here and nowhere else (a setting of the ledger is
added here once): its Redis user ledger-<id>, the chains file, its chain and operator port, then
the `env` given, in name order (ledger.env with ledger.chains.<id>.env over it):
(dict "ctx" $ "chainId" "8453" "env" <the merged map>).
*/}}
{{- define "pmm.ledgerEnv" -}}
{{ include "pmm.redisEnv" (dict "ctx" .ctx "user" (printf "ledger-%s" .chainId)) }}
- name: LOG_LEVEL
  value: {{ .ctx.Values.logLevel | quote }}
- name: CONFIG_FILE
  value: /config/chains.json
- name: CHAIN_ID
  value: {{ .chainId | quote }}
- name: HOST
  value: 0.0.0.0
- name: PORT
  value: '8095'
{{ include "pmm.durabilityEnv" .ctx }}
{{- with .env }}
{{ include "pmm.extraEnv" . | trim }}
{{- end }}
{{- end -}}

{{/*
The environment of the risk command's pod: its Redis user `risk`, and the signer's durability
rule, which a halt is confirmed under (docs/operations/halts.md#halts), then risk.env in name order.
*/}}
{{- define "pmm.riskEnv" -}}
{{ include "pmm.redisEnv" (dict "ctx" . "user" "risk") }}
{{ include "pmm.durabilityEnv" . }}
{{- with .Values.risk.env }}
{{ include "pmm.extraEnv" . | trim }}
{{- end }}
{{- end -}}

{{/*
The durability rule of the writes that are the service's own records (the signer's audit
records, a halt by the risk command or by a ledger's limit): redis.durability and
redis.durableReplicas (docs/operations/redis.md#durable-writes), applied to the records' server
(redis.recordsUrl, else redis.url).
*/}}
{{- define "pmm.durabilityEnv" -}}
- name: REDIS_DURABILITY
  value: {{ .Values.redis.durability | quote }}
- name: REDIS_DURABLE_REPLICAS
  value: {{ .Values.redis.durableReplicas | quote }}
{{- end -}}

{{/* Further settings from a part's `env` map, in name order. */}}
{{- define "pmm.extraEnv" -}}
{{- range $name := keys . | sortAlpha }}
- name: {{ $name }}
  value: {{ index $ $name | toString | quote }}
{{- end }}
{{- end -}}

{{/* Mounts every service container has: the chains file, its secrets, its Redis password, a scratch /tmp. */}}
{{- define "pmm.serviceMounts" -}}
- name: chains
  mountPath: /config
  readOnly: true
- name: secrets
  mountPath: /run/secrets/pmm
  readOnly: true
{{ include "pmm.redisMount" . }}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{- define "pmm.redisMount" -}}
- name: redis
  mountPath: /run/secrets/redis
  readOnly: true
{{- end -}}

{{/*
The Redis password of one user, the key `<user>-password` of redis.existingSecret, as the file
`password` (REDIS_PASSWORD_FILE), and the sentinels' own password, when they have one, as the file
`sentinel-password` (REDIS_SENTINEL_PASSWORD_FILE): (dict "ctx" $ "user" "gateway").
*/}}
{{- define "pmm.redisVolume" -}}
- name: redis
  secret:
    secretName: {{ include "pmm.required" (dict "name" "redis.existingSecret" "value" .ctx.Values.redis.existingSecret) }}
    items:
      - key: {{ .user }}-password
        path: password
      {{- with include "pmm.sentinelPasswordKey" .ctx }}
      - key: {{ . }}
        path: sentinel-password
      {{- end }}
    defaultMode: 288
{{- end -}}

{{/* The volumes behind those mounts: (dict "ctx" $ "secretName" … "user" …), the user as in pmm.redisEnv. */}}
{{- define "pmm.serviceVolumes" -}}
- name: chains
  configMap:
    name: {{ include "pmm.fullname" .ctx }}-chains
- name: secrets
  secret:
    secretName: {{ .secretName }}
    # 0440 (written in decimal: YAML 1.1 and 1.2 read a leading 0 differently): read by the node
    # user through the pod's fsGroup; nobody else.
    defaultMode: 288
{{ include "pmm.redisVolume" . }}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- end -}}

{{- define "pmm.preStop" -}}
lifecycle:
  preStop:
    sleep:
      seconds: {{ .Values.shutdown.preStopSeconds }}
{{- end -}}

{{/*
A NetworkPolicy peer of the label selectors of a value (namespaceSelector and podSelector), as a
YAML list: one peer, or none when both are empty; one without the other is refused, an empty
namespaceSelector matching every namespace and an empty podSelector every pod of them:
(dict "name" "networkPolicy.prometheus" "selectors" .Values.networkPolicy.prometheus).
*/}}
{{- define "pmm.selectorPeers" -}}
{{- $selectors := .selectors | default dict -}}
{{- $ns := $selectors.namespaceSelector | default dict -}}
{{- $pods := $selectors.podSelector | default dict -}}
{{- $nsSet := or $ns.matchLabels $ns.matchExpressions -}}
{{- $podsSet := or $pods.matchLabels $pods.matchExpressions -}}
{{- if and $nsSet $podsSet -}}
{{- list (dict "namespaceSelector" $ns "podSelector" $pods) | toYaml -}}
{{- else if or $nsSet $podsSet -}}
{{- fail (printf "%s needs both namespaceSelector and podSelector: an empty namespaceSelector matches every namespace, an empty podSelector every pod of them" .name) -}}
{{- else -}}
[]
{{- end -}}
{{- end -}}

{{/* The rule of an operator port, as a YAML list: none when no peer may reach it: (dict "peers" … "port" "ops"). */}}
{{- define "pmm.operatorRules" -}}
{{- if .peers -}}
{{- list (dict "from" .peers "ports" (list (dict "port" .port "protocol" "TCP"))) | toYaml -}}
{{- else -}}
[]
{{- end -}}
{{- end -}}

{{/* The NetworkPolicy of one part's pods, admitting what its rules list: (dict "ctx" $ "component" "gateway" "rules" …). */}}
{{- define "pmm.networkPolicy" }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "pmm.fullname" .ctx }}-{{ .component }}
  labels:
    {{- include "pmm.labels" .ctx | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  podSelector:
    matchLabels:
      {{- include "pmm.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress]
  ingress:
    {{- toYaml .rules | nindent 4 }}
{{- end -}}
