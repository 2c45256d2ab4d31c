// What each app's environment points at (its database, Redis, the broker, the services it calls,
// the trace collector), and whether the rendered NetworkPolicies let it get there: an egress rule
// of its own, and the target's ingress where a policy isolates the target. A variable added to a
// ConfigMap or a Deployment without the policy to match is a connection refused in the cluster
// only, never in tests or `npm start`; this finds it in the rendered overlay instead.
import type { K8sObject } from './render';

/**
 * Secrets hold addresses the manifests cannot show (they are created out of band). They name the
 * same servers in every overlay: dev's create-secrets.sh points them at these in-cluster Services;
 * an overlay without such a Service (prod) has the server outside the cluster.
 */
export const SECRET_ADDRESSES: Record<string, string> = { DATABASE_URL: 'postgres:5432', REDIS_URL: 'redis:6379' };
/** Where traces go once an operator sets OTEL_EXPORTER_OTLP_ENDPOINT (docs/operations.md): the collector in `monitoring`. */
export const DOCUMENTED_COLLECTOR = 'http://otel-collector.monitoring:4318';
/**
 * Stands for a server outside the cluster (a managed PostgreSQL or Redis): a private address, as
 * such servers usually have, so a rule meant for the public internet does not count for it.
 */
export const OUTSIDE_ADDRESS = '10.20.30.40';

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'postgres:': 5432, 'postgresql:': 5432, 'redis:': 6379, 'rediss:': 6379, 'nats:': 4222 };

type Labels = Record<string, string>;
interface LabelSelector {
  matchLabels?: Labels;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}
interface Peer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}
interface PolicyPort {
  port?: number | string;
  endPort?: number;
  protocol?: string;
}
interface PolicySpec {
  podSelector?: LabelSelector;
  policyTypes?: string[];
  ingress?: { from?: Peer[]; ports?: PolicyPort[] }[];
  egress?: { to?: Peer[]; ports?: PolicyPort[] }[];
}
interface ContainerPort {
  name?: string;
  containerPort: number;
}
interface Container {
  name: string;
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: unknown; configMapKeyRef?: { name: string; key: string } } }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: ContainerPort[];
}
interface PodTemplate {
  metadata?: { labels?: Labels };
  spec: { containers: Container[]; initContainers?: Container[] };
}

/** A place a connection goes: pods (known, or of another namespace we do not render) or an address outside the cluster. */
type Target = { pods: true; namespace: string; labels?: Labels; port: number; portName?: string; name: string } | { pods: false; ip: string; port: number; name: string };

export interface Dependency {
  variable: string;
  /** As the variable names it (host:port). */
  address: string;
  /** Where its connections land: pods of the namespace, or outside the cluster. */
  targets: Target[];
}

const namespaceOf = (object: K8sObject) => object.metadata.namespace ?? 'default';
const templateOf = (object: K8sObject) => (object.spec as { template: PodTemplate }).template;

function selects(selector: LabelSelector | undefined, labels: Labels): boolean {
  if (!selector) return true;
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpressions = (selector.matchExpressions ?? []).every((expression) => {
    const value = labels[expression.key];
    if (expression.operator === 'In') return value !== undefined && (expression.values ?? []).includes(value);
    if (expression.operator === 'NotIn') return value === undefined || !(expression.values ?? []).includes(value);
    if (expression.operator === 'Exists') return value !== undefined;
    return value === undefined;
  });
  return byLabels && byExpressions;
}

const emptySelector = (selector: LabelSelector | undefined) => !selector || (!Object.keys(selector.matchLabels ?? {}).length && !(selector.matchExpressions ?? []).length);

function ipv4(address: string): number {
  return address.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
}

function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  if (base.includes(':') !== ip.includes(':')) return false;
  if (ip.includes(':')) return Number(bits) === 0; // only ::/0 is needed here
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(ip) / size) === Math.floor(ipv4(base) / size);
}

/** The variables a container sees, from its env and the ConfigMaps and Secrets it takes whole; `undefined`: held in a Secret. */
function environmentOf(container: Container, objects: K8sObject[], namespace: string): Map<string, string | undefined> {
  const variables = new Map<string, string | undefined>();
  const configMap = (name: string) => objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === name && namespaceOf(object) === namespace) as { data?: Record<string, string> } | undefined;
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) for (const [name, value] of Object.entries(configMap(source.configMapRef.name)?.data ?? {})) variables.set(name, value);
  }
  for (const variable of container.env ?? []) {
    const fromConfigMap = variable.valueFrom?.configMapKeyRef;
    variables.set(variable.name, variable.value ?? (fromConfigMap ? configMap(fromConfigMap.name)?.data?.[fromConfigMap.key] : undefined));
  }
  return variables;
}

/** The workloads of a namespace whose pods carry all of `selector`'s labels. */
function podsOf(objects: K8sObject[], namespace: string, selector: Labels): PodTemplate[] {
  return objects
    .filter((object) => ['Deployment', 'StatefulSet', 'DaemonSet'].includes(object.kind) && namespaceOf(object) === namespace)
    .map(templateOf)
    .filter((template) => Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => template.metadata?.labels?.[key] === value));
}

/** Where `host:port` leads from `namespace`: a Service's pods (on its target port), pods of a namespace not rendered here, or outside the cluster. */
function resolve(objects: K8sObject[], namespace: string, host: string, port: number): Target[] {
  const [serviceName, serviceNamespace = namespace] = host.replace(/\.svc(\.cluster\.local)?$/, '').split('.');
  const rendersNamespace = objects.some((object) => namespaceOf(object) === serviceNamespace);
  if (host.split('.').length > 2 && !host.endsWith('.svc') && !host.endsWith('.svc.cluster.local')) return [{ pods: false, ip: OUTSIDE_ADDRESS, port, name: host }];
  if (!rendersNamespace) return [{ pods: true, namespace: serviceNamespace, port, name: host }];
  const service = objects.find((object) => object.kind === 'Service' && object.metadata.name === serviceName && namespaceOf(object) === serviceNamespace) as
    | (K8sObject & { spec: { selector?: Labels; ports: { port: number; targetPort?: number | string }[] } })
    | undefined;
  if (!service) return [{ pods: false, ip: OUTSIDE_ADDRESS, port, name: host }];
  const servicePort = service.spec.ports.find((entry) => entry.port === port);
  if (!servicePort) return [];
  const targetPort = servicePort.targetPort ?? servicePort.port;
  return podsOf(objects, serviceNamespace, service.spec.selector ?? {}).map((template) => {
    const ports = template.spec.containers.flatMap((container) => container.ports ?? []);
    const container = typeof targetPort === 'string' ? ports.find((entry) => entry.name === targetPort) : ports.find((entry) => entry.containerPort === targetPort);
    return { pods: true as const, namespace: serviceNamespace, labels: template.metadata?.labels ?? {}, port: container?.containerPort ?? Number(targetPort), portName: container?.name, name: serviceName };
  });
}

/**
 * The addresses in a variable's value: a URL, host:port, a gRPC name target (`dns:///host:port`,
 * the DNS server in the authority left out), or a comma-separated list of these (a NATS cluster).
 */
function addressesIn(value: string): { host: string; port: number }[] {
  return value.split(',').flatMap((entry) => {
    const address = entry.trim().replace(/^dns:(\/\/[^/]*\/)?/, '');
    try {
      const url = new URL(address.includes('://') ? address : `tcp://${address}`);
      const port = url.port ? Number(url.port) : DEFAULT_PORTS[url.protocol];
      return url.hostname && port ? [{ host: url.hostname, port }] : [];
    } catch {
      return [];
    }
  });
}

/** What an app's containers connect to, as their variables name it. */
export function dependenciesOf(objects: K8sObject[], deployment: K8sObject): Dependency[] {
  const namespace = namespaceOf(deployment);
  const { spec } = templateOf(deployment);
  const variables = new Map<string, string | undefined>();
  for (const container of [...(spec.initContainers ?? []), ...spec.containers]) for (const [name, value] of environmentOf(container, objects, namespace)) variables.set(name, value);
  // Sampling configured means the app exports traces as soon as the endpoint is set.
  if (!variables.has('OTEL_EXPORTER_OTLP_ENDPOINT') && variables.has('OTEL_TRACES_SAMPLER')) variables.set('OTEL_EXPORTER_OTLP_ENDPOINT', DOCUMENTED_COLLECTOR);
  return [...variables]
    // A limit named after what it counts per address (MAX_CONNECTIONS_PER_ADDRESS) names no address.
    .filter(([name]) => /_(URL|ADDRESS|ENDPOINT)$/.test(name) && !name.startsWith('MAX_'))
    .map(([variable, value]) => {
      const addresses = addressesIn(value ?? SECRET_ADDRESSES[variable] ?? '');
      return { variable, address: addresses.map(({ host, port }) => `${host}:${port}`).join(','), targets: addresses.flatMap(({ host, port }) => resolve(objects, namespace, host, port)) };
    });
}

function portMatches(ports: PolicyPort[] | undefined, target: { port: number; portName?: string }): boolean {
  if (!ports?.length) return true;
  return ports.some((entry) => (entry.protocol ?? 'TCP') === 'TCP' && (entry.port === undefined || entry.port === target.port || (entry.port === target.portName && target.portName !== undefined) || (typeof entry.port === 'number' && entry.endPort !== undefined && target.port >= entry.port && target.port <= entry.endPort)));
}

/** Does `peer`, in a policy of `policyNamespace`, name pods of `namespace` labelled `labels` (unknown labels: only a peer naming the whole namespace does)? */
function peerNamesPod(peer: Peer, policyNamespace: string, namespace: string, labels: Labels | undefined): boolean {
  if (peer.ipBlock) return false;
  const namespaceMatches = peer.namespaceSelector ? selects(peer.namespaceSelector, { 'kubernetes.io/metadata.name': namespace }) : namespace === policyNamespace;
  const podMatches = labels ? selects(peer.podSelector, labels) : emptySelector(peer.podSelector);
  return namespaceMatches && podMatches;
}

function peerNamesTarget(peer: Peer, policyNamespace: string, target: Target): boolean {
  if (!target.pods) return !!peer.ipBlock && inCidr(target.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((except) => inCidr(target.ip, except));
  return peerNamesPod(peer, policyNamespace, target.namespace, target.labels);
}

const policiesOf = (objects: K8sObject[]) => objects.filter((object) => object.kind === 'NetworkPolicy');
const isolating = (objects: K8sObject[], namespace: string, labels: Labels, type: 'Ingress' | 'Egress') =>
  policiesOf(objects).filter((policy) => namespaceOf(policy) === namespace && selects((policy.spec as PolicySpec).podSelector, labels) && ((policy.spec as PolicySpec).policyTypes ?? ['Ingress']).includes(type));

/** The platform's own pods: its apps' Deployments, and Jobs of their images (prod's events-stream). */
const platformWorkloads = (objects: K8sObject[]) => objects.filter((object) => (object.kind === 'Deployment' || object.kind === 'Job') && object.metadata.labels?.['app.kubernetes.io/part-of'] === 'order-platform');

/** Each dependency of each app Deployment or Job that a NetworkPolicy blocks, said as what fails to connect where. */
export function blockedDependencies(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  for (const app of platformWorkloads(objects)) {
    const namespace = namespaceOf(app);
    const labels = templateOf(app).metadata?.labels ?? {};
    for (const dependency of dependenciesOf(objects, app)) {
      const at = `${app.metadata.name} → ${dependency.variable} (${dependency.address})`;
      if (!dependency.targets.length) problems.push(`${at}: no Service port or address it resolves to`);
      for (const target of dependency.targets) {
        const where = target.pods ? `${target.labels?.['app.kubernetes.io/name'] ?? `any pod of namespace ${target.namespace}`}:${target.port}` : `${target.ip}:${target.port} outside the cluster`;
        const egress = isolating(objects, namespace, labels, 'Egress');
        if (egress.length && !egress.some((policy) => ((policy.spec as PolicySpec).egress ?? []).some((rule) => portMatches(rule.ports, target) && (!rule.to?.length || rule.to.some((peer) => peerNamesTarget(peer, namespaceOf(policy), target)))))) {
          problems.push(`${at}: no egress rule lets it reach ${where}`);
        }
        if (!target.pods || !target.labels) continue;
        const ingress = isolating(objects, target.namespace, target.labels, 'Ingress');
        if (ingress.length && !ingress.some((policy) => ((policy.spec as PolicySpec).ingress ?? []).some((rule) => portMatches(rule.ports, target) && (!rule.from?.length || rule.from.some((peer) => peerNamesPod(peer, namespaceOf(policy), namespace, labels)))))) {
          problems.push(`${at}: ${ingress.map((policy) => `NetworkPolicy ${policy.metadata.name}`).join(', ')} admits no connection from it to ${where}`);
        }
      }
    }
  }
  return problems;
}

/**
 * The rules between the apps' own pods that no app's settings use: an egress rule of an app's
 * policy naming pods of another app, or an ingress rule naming an app's pods as callers, with no
 * dependency of those pods landing there on that port. Policies add up, so a rule left behind when
 * an address goes (a transport replaced, a call removed) keeps a path open that nothing needs.
 * Rules to or from the outside (address blocks, other namespaces: DNS, monitoring, the ingress
 * controller) are not judged here.
 */
export function unusedAppRules(objects: K8sObject[]): string[] {
  const apps = platformWorkloads(objects);
  const labelsOf = (app: K8sObject) => templateOf(app).metadata?.labels ?? {};
  /** Every (caller, target pods, port) the apps' settings make. */
  const uses = apps.flatMap((app) => dependenciesOf(objects, app).flatMap((dependency) => dependency.targets.filter((target) => target.pods).map((target) => ({ caller: app, target }))));
  const used = (callers: K8sObject[], targets: (labels: Labels | undefined) => boolean, ports: PolicyPort[] | undefined) =>
    uses.some((use) => callers.includes(use.caller) && use.target.pods && targets(use.target.labels) && portMatches(ports, use.target));
  const problems: string[] = [];
  for (const policy of policiesOf(objects)) {
    const spec = policy.spec as PolicySpec;
    const namespace = namespaceOf(policy);
    const selected = apps.filter((app) => namespaceOf(app) === namespace && !emptySelector(spec.podSelector) && selects(spec.podSelector, labelsOf(app)));
    if (!selected.length) continue;
    (spec.egress ?? []).forEach((rule, index) => {
      const peers = rule.to ?? [];
      if (!peers.length || peers.some((peer) => peer.ipBlock || peer.namespaceSelector)) return;
      // Each app the rule lets them reach: a rule naming two apps, one no longer called, is half unused.
      for (const target of apps.filter((app) => peers.some((peer) => peerNamesPod(peer, namespace, namespaceOf(app), labelsOf(app))))) {
        if (!used(selected, (labels) => !!labels && selects({ matchLabels: labelsOf(target) }, labels), rule.ports)) {
          problems.push(`NetworkPolicy ${policy.metadata.name}: egress rule ${index + 1} (to ${target.metadata.name}) is used by no address of ${selected.map((app) => app.metadata.name).join(', ')}`);
        }
      }
    });
    (spec.ingress ?? []).forEach((rule, index) => {
      const peers = rule.from ?? [];
      if (!peers.length || peers.some((peer) => peer.ipBlock || peer.namespaceSelector)) return;
      const fromApps = apps.filter((app) => peers.some((peer) => peerNamesPod(peer, namespace, namespaceOf(app), labelsOf(app))));
      for (const caller of fromApps) {
        if (!used([caller], (labels) => !!labels && selects(spec.podSelector, labels), rule.ports)) {
          problems.push(`NetworkPolicy ${policy.metadata.name}: ingress rule ${index + 1} admits ${caller.metadata.name}, which no address of it uses`);
        }
      }
    });
  }
  return problems;
}
