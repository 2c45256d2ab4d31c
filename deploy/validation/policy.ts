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
        if (object.kind !== 'Job' && (!container.livenessProbe || !container.readinessProbe || !container.startupProbe)) violations.push(`${at}: liveness, readiness and startup probes are required`);
      }
    }
    if (object.kind === 'Secret' && ((object as { data?: object }).data || (object as { stringData?: object }).stringData)) {
      violations.push(`${where(object)}: Secret values are committed in clear; create Secrets out of band`);
    }
    if (object.kind === 'Namespace' && object.metadata.labels?.['pod-security.kubernetes.io/enforce'] !== 'restricted') {
      violations.push(`${where(object)}: must enforce the restricted Pod Security Standard`);
    }
  }

  const policies = objects.filter((object) => object.kind === 'NetworkPolicy');
  for (const service of objects.filter((object) => object.kind === 'Service')) {
    const selector = (service.spec as { selector?: Record<string, string> }).selector ?? {};
    if (!policies.some((policy) => Object.keys(policy.spec as object).length && policySelects(policy, selector) && Object.keys((policy.spec as { podSelector?: object }).podSelector ?? {}).length > 0)) {
      violations.push(`${where(service)}: no NetworkPolicy selects its pods`);
    }
  }
  return violations;
}
