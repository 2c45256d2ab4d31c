// Our deployment policy, over rendered objects: what `kubectl apply` must never ship.
import type { K8sObject } from './render';

interface Container {
  name: string;
  image?: string;
  securityContext?: Record<string, unknown> & { capabilities?: { drop?: string[] }; seccompProfile?: { type?: string } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  livenessProbe?: unknown;
  readinessProbe?: unknown;
  startupProbe?: unknown;
}

interface PodSpec {
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type?: string } };
  containers: Container[];
  initContainers?: Container[];
}

interface NetworkPolicySpec {
  podSelector?: object;
  policyTypes?: string[];
  egress?: { to?: object[]; ports?: object[] }[];
}

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job']);

function podSpecOf(object: K8sObject): PodSpec | undefined {
  if (!WORKLOADS.has(object.kind)) return undefined;
  return ((object.spec as { template?: { spec?: PodSpec } }).template?.spec) ?? undefined;
}

function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

function policySelects(policy: K8sObject, labels: Record<string, string>): boolean {
  const podSelector = (policy.spec as { podSelector?: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values: string[] }[] } }).podSelector ?? {};
  const byLabels = selects(podSelector.matchLabels ?? {}, labels);
  const byExpressions = (podSelector.matchExpressions ?? []).every((expression) => expression.operator === 'In' && expression.values.includes(labels[expression.key]));
  return byLabels && byExpressions;
}

export function policyViolations(objects: K8sObject[]): string[] {
  const violations: string[] = [];
  const where = (object: K8sObject) => `${object.kind} ${object.metadata.name}`;

  for (const object of objects) {
    const pod = podSpecOf(object);
    if (pod) {
      const podSecurity = pod.securityContext ?? {};
      for (const container of [...pod.containers, ...(pod.initContainers ?? [])]) {
        const at = `${where(object)} container ${container.name}`;
        const security = container.securityContext ?? {};
        if (podSecurity.runAsNonRoot !== true && security.runAsNonRoot !== true) violations.push(`${at}: runAsNonRoot is not true`);
        const user = (security.runAsUser as number | undefined) ?? podSecurity.runAsUser;
        if (!user || user <= 0) violations.push(`${at}: runAsUser must be a non-zero uid`);
        if (security.allowPrivilegeEscalation !== false) violations.push(`${at}: allowPrivilegeEscalation must be false`);
        if (security.privileged === true) violations.push(`${at}: privileged`);
        if (!security.capabilities?.drop?.includes('ALL')) violations.push(`${at}: capabilities must drop ALL`);
        if ((security.seccompProfile?.type ?? podSecurity.seccompProfile?.type) !== 'RuntimeDefault') violations.push(`${at}: seccompProfile must be RuntimeDefault`);
        if (security.readOnlyRootFilesystem !== true) violations.push(`${at}: readOnlyRootFilesystem must be true`);
        if (!container.resources?.requests?.cpu || !container.resources?.requests?.memory || !container.resources?.limits?.memory) violations.push(`${at}: cpu and memory requests and a memory limit are required`);
        const image = container.image ?? '';
        const tag = image.includes('@') ? 'digest' : image.split('/').pop()?.split(':')[1];
        if (!tag || tag === 'latest') violations.push(`${at}: image ${image} must carry a fixed tag, not latest`);
        // Init containers run to completion before the pod serves: probes do not apply to them.
        if (object.kind !== 'Job' && !pod.initContainers?.includes(container) && (!container.livenessProbe || !container.readinessProbe || !container.startupProbe)) violations.push(`${at}: liveness, readiness and startup probes are required`);
      }
    }
    if (object.kind === 'Secret' && ((object as { data?: object }).data || (object as { stringData?: object }).stringData)) {
      violations.push(`${where(object)}: Secret values are committed in clear; create Secrets out of band`);
    }
    if (object.kind === 'Namespace' && object.metadata.labels?.['pod-security.kubernetes.io/enforce'] !== 'restricted') {
      violations.push(`${where(object)}: must enforce the restricted Pod Security Standard`);
    }
  }

  for (const ingress of objects.filter((object) => object.kind === 'Ingress')) {
    const spec = ingress.spec as { rules?: { host?: string }[]; tls?: { hosts?: string[]; secretName?: string }[] };
    const covered = new Set((spec.tls ?? []).filter((entry) => entry.secretName).flatMap((entry) => entry.hosts ?? []));
    for (const rule of spec.rules ?? []) {
      if (!rule.host || !covered.has(rule.host)) violations.push(`${where(ingress)}: host ${rule.host ?? '(any)'} is served without TLS (a tls entry with its certificate Secret)`);
    }
  }

  const policies = objects.filter((object) => object.kind === 'NetworkPolicy');
  const specOf = (policy: K8sObject) => policy.spec as NetworkPolicySpec;
  if (policies.length && !policies.some((policy) => Object.keys(specOf(policy).podSelector ?? {}).length === 0 && ['Ingress', 'Egress'].every((type) => specOf(policy).policyTypes?.includes(type)))) {
    violations.push('NetworkPolicy: no default-deny policy selects every pod for both Ingress and Egress');
  }
  for (const policy of policies) {
    for (const [i, rule] of (specOf(policy).egress ?? []).entries()) {
      if (!rule.to?.length || !rule.ports?.length) violations.push(`${where(policy)}: egress rule ${i + 1} must name both destinations and ports (no allow-all)`);
    }
  }
  for (const object of objects.filter((candidate) => candidate.kind === 'Deployment' || candidate.kind === 'StatefulSet' || candidate.kind === 'Job')) {
    const labels = (object.spec as { template?: { metadata?: { labels?: Record<string, string> } } }).template?.metadata?.labels ?? {};
    const own = policies.filter((policy) => Object.keys(specOf(policy).podSelector ?? {}).length > 0 && policySelects(policy, labels));
    if (object.metadata.labels?.['app.kubernetes.io/part-of'] === 'order-platform' && !own.some((policy) => specOf(policy).policyTypes?.includes('Egress') && specOf(policy).egress?.length)) {
      violations.push(`${where(object)}: no NetworkPolicy of its own allows its egress (DNS, its database, what it calls)`);
    }
  }
  for (const service of objects.filter((object) => object.kind === 'Service')) {
    const selector = (service.spec as { selector?: Record<string, string> }).selector ?? {};
    if (!policies.some((policy) => Object.keys(policy.spec as object).length && policySelects(policy, selector) && Object.keys((policy.spec as { podSelector?: object }).podSelector ?? {}).length > 0)) {
      violations.push(`${where(service)}: no NetworkPolicy selects its pods`);
    }
  }
  return violations;
}
