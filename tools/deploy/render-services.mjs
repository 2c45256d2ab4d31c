#!/usr/bin/env node
// Writes the Kubernetes objects the four services share in shape (Deployment with its migrate
// init container, Service, ServiceAccount, PodDisruptionBudget, HorizontalPodAutoscaler) into
// deploy/k8s/base/<service>/ from the one template below, so a change to how a service runs is
// made once. What differs per service is in SERVICES. The ConfigMaps and NetworkPolicies differ
// in substance and stay hand-written; the gateway has its own. `--check` fails when a committed
// file differs from what this writes (deploy/validation runs it).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeOrCheck } from '../generated-file.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const GRPC_PORT = 50051;

/** Liveness and readiness over HTTP (/healthz, /readyz) or, for a gRPC server, grpc.health.v1. */
function probes(kind, grpcService) {
  const check = (httpPath, service) =>
    kind === 'grpc'
      ? `          grpc:\n            port: ${GRPC_PORT}\n${service ? `            service: ${service}\n` : ''}`
      : `          httpGet:\n            path: ${httpPath}\n            port: http\n`;
  return [
    `        startupProbe:\n${check('/healthz')}          periodSeconds: 2\n          failureThreshold: 30\n`,
    `        livenessProbe:\n${check('/healthz')}          periodSeconds: 10\n          failureThreshold: 3\n`,
    `        readinessProbe:\n${check('/readyz', grpcService)}          periodSeconds: 5\n          failureThreshold: 2\n`,
  ].join('');
}

/** A variable read from a Secret key. */
const secretEnv = (name, secret, key) => `        - name: ${name}\n          valueFrom:\n            secretKeyRef:\n              name: ${secret}\n              key: ${key}\n`;

/**
 * Seconds from SIGTERM to SIGKILL: the readiness drain (SHUTDOWN_DRAIN_MS, 5 s) and in-flight
 * requests (SHUTDOWN_TIMEOUT_MS, 10 s), then the resources close, plus a margin. users-service's
 * webhook dispatcher closes after the listeners and waits for the attempts it started until then,
 * each up to 15 s (DELIVERY_TIMEOUT_MS): killed before, an attempt's outcome is lost and the
 * receiver gets it again once its lease runs out.
 */
const TERMINATION_GRACE_S = 20;

const SERVICES = [
  // deprecations: reads the deprecation registry (DEPRECATIONS_FILE): mounted from a ConfigMap, below.
  { name: 'users-service', port: 3001, deprecations: true, terminationGracePeriodSeconds: 35, extraEnv: secretEnv('ADMIN_EMAIL', 'platform-admin', 'email') + secretEnv('ADMIN_PASSWORD', 'platform-admin', 'password') + secretEnv('REDIS_URL', 'platform-redis', 'url') + secretEnv('API_KEY_HASH_SECRET', 'platform-api-keys', 'secret') },
  { name: 'orders-service', port: 3002 },
  { name: 'catalog-service', port: 3003 },
  // Probed over gRPC: the port clients depend on is the gRPC one.
  // REDIS_URL: the usage store it records each calling service's RPCs into, shared with the gateway (libs/usage).
  { name: 'inventory-service', port: 3004, grpc: true, deprecations: true, probes: probes('grpc', 'inventory.v1.Inventory'), extraEnv: secretEnv('REDIS_URL', 'platform-redis', 'url') },
];

/** Every container of a service pod, the migrate init container too: no root, no privilege, a read-only root with /tmp. */
const containerHardening = `        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          runAsNonRoot: true
          runAsUser: 1000
          runAsGroup: 1000
          capabilities:
            drop:
            - ALL
          seccompProfile:
            type: RuntimeDefault
        volumeMounts:
        - name: tmp
          mountPath: /tmp
`;

/**
 * The name gRPC callers resolve (`dns:///<name>-grpc:50051`): headless, so DNS answers every ready
 * pod's address and the client balances each call over them (round_robin). Through the ClusterIP
 * Service a caller would hold one HTTP/2 connection to one pod, and every call of that replica
 * would go there.
 */
const grpcHeadlessService = (name) => `---
apiVersion: v1
kind: Service
metadata:
  name: ${name}-grpc
  labels:
    app.kubernetes.io/name: ${name}
    app.kubernetes.io/part-of: order-platform
spec:
  clusterIP: None
  selector:
    app.kubernetes.io/name: ${name}
  ports:
  - name: grpc
    port: ${GRPC_PORT}
    targetPort: grpc
`;

const templates = {
  'deployment.yaml': ({ name, port, extraEnv, grpcPort, probes, terminationGracePeriodSeconds, deprecationsMount, deprecationsVolume }) => `# ${name}: deployment. Written by tools/deploy/render-services.mjs: change the template there.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/name: ${name}
    app.kubernetes.io/part-of: order-platform
spec:
  replicas: 1
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      app.kubernetes.io/name: ${name}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 0
      maxSurge: 1
  template:
    metadata:
      labels:
        app.kubernetes.io/name: ${name}
        app.kubernetes.io/part-of: order-platform
    spec:
      serviceAccountName: ${name}
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: ${terminationGracePeriodSeconds}
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        runAsGroup: 1000
        fsGroup: 1000
        seccompProfile:
          type: RuntimeDefault
      # Every pod of every rollout first applies the migrations its image ships (docs/operations.md,
      # "Migrations"): under PostgreSQL's advisory lock, so pods starting together take turns, and
      # a no-op once applied. The app container starts only after it succeeds, and itself refuses
      # a schema missing a migration it ships.
      initContainers:
      - name: migrate
        image: ghcr.io/example/order-platform/${name}:0.1.0
        imagePullPolicy: IfNotPresent
        args:
        - node
        - main.js
        - migrate
        envFrom:
        - configMapRef:
            name: ${name}-config
        env:
        - name: JWT_SECRET
          valueFrom:
            secretKeyRef:
              name: platform-jwt
              key: secret
        - name: DATABASE_URL
          valueFrom:
            secretKeyRef:
              name: ${name}-database
              key: url
        resources:
          requests:
            cpu: 100m
            memory: 320Mi
          limits:
            memory: 640Mi
${containerHardening}${deprecationsMount}      containers:
      - name: ${name}
        image: ghcr.io/example/order-platform/${name}:0.1.0
        imagePullPolicy: IfNotPresent
        ports:
        - name: http
          containerPort: ${port}
${grpcPort}        envFrom:
        - configMapRef:
            name: ${name}-config
        env:
        - name: JWT_SECRET
          valueFrom:
            secretKeyRef:
              name: platform-jwt
              key: secret
        - name: JWT_PREVIOUS_SECRET
          valueFrom:
            secretKeyRef:
              name: platform-jwt
              key: previous
              optional: true
        - name: DATABASE_URL
          valueFrom:
            secretKeyRef:
              name: ${name}-database
              key: url
${extraEnv}        resources:
          requests:
            cpu: 100m
            memory: 320Mi
          limits:
            memory: 640Mi
${probes}${containerHardening}${deprecationsMount}      volumes:
      - name: tmp
        emptyDir:
          sizeLimit: 64Mi
${deprecationsVolume}`,
  'service.yaml': ({ name, port, grpcServicePort, grpcHeadlessService }) => `# ${name}: service. Written by tools/deploy/render-services.mjs: change the template there.
apiVersion: v1
kind: Service
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/name: ${name}
    app.kubernetes.io/part-of: order-platform
spec:
  selector:
    app.kubernetes.io/name: ${name}
  ports:
  - name: http
    port: ${port}
    targetPort: http
${grpcServicePort}${grpcHeadlessService}`,
  'serviceaccount.yaml': ({ name }) => `# ${name}: serviceaccount. Written by tools/deploy/render-services.mjs: change the template there.
apiVersion: v1
kind: ServiceAccount
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/name: ${name}
    app.kubernetes.io/part-of: order-platform
automountServiceAccountToken: false
`,
  'pdb.yaml': ({ name }) => `# ${name}: pdb. Written by tools/deploy/render-services.mjs: change the template there.
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/name: ${name}
    app.kubernetes.io/part-of: order-platform
spec:
  maxUnavailable: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: ${name}
`,
  'hpa.yaml': ({ name }) => `# ${name}: hpa. Written by tools/deploy/render-services.mjs: change the template there.
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/name: ${name}
    app.kubernetes.io/part-of: order-platform
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: ${name}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: 70
`,
};

for (const service of SERVICES) {
  const values = {
    name: service.name,
    port: service.port,
    extraEnv: service.extraEnv ?? '',
    grpcPort: service.grpc ? `        - name: grpc\n          containerPort: ${GRPC_PORT}\n` : '',
    grpcServicePort: service.grpc ? `  - name: grpc\n    port: ${GRPC_PORT}\n    targetPort: grpc\n` : '',
    grpcHeadlessService: service.grpc ? grpcHeadlessService(service.name) : '',
    probes: service.probes ?? probes('http'),
    terminationGracePeriodSeconds: service.terminationGracePeriodSeconds ?? TERMINATION_GRACE_S,
    // After /tmp (containerHardening ends the list with it), in both containers: the migrate one
    // loads the same configuration, which reads the file DEPRECATIONS_FILE names.
    deprecationsMount: service.deprecations ? `        - name: deprecations\n          mountPath: /etc/${service.name}/deprecations\n          readOnly: true\n` : '',
    deprecationsVolume: service.deprecations ? `      - name: deprecations\n        configMap:\n          name: ${service.name}-deprecations\n` : '',
  };
  for (const [file, render] of Object.entries(templates)) {
    writeOrCheck(root, path.join(root, 'deploy/k8s/base', service.name, file), render(values), 'node tools/deploy/render-services.mjs');
  }
}

// The deprecation registry as a ConfigMap of each app that reads it (configMapGenerator in its
// kustomization, so a changed registry rolls its pods): the gateway (REST and GraphQL elements),
// inventory (RPCs and proto fields) and users (webhook payload fields). A brownout scheduled in
// contracts/deprecations.yaml reaches production with the manifests, no new image needed.
// kustomize reads files only below the kustomization, hence a copy in each app's folder.
for (const app of ['gateway', ...SERVICES.filter((service) => service.deprecations).map((service) => service.name)]) {
  writeOrCheck(
    root,
    path.join(root, `deploy/k8s/base/${app}/deprecations.yaml`),
    `# Generated by node tools/deploy/render-services.mjs from contracts/deprecations.yaml: do not edit.\n${readFileSync(path.join(root, 'contracts/deprecations.yaml'), 'utf8')}`,
    'node tools/deploy/render-services.mjs',
  );
}
