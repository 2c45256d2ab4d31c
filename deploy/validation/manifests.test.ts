// Both overlays render, every object matches the Kubernetes schemas, and our policy holds; a
// deliberately broken copy proves the policy check can fail.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { eventServices, eventSubscriptions, type EventService, natsAuthorizationConf, PARTITIONS } from '@platform/events';
import { parse } from 'yaml';
import { policyViolations } from './policy';
import { blockedDependencies, dependenciesOf, SECRET_ADDRESSES, unusedAppRules } from './reachability';
import { deployDir, type K8sObject, renderOverlay, schemaErrors } from './render';

const overlays = ['dev', 'prod'] as const;
const rendered = Object.fromEntries(overlays.map((overlay) => [overlay, renderOverlay(overlay)])) as Record<(typeof overlays)[number], K8sObject[]>;
// Tests reach into arbitrary object shapes; the schema check above is what types them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const find = (objects: K8sObject[], kind: string, name: string): any => objects.find((object) => object.kind === kind && object.metadata.name === name);
const apps = ['gateway', 'users-service', 'orders-service', 'catalog-service', 'inventory-service'];

describe.each(overlays)('the %s overlay', (overlay) => {
  const objects = rendered[overlay];
  /** The NetworkPolicies that select an app's pods (its own, and in dev its event feed's). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const policiesOf = (app: string): any[] => objects.filter((object: any) => object.kind === 'NetworkPolicy' && object.spec.podSelector?.matchLabels?.['app.kubernetes.io/name'] === app);

  it('renders every app with its Deployment, Service, ServiceAccount, ConfigMap and NetworkPolicy', () => {
    for (const app of apps) {
      for (const kind of ['Deployment', 'Service', 'ServiceAccount', 'NetworkPolicy']) expect(find(objects, kind, app)).toBeDefined();
      expect(find(objects, 'ConfigMap', `${app}-config`)).toBeDefined();
    }
    expect(objects.every((object) => object.kind === 'Namespace' || object.metadata.namespace === 'order-platform')).toBe(true);
  });

  it('matches the Kubernetes schemas', () => {
    expect(schemaErrors(objects)).toEqual([]);
  });

  it('meets our policy: restricted pods, probes, resources, pinned images, a NetworkPolicy per Service, no Secret values', () => {
    expect(policyViolations(objects)).toEqual([]);
  });

  it('disables Apollo telemetry in every app (the gateway federates, the four services are Apollo subgraphs) and migrates before every service pod serves, in an init container of the same image', () => {
    for (const app of apps) expect([app, (find(objects, 'ConfigMap', `${app}-config`) as { data: Record<string, string> }).data.APOLLO_TELEMETRY_DISABLED]).toEqual([app, 'true']);
    for (const app of apps.filter((name) => name !== 'gateway')) {
      const pod = find(objects, 'Deployment', app).spec.template.spec as { initContainers: { name: string; image: string; args: string[]; env: { name: string; valueFrom?: unknown }[] }[]; containers: { image: string }[] };
      expect(pod.initContainers.map((container) => [container.name, container.args])).toEqual([['migrate', ['node', 'main.js', 'migrate']]]);
      expect(pod.initContainers[0].image).toBe(pod.containers[0].image);
      expect(pod.initContainers[0].env.find((variable) => variable.name === 'DATABASE_URL')).toEqual({ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: `${app}-database`, key: 'url' } } });
    }
    // Migrations are never a Job; prod's one Job sets up the event stream (below).
    expect(objects.filter((object) => object.kind === 'Job').map((job) => job.metadata.name)).toEqual(overlay === 'prod' ? ['events-stream'] : []);
  });

  it('gives every app that reads the deprecation registry the one of contracts/deprecations.yaml, mounted where DEPRECATIONS_FILE points, in every container', () => {
    // The apps whose configuration reads DEPRECATIONS_FILE: a brownout of their elements must reach them with the manifests.
    const readers = apps.filter((app) => readFileSync(path.join(deployDir, `../apps/${app}/src/config.ts`), 'utf8').includes('DEPRECATIONS_FILE'));
    expect(readers).toEqual(['gateway', 'users-service', 'inventory-service']);
    for (const app of readers) {
      const pod = find(objects, 'Deployment', app).spec.template.spec;
      const volume = pod.volumes.find((candidate: { name: string }) => candidate.name === 'deprecations');
      expect([app, volume?.configMap.name]).toEqual([app, expect.stringMatching(new RegExp(`^${app}-deprecations-[a-z0-9]+$`))]);
      const registry = find(objects, 'ConfigMap', volume.configMap.name) as { data: Record<string, string> };
      expect(registry.data['deprecations.yaml']).toContain(readFileSync(path.join(deployDir, '../contracts/deprecations.yaml'), 'utf8'));
      // The migrate init container loads the same configuration, which reads the file too.
      for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
        const mount = container.volumeMounts.find((candidate: { name: string }) => candidate.name === 'deprecations');
        expect([app, container.name, mount && `${mount.mountPath}/deprecations.yaml`]).toEqual([app, container.name, find(objects, 'ConfigMap', `${app}-config`).data.DEPRECATIONS_FILE]);
      }
    }
  });

  it('terminates TLS at the Ingress with a certificate Secret cert-manager keeps, and redirects plain HTTP', () => {
    const ingress = find(objects, 'Ingress', 'gateway');
    expect(ingress.spec.tls).toEqual([{ hosts: ingress.spec.rules.map((rule: { host: string }) => rule.host), secretName: 'gateway-tls' }]);
    expect(ingress.metadata.annotations).toMatchObject({ 'cert-manager.io/cluster-issuer': expect.any(String), 'nginx.ingress.kubernetes.io/force-ssl-redirect': 'true' });
  });

  it('gives each pod the time its stop takes before the kubelet kills it: the drain, in-flight requests, for users-service a webhook attempt under way, and 5 s', () => {
    // users-service closes its webhook dispatcher after its listeners, and waits for the attempts
    // it started meanwhile: one may take DELIVERY_TIMEOUT_MS (15 s, apps/users-service/src/webhooks/retry-schedule.ts).
    const afterListenersS: Record<string, number> = { 'users-service': 15 };
    for (const app of apps) {
      const settings = find(objects, 'ConfigMap', `${app}-config`).data as Record<string, string>;
      const stopS = (Number(settings.SHUTDOWN_DRAIN_MS) + Number(settings.SHUTDOWN_TIMEOUT_MS)) / 1000 + (afterListenersS[app] ?? 0) + 5;
      const grace = find(objects, 'Deployment', app).spec.template.spec.terminationGracePeriodSeconds as number;
      expect({ app, enough: grace >= stopS }).toEqual({ app, enough: true });
    }
  });

  it("lets bodies a little over the gateway's 1 MiB limit through the Ingress, so the gateway refuses them in the error format", () => {
    expect(find(objects, 'Ingress', 'gateway').metadata.annotations['nginx.ingress.kubernetes.io/proxy-body-size']).toBe('2m');
  });

  it("holds each client address to the gateway's per-address connection limit at the Ingress, where the gateway sees only the controller's addresses", () => {
    const settings = find(objects, 'ConfigMap', 'gateway-config').data as Record<string, string>;
    expect(settings.MAX_CONNECTIONS_PER_ADDRESS).toMatch(/^[1-9]\d*$/);
    expect(find(objects, 'Ingress', 'gateway').metadata.annotations['nginx.ingress.kubernetes.io/limit-connections']).toBe(settings.MAX_CONNECTIONS_PER_ADDRESS);
  });

  it("spreads orders' gRPC calls over every inventory pod: its address is a headless Service (a DNS answer per pod) of inventory's gRPC port", () => {
    const address = find(objects, 'ConfigMap', 'orders-service-config').data.INVENTORY_ADDRESS as string;
    const [, name, port] = /^dns:\/\/\/([a-z0-9-]+):(\d+)$/.exec(address) ?? [];
    const service = find(objects, 'Service', name);
    expect(service.spec.clusterIP).toBe('None');
    expect(service.spec.selector).toEqual(find(objects, 'Deployment', 'inventory-service').spec.selector.matchLabels);
    expect(service.spec.ports).toEqual([{ name: 'grpc', port: Number(port), targetPort: 'grpc' }]);
  });

  it('lets every app reach each server its environment points at: an egress rule of its own, and the ingress of a target that has a policy', () => {
    expect(blockedDependencies(objects)).toEqual([]);
    // What was checked: each app's addresses, as its variables name them.
    const checked = (app: string) => dependenciesOf(objects, find(objects, 'Deployment', app)).map((dependency) => `${dependency.variable} ${dependency.address}`).sort();
    const collector = 'OTEL_EXPORTER_OTLP_ENDPOINT otel-collector.monitoring:4318';
    const broker = overlay === 'prod' ? ['NATS_URL nats:4222'] : [];
    // The embedded event transport's producers (each service's /internal/events), in dev only: prod's services read events from the broker.
    const feeds = (...addresses: string[]) => (overlay === 'dev' ? addresses : []);
    expect(checked('gateway')).toEqual(['CATALOG_URL catalog-service:3003', 'INVENTORY_URL inventory-service:3004', 'ORDERS_URL orders-service:3002', collector, 'REDIS_URL redis:6379', 'USERS_URL users-service:3001']);
    expect(checked('users-service')).toEqual([...feeds('CATALOG_URL catalog-service:3003'), 'DATABASE_URL postgres:5432', ...feeds('INVENTORY_URL inventory-service:3004'), ...broker, ...feeds('ORDERS_URL orders-service:3002'), collector, 'REDIS_URL redis:6379']);
    expect(checked('orders-service')).toEqual(['CATALOG_URL catalog-service:3003', 'DATABASE_URL postgres:5432', 'INVENTORY_ADDRESS inventory-service-grpc:50051', ...broker, collector, ...feeds('USERS_URL users-service:3001')]);
    expect(checked('catalog-service')).toEqual(['DATABASE_URL postgres:5432', ...broker, collector, ...feeds('USERS_URL users-service:3001')]);
    expect(checked('inventory-service')).toEqual(['DATABASE_URL postgres:5432', ...broker, collector, 'REDIS_URL redis:6379']);
    // prod's events-stream Job reaches the broker, and nothing else.
    if (overlay === 'prod') expect(dependenciesOf(objects, find(objects, 'Job', 'events-stream')).map((dependency) => `${dependency.variable} ${dependency.address}`)).toEqual(broker);
    // Where PostgreSQL and Redis are: dev's pods, prod's servers outside the cluster.
    const redis = dependenciesOf(objects, find(objects, 'Deployment', 'inventory-service')).find((dependency) => dependency.variable === 'REDIS_URL');
    expect(redis?.targets).toEqual([overlay === 'dev' ? expect.objectContaining({ pods: true, labels: { 'app.kubernetes.io/name': 'redis' }, port: 6379 }) : expect.objectContaining({ pods: false, port: 6379 })]);
  });

  it('opens no path between the apps that no app uses: every rule naming an app is used by an address in some app\'s settings', () => {
    expect(unusedAppRules(objects)).toEqual([]);
  });

  it('lets each app reach only DNS, its database, Redis, the services it calls and the trace collector', () => {
    // Every policy that selects the app's pods adds to what it may reach.
    const egressOf = (app: string) =>
      (policiesOf(app).flatMap((policy) => policy.spec.egress ?? []) as { to: Record<string, unknown>[]; ports: { port: number; protocol: string }[] }[]).flatMap((rule) =>
        rule.ports.map((port) => `${port.port}/${port.protocol} ${rule.to.map((to) => [to.namespaceSelector, to.podSelector, to.ipBlock].filter(Boolean).map((part) => JSON.stringify(part)).join('+')).join(' ')}`),
      );
    const dns = ['53/UDP', '53/TCP'].map((port) => `${port} ${JSON.stringify({ matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } })}+${JSON.stringify({ matchLabels: { 'k8s-app': 'kube-dns' } })}`);
    const pod = (app: string) => JSON.stringify({ matchLabels: { 'app.kubernetes.io/name': app } });
    const outside = (app: string) => `${pod(app)} ${JSON.stringify({ cidr: '0.0.0.0/0', except: ['169.254.0.0/16'] })}`;
    const collector = `4318/TCP ${JSON.stringify({ matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } })}`;
    expect(egressOf('gateway')).toEqual([...dns, `3001/TCP ${pod('users-service')}`, `3002/TCP ${pod('orders-service')}`, `3003/TCP ${pod('catalog-service')}`, `3004/TCP ${pod('inventory-service')}`, `6379/TCP ${outside('redis')}`, collector]);
    // In dev, orders and catalog also read users-service's events (the embedded event transport,
    // its own policy); in prod every service reaches the broker instead (NATS JetStream's client port).
    const broker = overlay === 'prod' ? [`4222/TCP ${pod('nats')}`] : [];
    const feeds = (...rules: string[]) => (overlay === 'dev' ? rules : []);
    expect(egressOf('orders-service')).toEqual([...dns, `5432/TCP ${outside('postgres')}`, `3003/TCP ${pod('catalog-service')}`, `50051/TCP ${pod('inventory-service')}`, collector, ...broker, ...feeds(`3001/TCP ${pod('users-service')}`)]);
    expect(egressOf('catalog-service')).toEqual([...dns, `5432/TCP ${outside('postgres')}`, collector, ...broker, ...feeds(`3001/TCP ${pod('users-service')}`)]);
    // inventory-service records its callers' RPCs in the usage store it shares with the gateway.
    expect(egressOf('inventory-service')).toEqual([...dns, `5432/TCP ${outside('postgres')}`, `6379/TCP ${outside('redis')}`, collector, ...broker]);
    // users-service publishes token revocations over Redis, reads every service's events for
    // webhooks, and delivers them to public addresses only.
    const publicInternet = [
      JSON.stringify({ cidr: '0.0.0.0/0', except: ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.168.0.0/16', '224.0.0.0/4', '240.0.0.0/4'] }),
      JSON.stringify({ cidr: '::/0', except: ['::1/128', 'fc00::/7', 'fe80::/10', 'ff00::/8'] }),
    ].join(' ');
    expect(egressOf('users-service')).toEqual([
      ...dns,
      `5432/TCP ${outside('postgres')}`,
      `6379/TCP ${outside('redis')}`,
      collector,
      `443/TCP ${publicInternet}`,
      `80/TCP ${publicInternet}`,
      ...broker,
      ...feeds(`3002/TCP ${pod('orders-service')}`, `3003/TCP ${pod('catalog-service')}`, `3004/TCP ${pod('inventory-service')}`),
    ]);
    // The events-stream Job (prod): the broker's client port, nothing else; nothing may reach it.
    if (overlay === 'prod') {
      expect(egressOf('events-stream')).toEqual([...dns, ...broker]);
      expect(policiesOf('events-stream').flatMap((policy) => policy.spec.ingress ?? [])).toEqual([]);
    }
    expect(find(objects, 'NetworkPolicy', 'default-deny').spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    // The API takes webhook URLs on exactly the ports the policy lets deliveries out on: a URL on
    // another would be accepted and then fail every delivery unseen.
    const internetPorts = egressOf('users-service')
      .filter((rule) => rule.endsWith(publicInternet))
      .map((rule) => Number(rule.split('/')[0]));
    expect((find(objects, 'ConfigMap', 'users-service-config') as { data: Record<string, string> }).data.WEBHOOK_ALLOWED_PORTS?.split(',').map(Number)).toEqual(internetPorts);
  });

  it('lets only the gateway be reached from outside the namespace, inventory\'s gRPC only from orders and its HTTP only from the gateway and users-service', () => {
    const policy = (name: string) => (policiesOf(name).flatMap((each) => each.spec.ingress ?? []) as { from: Record<string, unknown>[] }[]).flatMap((rule) => rule.from);
    const namespaceSources = (name: string) => policy(name).filter((from) => 'namespaceSelector' in from).map((from) => JSON.stringify(from));
    expect(namespaceSources('gateway')).toContain(JSON.stringify({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }));
    for (const app of apps.filter((name) => name !== 'gateway')) expect(namespaceSources(app).every((source) => source.includes('monitoring'))).toBe(true);
    const rules = policiesOf('inventory-service').flatMap((each) => each.spec.ingress ?? []) as { from: Record<string, unknown>[]; ports: { port: number }[] }[];
    const callersOf = (port: number) => rules.filter((rule) => rule.ports.some((entry) => entry.port === port)).flatMap((rule) => rule.from.filter((from) => 'podSelector' in from));
    expect(callersOf(50051)).toEqual([{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'orders-service' } } }]);
    // Its HTTP: stock levels for the gateway; in dev, its event log for users-service (webhooks).
    expect(callersOf(3004)).toEqual([{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gateway' } } }, ...(overlay === 'dev' ? [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'users-service' } } }] : [])]);
  });

  it("keeps the gateway's metrics port inside the cluster: no Service or Ingress carries it, only the monitoring namespace reaches it", () => {
    const service = find(objects, 'Service', 'gateway') as { spec: { ports: { port: number; targetPort: number | string }[] } };
    expect(service.spec.ports.map((port) => [port.port, port.targetPort])).toEqual([[8080, 'http']]);
    const rules = (find(objects, 'NetworkPolicy', 'gateway') as { spec: { ingress: { from: unknown[]; ports: { port: number }[] }[] } }).spec.ingress;
    const metricsRules = rules.filter((rule) => rule.ports.some((port) => port.port === 9464));
    expect(metricsRules.map((rule) => rule.from)).toEqual([[{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]]);
    for (const ingress of objects.filter((object) => object.kind === 'Ingress')) expect(JSON.stringify(ingress)).not.toMatch(/9464|metrics/);
  });
});

it('prod runs at least two replicas of everything, autoscaled and spread over nodes', () => {
  for (const app of apps) {
    const deployment = find(rendered.prod, 'Deployment', app) as { spec: { replicas?: number; template: { spec: { affinity?: { podAntiAffinity?: unknown } } } } };
    // The autoscaler owns the count: a replicas field would be reapplied by every `kubectl apply`,
    // scaling a busy Deployment down to it until the autoscaler scales it up again.
    expect({ app, replicas: deployment.spec.replicas }).toEqual({ app, replicas: undefined });
    expect(deployment.spec.template.spec.affinity?.podAntiAffinity).toBeDefined();
    expect((find(rendered.prod, 'HorizontalPodAutoscaler', app) as { spec: { minReplicas: number } }).spec.minReplicas).toBeGreaterThanOrEqual(2);
  }
});

it('users-service hashes API keys with API_KEY_HASH_SECRET from a Secret of its own, in every overlay', () => {
  for (const overlay of [rendered.dev, rendered.prod]) {
    const env = (find(overlay, 'Deployment', 'users-service') as { spec: { template: { spec: { containers: { env: { name: string; valueFrom?: unknown }[] }[] } } } }).spec.template.spec.containers[0].env;
    expect(env.find((variable) => variable.name === 'API_KEY_HASH_SECRET')).toEqual({ name: 'API_KEY_HASH_SECRET', valueFrom: { secretKeyRef: { name: 'platform-api-keys', key: 'secret' } } });
  }
});

it('prod signs list cursors with CURSOR_SECRET from a Secret in every service that pages', () => {
  for (const app of ['users-service', 'orders-service', 'catalog-service', 'inventory-service']) {
    const env = (find(rendered.prod, 'Deployment', app) as { spec: { template: { spec: { containers: { env: { name: string; valueFrom?: unknown }[] }[] } } } }).spec.template.spec.containers[0].env;
    expect(env.find((variable) => variable.name === 'CURSOR_SECRET')).toEqual({ name: 'CURSOR_SECRET', valueFrom: { secretKeyRef: { name: 'platform-cursor', key: 'secret' } } });
  }
});

describe("the runbook's commands (docs/runbook.md), against the prod overlay they are run on", () => {
  const runbook = readFileSync(path.join(deployDir, '../docs/runbook.md'), 'utf8');
  /** A `### title` section's text, up to the next heading. */
  const section = (title: string) => runbook.split(/^#{2,3} /m).find((part) => part.startsWith(`${title}\n`)) ?? '';
  const readsSecret = (deployment: K8sObject, secret: string) =>
    (deployment.spec as { template: { spec: { containers: { env?: { valueFrom?: { secretKeyRef?: { name: string } } }[] }[] } } }).template.spec.containers.some((container) => (container.env ?? []).some((variable) => variable.valueFrom?.secretKeyRef?.name === secret));

  it('rotates the cursor secret by restarting every Deployment that reads it', () => {
    const restarted = [...section('Rotate the cursor secret').matchAll(/deploy\/([a-z-]+)/g)].map((match) => match[1]).sort();
    const readers = rendered.prod.filter((object) => object.kind === 'Deployment' && readsSecret(object, 'platform-cursor')).map((object) => object.metadata.name).sort();
    expect(readers.length).toBeGreaterThan(0);
    expect(restarted).toEqual(readers);
  });

  it('lists and replays parked events of every consuming service the dead-letter command knows, each by its address variable', () => {
    const command = readFileSync(path.join(deployDir, '../tools/events/dead-letters.ts'), 'utf8');
    const consumers = [...command.matchAll(/'([a-z]+-service)': \{ env: '([A-Z_]+)'/g)].map((match) => `${match[1]} ${match[2]}`);
    expect(consumers.length).toBeGreaterThan(2);
    const procedure = section('EventsParked');
    expect(consumers.filter((consumer) => consumer.split(' ').some((word) => !procedure.includes(word)))).toEqual([]);
  });

  it('scales prod through the autoscalers, never with kubectl scale (the HPA owns the replica counts and undoes it)', () => {
    expect(rendered.prod.filter((object) => object.kind === 'HorizontalPodAutoscaler').map((object) => object.metadata.name).sort()).toEqual([...apps].sort());
    expect(runbook.match(/`(k|kubectl)\b[^`]*\bscale\b[^`]*`/g)).toBeNull(); // `k scale deploy/…`
    expect(runbook).toMatch(/`k patch hpa <service> -p '\{"spec":\{"minReplicas":<n>\}\}'`/);
  });
});

describe('prod carries events over NATS JetStream', () => {
  const services = eventServices;

  describe('sets up the EVENTS stream on every apply: the events-stream Job', () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const job = () => find(rendered.prod, 'Job', 'events-stream') as any;
    const container = () => job().spec.template.spec.containers[0];

    it("runs users-service's own image, `main.js events-stream` (libs/events applyEventsStream), as the broker's stream-admin user with its own key of Secret platform-nats and no other secret", () => {
      expect(find(rendered.dev, 'Job', 'events-stream')).toBeUndefined();
      expect(container().image).toBe(find(rendered.prod, 'Deployment', 'users-service').spec.template.spec.containers[0].image);
      expect(container().args).toEqual(['node', 'main.js', 'events-stream']);
      expect(container().env).toEqual([
        { name: 'NATS_USER', value: 'stream-admin' },
        { name: 'NATS_PASSWORD', valueFrom: { secretKeyRef: { name: 'platform-nats', key: 'stream-admin' } } },
      ]);
      expect(container().envFrom).toEqual([{ configMapRef: { name: 'events-stream-config' } }]);
      expect(readFileSync(path.join(deployDir, '../apps/users-service/src/main.ts'), 'utf8')).toMatch(/process\.argv\[2\] === 'events-stream'[\s\S]*applyEventsStream\(/);
    });

    it("applies the very stream settings the services check against: the same broker and NATS_STREAM_* values, and never only checks", () => {
      const settings = (name: string) => Object.fromEntries(Object.entries(find(rendered.prod, 'ConfigMap', name).data as Record<string, string>).filter(([key]) => key === 'NATS_URL' || (key.startsWith('NATS_STREAM_') && key !== 'NATS_STREAM_SETUP')));
      const own = settings('events-stream-config');
      expect(own).toMatchObject({ NATS_URL: 'nats://nats:4222', NATS_STREAM_REPLICAS: '3' });
      for (const service of services) expect([service, settings(`${service}-config`)]).toEqual([service, own]);
      expect(find(rendered.prod, 'ConfigMap', 'events-stream-config').data.NATS_STREAM_SETUP).toBeUndefined();
    });

    it('runs again on the next apply once finished (a Job spec cannot change), non-root as the apps do, with no service account token and its own service account', () => {
      expect(job().spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
      expect(job().spec.backoffLimit).toBeGreaterThan(0);
      const pod = job().spec.template.spec;
      const app = find(rendered.prod, 'Deployment', 'users-service').spec.template.spec;
      expect(pod.securityContext).toEqual(app.securityContext);
      expect(container().securityContext).toEqual(app.containers[0].securityContext);
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.serviceAccountName).toBe('events-stream');
      expect(find(rendered.prod, 'ServiceAccount', 'events-stream').automountServiceAccountToken).toBe(false);
    });
  });

  it('as a StatefulSet of three servers of the official image, clustered over a headless Service, on file storage on PVCs', () => {
    const nats = find(rendered.prod, 'StatefulSet', 'nats');
    expect(nats.spec.replicas).toBe(3);
    expect(nats.spec.serviceName).toBe('nats');
    expect(nats.spec.template.spec.containers[0].image).toMatch(/^docker\.io\/library\/nats:2\.10\.\d+-alpine$/);
    expect(nats.spec.volumeClaimTemplates.map((claim: { metadata: { name: string } }) => claim.metadata.name)).toEqual(['data']);
    expect(nats.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution).toHaveLength(1);
    const service = find(rendered.prod, 'Service', 'nats');
    expect(service.spec.clusterIP).toBe('None');
    expect(service.spec.ports.map((port: { port: number }) => port.port)).toEqual([4222, 6222, 8222]);
    const config = find(rendered.prod, 'ConfigMap', 'nats-config').data['nats.conf'] as string;
    expect(config).toMatch(/jetstream \{\s+store_dir: \/data\/jetstream/);
    for (const server of [0, 1, 2]) expect(config).toContain(`nats://nats-${server}.nats.order-platform.svc.cluster.local:6222`);
    expect(find(rendered.prod, 'PodDisruptionBudget', 'nats').spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': 'nats' } } });
  });

  it('lets the services and the events-stream Job reach its client port and the servers reach each other on the cluster port, nothing else in', () => {
    const policy = find(rendered.prod, 'NetworkPolicy', 'nats').spec as { ingress: { from: { podSelector?: { matchLabels: Record<string, string> }; namespaceSelector?: unknown }[]; ports: { port: number }[] }[] };
    const sources = (port: number) => policy.ingress.filter((rule) => rule.ports.some((entry) => entry.port === port)).flatMap((rule) => rule.from.map((from) => from.podSelector?.matchLabels['app.kubernetes.io/name'] ?? 'namespace'));
    expect(sources(4222)).toEqual([...services, 'events-stream']);
    expect(sources(6222)).toEqual(['nats']);
    expect(sources(8222)).toEqual(['namespace']);
  });

  it('points every service at it with a stream of three copies, bounded well within the servers\' file store; dev keeps the embedded transport', () => {
    const fileStore = /max_file_store: (\d+)Gi/.exec(find(rendered.prod, 'ConfigMap', 'nats-config').data['nats.conf'] as string);
    for (const app of services) {
      // The services only read the stream: their broker users may not create or change it (nats-permissions.ts).
      expect(find(rendered.prod, 'ConfigMap', `${app}-config`).data).toMatchObject({ NATS_URL: 'nats://nats:4222', NATS_STREAM_REPLICAS: '3', NATS_STREAM_SETUP: 'check' });
      expect(Number(find(rendered.prod, 'ConfigMap', `${app}-config`).data.NATS_STREAM_MAX_BYTES)).toBeLessThanOrEqual((Number(fileStore?.[1]) * 1024 ** 3) / 2);
      expect(find(rendered.dev, 'ConfigMap', `${app}-config`).data.NATS_URL).toBeUndefined();
    }
    expect(find(rendered.dev, 'StatefulSet', 'nats')).toBeUndefined();
  });

  describe('signs each service in as itself, allowed to publish only its own events', () => {
    const envOf = (object: { spec: { template: { spec: { containers: { env?: { name: string }[] }[] } } } }) => object.spec.template.spec.containers[0].env ?? [];
    const passwordVariable = (service: string) => `NATS_${service.replace(/-/g, '_').toUpperCase()}_PASSWORD`;
    const conf = () => find(rendered.prod, 'ConfigMap', 'nats-config').data['nats.conf'] as string;
    /** The sources each service's EventConsumer reads, as the transport makes one durable consumer per source and partition. */
    const sourcesOf = (service: EventService): readonly string[] => eventSubscriptions[service];
    const partitions = PARTITIONS;
    /** A user's entry in the authorization block: from its `user:` line to the next user's. */
    const userBlock = (service: string) => conf().split(/^\s*\{\s*$/m).find((block) => new RegExp(`^\\s*user: ${service}$`, 'm').test(block)) ?? '';

    it('each service Deployment (prod only) reads NATS_USER, its own name, and NATS_PASSWORD from its own key of Secret platform-nats', () => {
      for (const service of services) {
        const env = envOf(find(rendered.prod, 'Deployment', service));
        expect(env.filter((variable) => variable.name.startsWith('NATS_'))).toEqual([
          { name: 'NATS_USER', value: service },
          { name: 'NATS_PASSWORD', valueFrom: { secretKeyRef: { name: 'platform-nats', key: service } } },
        ]);
        expect(envOf(find(rendered.dev, 'Deployment', service)).filter((variable) => variable.name.startsWith('NATS_'))).toEqual([]);
      }
      expect(envOf(find(rendered.prod, 'Deployment', 'gateway')).filter((variable) => variable.name.startsWith('NATS_'))).toEqual([]);
    });

    it('the servers get every service\'s password from the same Secret, and nats.conf has one user per service with it', () => {
      const env = envOf(find(rendered.prod, 'StatefulSet', 'nats'));
      for (const service of services) {
        expect(env).toContainEqual({ name: passwordVariable(service), valueFrom: { secretKeyRef: { name: 'platform-nats', key: service } } });
        expect(userBlock(service)).toMatch(new RegExp(`^\\s*password: \\$${passwordVariable(service)}$`, 'm'));
      }
      expect([...conf().matchAll(/^\s*user: ([a-z-]+)$/gm)].map((match) => match[1])).toEqual([...services, 'stream-admin', 'operator']);
      // The events-stream Job's user: its own key.
      expect(env).toContainEqual({ name: 'NATS_STREAM_ADMIN_PASSWORD', valueFrom: { secretKeyRef: { name: 'platform-nats', key: 'stream-admin' } } });
      expect(userBlock('stream-admin')).toMatch(/^\s*password: \$NATS_STREAM_ADMIN_PASSWORD$/m);
      // The operators' user, for the runbook's nats commands: its own key, every right.
      expect(env).toContainEqual({ name: 'NATS_OPERATOR_PASSWORD', valueFrom: { secretKeyRef: { name: 'platform-nats', key: 'operator' } } });
      expect(userBlock('operator')).toMatch(/^\s*password: \$NATS_OPERATOR_PASSWORD$/m);
    });

    it("with exactly the publish rights its transport needs: its own events, the EVENTS stream's info (not its creation or change), its own durable consumers; replies only on its own inbox prefix", () => {
      expect(partitions).toBeGreaterThan(0);
      for (const service of services) {
        const durables = sourcesOf(service).flatMap((source) => Array.from({ length: partitions }, (_, partition) => ({ name: `${service}-from-${source}-p${partition}`, filter: `events.${source}.p${partition}.>` })));
        const expected = [
          `events.${service}.>`,
          ...['$JS.API.INFO', '$JS.API.STREAM.INFO.EVENTS'],
          ...durables.flatMap(({ name, filter }) => [`$JS.API.CONSUMER.CREATE.EVENTS.${name}.${filter}`, `$JS.API.CONSUMER.INFO.EVENTS.${name}`, `$JS.API.CONSUMER.MSG.NEXT.EVENTS.${name}`, `$JS.ACK.EVENTS.${name}.>`]),
        ];
        const block = userBlock(service);
        const publish = /publish: \{ allow: \[([^\]]*)\] \}/.exec(block)?.[1] ?? '';
        expect([...publish.matchAll(/"([^"]+)"/g)].map((match) => match[1])).toEqual(expected);
        // Its own inbox prefix only (the transport's `inboxPrefix`): `_INBOX.>` would let it read every service's replies and pulled events.
        expect(/subscribe: \{ allow: \[([^\]]*)\] \}/.exec(block)?.[1]).toBe(`"_INBOX_${service}.>"`);
      }
    });

    it("stream-admin, the events-stream Job's user, may manage the EVENTS stream (info, create, update) and nothing else: no event, no consumer, no other stream, no purge or deletion", () => {
      const block = userBlock('stream-admin');
      const publish = /publish: \{ allow: \[([^\]]*)\] \}/.exec(block)?.[1] ?? '';
      expect([...publish.matchAll(/"([^"]+)"/g)].map((match) => match[1])).toEqual(['$JS.API.INFO', '$JS.API.STREAM.INFO.EVENTS', '$JS.API.STREAM.CREATE.EVENTS', '$JS.API.STREAM.UPDATE.EVENTS']);
      expect(/subscribe: \{ allow: \[([^\]]*)\] \}/.exec(block)?.[1]).toBe('"_INBOX_stream-admin.>"');
      // And it is the only user but the operators' that may: no service's block names the stream's creation or change.
      const mayChangeStream = [...conf().matchAll(/^\s*user: ([a-z-]+)$/gm)].map((match) => match[1]).filter((user) => /\$JS\.API\.STREAM\.(CREATE|UPDATE)/.test(userBlock(user)));
      expect(mayChangeStream).toEqual(['stream-admin']);
    });

    it('from the wiring the services run with: each consuming app builds its EventConsumer from its own entry of eventSubscriptions', () => {
      // The manifest is generated from eventSubscriptions; a consumer wired in main.ts with a list of its own would read sources the broker refuses it.
      for (const service of eventServices) {
        const main = readFileSync(path.join(deployDir, `../apps/${service}/src/main.ts`), 'utf8');
        expect([service, /\bsources:/.test(main)]).toEqual([service, false]);
        expect([service, main.includes(`subscriptionOf('${service}')`)]).toEqual([service, eventSubscriptions[service].length > 0]);
      }
    });

    it("is the block generated from that wiring, which a new consumer or partition count makes stale (the generator's --check then fails)", () => {
      // What lies between the markers in the file, which the generator rewrites and its --check compares byte for byte.
      const manifest = readFileSync(path.join(deployDir, 'k8s/overlays/prod/nats.yaml'), 'utf8');
      const committed = /# BEGIN generated: nats-authorization\b.*\n([\s\S]*?)^[ \t]*# END generated: nats-authorization$/m.exec(manifest)?.[1];
      expect(committed).toBe(natsAuthorizationConf());
      expect(natsAuthorizationConf({ ...eventSubscriptions, 'catalog-service': [...eventSubscriptions['catalog-service'], 'orders-service'] })).not.toBe(committed);
      expect(natsAuthorizationConf(eventSubscriptions, PARTITIONS + 1)).not.toBe(committed);
    });
  });
});

it('dev runs one replica with in-cluster PostgreSQL and Redis', () => {
  for (const app of apps) expect((find(rendered.dev, 'Deployment', app) as { spec: { replicas: number } }).spec.replicas).toBe(1);
  expect(find(rendered.dev, 'StatefulSet', 'postgres')).toBeDefined();
  expect(find(rendered.dev, 'StatefulSet', 'redis')).toBeDefined();
  expect(rendered.dev.some((object) => object.kind === 'HorizontalPodAutoscaler')).toBe(false);
});

describe('the policy check itself', () => {
  it('fails on a deliberately broken copy, naming each problem', () => {
    const broken = structuredClone(rendered.prod);
    const deployment = find(broken, 'Deployment', 'gateway') as { spec: { template: { spec: { containers: Record<string, unknown>[]; securityContext: Record<string, unknown> } } } };
    const container = deployment.spec.template.spec.containers[0];
    container.image = 'ghcr.io/example/order-platform/gateway:latest';
    delete container.readinessProbe;
    delete container.resources;
    (container.securityContext as Record<string, unknown>).allowPrivilegeEscalation = true;
    deployment.spec.template.spec.securityContext.runAsNonRoot = false;
    delete (container.securityContext as Record<string, unknown>).runAsNonRoot;
    const withoutPolicy = broken.filter((object) => !(object.kind === 'NetworkPolicy' && object.metadata.name === 'orders-service'));
    withoutPolicy.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'leaked', namespace: 'order-platform' }, stringData: { password: 'hunter2' } } as K8sObject);
    delete find(withoutPolicy, 'Ingress', 'gateway').spec.tls;
    find(withoutPolicy, 'NetworkPolicy', 'users-service').spec.egress.push({ to: [] });
    find(withoutPolicy, 'NetworkPolicy', 'default-deny').spec.policyTypes = ['Ingress'];
    const violations = policyViolations(withoutPolicy).join('\n');
    expect(violations).toMatch(/gateway.*latest/);
    expect(violations).toMatch(/gateway.*probes are required/);
    expect(violations).toMatch(/gateway.*requests/);
    expect(violations).toMatch(/gateway.*allowPrivilegeEscalation/);
    expect(violations).toMatch(/gateway.*runAsNonRoot/);
    expect(violations).toMatch(/Service orders-service: no NetworkPolicy/);
    expect(violations).toMatch(/Secret leaked: Secret values are committed in clear/);
    expect(violations).toMatch(/Ingress gateway: host api.example.com is served without TLS/);
    expect(violations).toMatch(/NetworkPolicy users-service: egress rule \d+ must name both destinations and ports/);
    expect(violations).toMatch(/no default-deny policy selects every pod for both Ingress and Egress/);
    expect(violations).toMatch(/Deployment orders-service: no NetworkPolicy of its own allows its egress/);
  });

  it('and the reachability check names a dependency a policy blocks, on either side', () => {
    const broken = structuredClone(rendered.dev);
    const redisRule = (rule: { ports: { port: number }[] }) => rule.ports.some((port) => port.port === 6379);
    const inventory = find(broken, 'NetworkPolicy', 'inventory-service').spec;
    inventory.egress = inventory.egress.filter((rule: { ports: { port: number }[] }) => !redisRule(rule));
    find(broken, 'NetworkPolicy', 'redis').spec.ingress[0].from.pop();
    find(broken, 'ConfigMap', 'catalog-service-config').data.INVENTORY_URL = 'http://inventory-service:3004';
    expect(blockedDependencies(broken)).toEqual([
      'catalog-service → INVENTORY_URL (inventory-service:3004): no egress rule lets it reach inventory-service:3004',
      'catalog-service → INVENTORY_URL (inventory-service:3004): NetworkPolicy default-deny, NetworkPolicy inventory-service, NetworkPolicy inventory-service-event-feed admits no connection from it to inventory-service:3004',
      'inventory-service → REDIS_URL (redis:6379): no egress rule lets it reach redis:6379',
      'inventory-service → REDIS_URL (redis:6379): NetworkPolicy default-deny, NetworkPolicy redis admits no connection from it to redis:6379',
    ]);
    // A prod server outside the cluster is reached through the ipBlock, only on its port.
    const prod = structuredClone(rendered.prod);
    for (const rule of find(prod, 'NetworkPolicy', 'users-service').spec.egress.filter(redisRule)) rule.ports[0].port = 6380;
    expect(blockedDependencies(prod)).toEqual(['users-service → REDIS_URL (redis:6379): no egress rule lets it reach 10.20.30.40:6379 outside the cluster']);
  });

  it('and the unused-path check names a rule left behind when an address goes', () => {
    // prod with dev's event-feed policy for orders (its USERS_URL is gone with the broker).
    const prod = structuredClone(rendered.prod);
    prod.push(structuredClone(find(rendered.dev, 'NetworkPolicy', 'orders-service-event-feed')));
    expect(unusedAppRules(prod)).toEqual(['NetworkPolicy orders-service-event-feed: egress rule 1 (to users-service) is used by no address of orders-service', 'NetworkPolicy orders-service-event-feed: ingress rule 1 admits users-service, which no address of it uses']);
    // dev with catalog's events no longer read from users-service.
    const dev = structuredClone(rendered.dev);
    delete find(dev, 'ConfigMap', 'catalog-service-config').data.USERS_URL;
    expect(unusedAppRules(dev).sort()).toEqual(['NetworkPolicy catalog-service-event-feed: egress rule 1 (to users-service) is used by no address of catalog-service', 'NetworkPolicy users-service-event-feed: ingress rule 1 admits catalog-service, which no address of it uses']);
    // A rule naming two apps, one of them called no more.
    find(dev, 'NetworkPolicy', 'orders-service').spec.egress.find((rule: { ports: { port: number }[] }) => rule.ports[0].port === 3003).to.push({ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gateway' } } });
    expect(unusedAppRules(dev)).toContain('NetworkPolicy orders-service: egress rule 3 (to gateway) is used by no address of orders-service');
  });

  it('and the addresses it assumes for Secrets are those dev\'s create-secrets.sh writes', () => {
    const script = readFileSync(path.join(deployDir, 'k8s/overlays/dev/create-secrets.sh'), 'utf8');
    expect(script).toContain(`url=redis://${SECRET_ADDRESSES.REDIS_URL}`);
    expect(script).toMatch(new RegExp(`url="postgresql://[^@]+@${SECRET_ADDRESSES.DATABASE_URL}/`));
  });

  it('and the schema check fails on a wrongly typed field', () => {
    const broken = structuredClone(find(rendered.dev, 'Deployment', 'gateway')) as { spec: { replicas: unknown } } & K8sObject;
    broken.spec.replicas = 'two';
    expect(schemaErrors([broken]).join('\n')).toMatch(/replicas must be integer/);
  });
});

describe('the Dockerfile', () => {
  const dockerfile = readFileSync(path.join(deployDir, 'docker/Dockerfile'), 'utf8');
  const lines = dockerfile.split('\n').filter((line) => line.trim() && !line.startsWith('#'));

  it('builds on a pinned Node 22 LTS image and runs node main.js as a non-root user with NODE_ENV=production', () => {
    expect(dockerfile).toMatch(/ARG NODE_IMAGE=\S+node:22\.\d+\.\d+-bookworm-slim/);
    expect(lines.filter((line) => line.startsWith('FROM')).every((line) => !/:latest\b/.test(line))).toBe(true);
    expect(lines.filter((line) => line.startsWith('USER')).pop()).toMatch(/^USER [1-9]\d*:[1-9]\d*$/);
    const nodeFlags = JSON.parse(readFileSync(path.join(deployDir, '../tools/start/node-flags.json'), 'utf8')) as string[];
    expect(lines.pop()).toBe(`CMD ${JSON.stringify(['node', '--enable-source-maps', ...nodeFlags, 'main.js'])}`.replaceAll('","', '", "'));
    expect(dockerfile).toContain('ENV NODE_ENV=production');
    // The runtime packages from the app's own lock file (tools/build): nothing resolved afresh at build time.
    expect(lines.filter((line) => /\bnpm (ci|install)\b/.test(line) && line.includes('--omit=dev'))).toEqual([expect.stringMatching(/^RUN npm ci --omit=dev /)]);
    expect(dockerfile).toMatch(/COPY --from=build \S+\/package\.json \S+\/package-lock\.json \.\//);
    expect(dockerfile).not.toMatch(/^\s*(HEALTHCHECK|ADD)\b/m);
  });
});

it("keeps every service's shared objects as the one template writes them (tools/deploy/render-services.mjs)", () => {
  const run = () => execFileSync(process.execPath, [path.join(deployDir, '../tools/deploy/render-services.mjs'), '--check'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  // Five objects of each of the four services, and the copies of the deprecation registry (gateway, users, inventory).
  expect(run().match(/matches its sources/g)).toHaveLength(23);
  // A hand edit of a generated file fails the check.
  const file = path.join(deployDir, 'k8s/base/catalog-service/pdb.yaml');
  const committed = readFileSync(file, 'utf8');
  try {
    writeFileSync(file, committed.replace('maxUnavailable: 1', 'maxUnavailable: 2'));
    expect(run).toThrow(/catalog-service\/pdb.yaml is stale/);
  } finally {
    writeFileSync(file, committed);
  }
});

describe('the monitoring component (deploy/monitoring)', () => {
  /** prod with the component, as an operator adds it: an overlay of its own beside the others. */
  function renderMonitoredProd(): K8sObject[] {
    const dir = mkdtempSync(path.join(deployDir, 'k8s/overlays/.monitored-'));
    try {
      writeFileSync(path.join(dir, 'kustomization.yaml'), 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: order-platform\nresources:\n- ../prod\ncomponents:\n- ../../../monitoring\n');
      return renderOverlay(path.basename(dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const objects = renderMonitoredProd();
  const rule = find(objects, 'PrometheusRule', 'order-platform') as { spec: { groups: { rules: { alert?: string; annotations?: Record<string, string> }[] }[] } };
  const alerts = rule.spec.groups.flatMap((group) => group.rules).filter((entry) => entry.alert);

  it('scrapes the gateway on its metrics port and every service on its HTTP port, in the namespace', () => {
    const gateway = find(objects, 'PodMonitor', 'gateway');
    const services = find(objects, 'PodMonitor', 'services');
    expect(gateway.spec.podMetricsEndpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics' })]);
    expect(services.spec.podMetricsEndpoints).toEqual([expect.objectContaining({ port: 'http', path: '/metrics' })]);
    expect(services.spec.selector.matchExpressions[0].values.sort()).toEqual(apps.filter((app) => app !== 'gateway').sort());
    // The ports the monitors name exist on the pods they select.
    const portsOf = (app: string) => find(objects, 'Deployment', app).spec.template.spec.containers[0].ports.map((port: { name: string }) => port.name);
    expect(portsOf('gateway')).toContain('metrics');
    for (const app of apps.filter((name) => name !== 'gateway')) expect(portsOf(app)).toContain('http');
    expect([gateway, services, rule].every((object) => object.metadata.namespace === 'order-platform')).toBe(true);
  });

  it('ships the alert rules and one dashboard per concern, labelled for Grafana', () => {
    expect(alerts.map((entry) => entry.alert).sort()).toEqual([
      'EventConsumerLagging', 'EventConsumerStalled', 'EventsParked',
      'GatewayErrorBudgetBurnFast', 'GatewayErrorBudgetBurnSlow', 'GatewayLatencyBudgetBurnFast', 'GatewayLatencyBudgetBurnSlow',
      'MigrationFailed', 'OutboxEventsWaiting', 'PendingStockReleasesGrowing', 'RateLimiterOnMemory', 'ReadinessFlapping',
    ]);
    const dashboards = find(objects, 'ConfigMap', 'order-platform-dashboards') as { metadata: { labels: Record<string, string> }; data: Record<string, string> };
    expect(dashboards.metadata.labels.grafana_dashboard).toBe('1');
    for (const json of Object.values(dashboards.data)) expect((JSON.parse(json) as { panels: unknown[] }).panels.length).toBeGreaterThan(1);
    expect(Object.keys(dashboards.data).sort()).toEqual(['edge.json', 'graphql.json', 'inventory.json', 'services.json']);
  });

  it('gives every alert a runbook section that exists in docs/runbook.md', () => {
    const runbook = readFileSync(path.join(deployDir, '../docs/runbook.md'), 'utf8');
    const anchors = new Set([...runbook.matchAll(/^#{2,4} (.+)$/gm)].map((heading) => heading[1].toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
    for (const entry of alerts) {
      const url = entry.annotations?.runbook_url ?? '';
      expect([entry.alert, url.startsWith('docs/runbook.md#') && anchors.has(url.split('#')[1])]).toEqual([entry.alert, true]);
    }
  });

  it('loads the alert rules as Prometheus does and passes their promtool unit tests (tools/monitoring/check-rules.mjs)', () => {
    // The rules' unit tests (rules/*.test.yaml) run here, with the manifests: nothing else runs them.
    const result = spawnSync(process.execPath, [path.join(deployDir, '../tools/monitoring/check-rules.mjs')], { encoding: 'utf8' });
    expect(result.status === 0 ? 'passed' : `${result.stdout}${result.stderr}`).toBe('passed');
  });

  it('keeps the promtool unit tests next to the rules they test', () => {
    const tests = parse(readFileSync(path.join(deployDir, 'monitoring/rules/burn-rate.test.yaml'), 'utf8')) as { tests: { alert_rule_test: { alertname: string }[] }[] };
    const tested = new Set(tests.tests.flatMap((test) => test.alert_rule_test.map((check) => check.alertname)));
    for (const burnRate of alerts.map((entry) => entry.alert).filter((name) => name?.includes('BudgetBurn'))) expect([burnRate, tested.has(burnRate ?? '')]).toEqual([burnRate, true]);
  });
});
