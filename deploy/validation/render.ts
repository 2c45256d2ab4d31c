// Renders a kustomize overlay with `kubectl kustomize` and reads the objects.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export const deployDir = path.resolve(__dirname, '..');

export function renderOverlay(overlay: string): K8sObject[] {
  const text = execFileSync('kubectl', ['kustomize', path.join(deployDir, 'k8s/overlays', overlay)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseAllDocuments(text).map((document) => document.toJS() as K8sObject).filter(Boolean);
}

/** Schema check against the Kubernetes OpenAPI schemas shipped in kubernetes-models. */
export function schemaErrors(objects: K8sObject[]): string[] {
  return objects.flatMap((object) => {
    const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
    const modulePath = group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/${version}`;
    let Model: (new (data: unknown) => { validate(): void }) | undefined;
    try {
      Model = (require(modulePath) as Record<string, new (data: unknown) => { validate(): void }>)[object.kind];
    } catch {
      Model = undefined;
    }
    if (!Model) return [`${object.kind} ${object.metadata.name}: no schema for ${object.apiVersion}`];
    try {
      new Model(object).validate();
      return [];
    } catch (error) {
      return [`${object.kind} ${object.metadata.name}: ${(error as Error).message}`];
    }
  });
}
