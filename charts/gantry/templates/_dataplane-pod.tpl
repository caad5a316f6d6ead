{{/*
The data plane's pod template, shared by its Deployment and (with journal.persistence) its
StatefulSet.
*/}}
{{- define "gantry.dataplanePod" -}}
metadata:
  # No config checksum annotation on purpose: a changed ConfigMap (standalone) or snapshot
  # Secret (operator) is picked up live by the data plane, not by restarting the pods.
  {{- with .Values.podAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  labels:
    {{- include "gantry.selectorLabels" . | nindent 4 }}
spec:
  serviceAccountName: {{ include "gantry.serviceAccountName" . }}
  # Standalone pods never call the API, so they get no token to leak.
  automountServiceAccountToken: {{ include "gantry.operatorMode" . | eq "true" }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  # No preStop hook: on SIGTERM the data plane fails /readyz at once and keeps serving for
  # shutdown.preStopSeconds, drains for shutdown.drainSeconds, then replays charges still
  # journaled from a Redis outage for shutdown.journalDrainSeconds, all within this period.
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  {{- with .Values.podSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: dataplane
      image: {{ include "gantry.image" . | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      workingDir: {{ .Values.image.workingDir }}
      command: ["node", "--enable-source-maps", "--max-semi-space-size=4", "--no-allocation-site-pretenuring", "dataplane/dist/gantry.mjs"]
      args:
        {{- if include "gantry.operatorMode" . }}
        - --snapshot-secret
        - {{ printf "%s/%s" .Release.Namespace .Values.operator.snapshotSecret | quote }}
        {{- else }}
        - --config
        - /etc/gantry/gantry.yaml
        {{- end }}
        - --fake-provider
        - {{ .Values.fakeProvider | quote }}
      ports:
        - name: http
          containerPort: 8080
          protocol: TCP
        - name: admin
          containerPort: 9090
          protocol: TCP
      env:
        - name: NODE_ENV
          value: production
        - name: GANTRY_PRE_STOP_MS
          value: {{ mul .Values.shutdown.preStopSeconds 1000 | quote }}
        - name: GANTRY_DRAIN_TIMEOUT_MS
          value: {{ mul .Values.shutdown.drainSeconds 1000 | quote }}
        - name: GANTRY_JOURNAL_DRAIN_MS
          value: {{ mul .Values.shutdown.journalDrainSeconds 1000 | quote }}
        {{- if .Values.journal.persistence.enabled }}
        # The pod's own volume (volumeClaimTemplates): a restarted or rescheduled pod replays
        # what its predecessor of the same ordinal left.
        - name: GANTRY_JOURNAL_DIR
          value: {{ include "gantry.journalDir" . | quote }}
        {{- end }}
        {{- if include "gantry.operatorMode" . }}
        # Published ModelDeployments' apiKeyEnv may name only these (the rest of this env,
        # GANTRY_* and KUBERNETES_* included, is never sent upstream).
        - name: GANTRY_PROVIDER_ENV
          value: {{ join "," .Values.providerEnv | quote }}
        {{- end }}
        {{- include "gantry.redisEnv" . | nindent 8 }}
        {{- with .Values.milvus.address }}
        - name: GANTRY_MILVUS_ADDRESS
          value: {{ . | quote }}
        {{- end }}
        {{- if .Values.adminKey.existingSecret }}
        - name: GANTRY_ADMIN_KEY
          valueFrom:
            secretKeyRef:
              name: {{ .Values.adminKey.existingSecret }}
              key: {{ .Values.adminKey.secretKey }}
        {{- end }}
        {{- if .Values.compactionSecret.existingSecret }}
        - name: GANTRY_COMPACTION_SECRET
          valueFrom:
            secretKeyRef:
              name: {{ .Values.compactionSecret.existingSecret }}
              key: {{ .Values.compactionSecret.secretKey }}
        {{- end }}
        {{- with .Values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with .Values.providerSecrets }}
      envFrom:
        {{- range . }}
        - secretRef:
            name: {{ . }}
        {{- end }}
      {{- end }}
      livenessProbe:
        httpGet:
          path: /healthz
          port: admin
        periodSeconds: 10
        failureThreshold: 3
      # In operator mode a pod is ready once the operator's first snapshot has loaded.
      readinessProbe:
        httpGet:
          path: /readyz
          port: admin
        periodSeconds: 5
        failureThreshold: 2
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      {{- with .Values.securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        {{- if not (include "gantry.operatorMode" .) }}
        # The whole directory, never a subPath: only directory mounts receive the
        # kubelet's atomic updates that trigger the hot reload.
        - name: config
          mountPath: /etc/gantry
          readOnly: true
        {{- end }}
        # A writable temp dir on a read-only root filesystem. Without journal.persistence it is
        # also the settlement journal's home: kept across container restarts, lost with the pod.
        - name: tmp
          mountPath: /tmp
        {{- if .Values.journal.persistence.enabled }}
        - name: journal
          mountPath: {{ include "gantry.journalDir" . }}
        {{- end }}
  volumes:
    {{- if not (include "gantry.operatorMode" .) }}
    - name: config
      configMap:
        name: {{ include "gantry.fullname" . }}
    {{- end }}
    - name: tmp
      emptyDir:
        sizeLimit: 256Mi
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}

{{/* The headless Service governing the StatefulSet (journal.persistence). */}}
{{- define "gantry.journalServiceName" -}}
{{- printf "%s-pods" (include "gantry.fullname" . | trunc 58 | trimSuffix "-") }}
{{- end }}

{{/* Where the settlement journal's volume is mounted (journal.persistence). */}}
{{- define "gantry.journalDir" -}}
/var/lib/gantry/journal
{{- end }}
