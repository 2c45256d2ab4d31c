// Writes the prod broker's authorization into deploy/k8s/overlays/prod/nats.yaml: nats.conf's
// `authorization` block (one user per event service, allowed exactly what its transport does,
// libs/events/src/nats-permissions.ts) and the StatefulSet's password variables it reads, each
// between BEGIN/END markers; the rest of the manifest stays hand-written. Both come from
// libs/events' eventSubscriptions (who reads whom) and PARTITIONS, so a new consumer, producer or
// partition count only needs this run again. `--check` (deploy:check-nats-auth, in
// `check-generated`) fails when the committed manifest differs.
// Usage: node tools/ts-run.mjs tools/deploy/render-nats-auth.ts [--check]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { natsAuthorizationConf, natsPasswordVariableOf, natsUsers } from '@platform/events';
import { writeOrCheck } from '../generated-file.mjs';

const REGENERATE = 'node tools/ts-run.mjs tools/deploy/render-nats-auth.ts';
const MANIFEST = 'deploy/k8s/overlays/prod/nats.yaml';

/** `manifest` with what lies between the `# BEGIN generated: <what>` and `# END generated: <what>` lines replaced by `content`. */
export function spliced(manifest: string, what: string, content: string): string {
  const begin = new RegExp(`^[ \\t]*# BEGIN generated: ${what}\\b.*\\n`, 'm').exec(manifest);
  const end = new RegExp(`^[ \\t]*# END generated: ${what}$`, 'm').exec(manifest);
  if (!begin || !end || end.index < begin.index) throw new Error(`${MANIFEST}: no "# BEGIN generated: ${what}" … "# END generated: ${what}" lines`);
  return manifest.slice(0, begin.index + begin[0].length) + content + manifest.slice(end.index);
}

/** The nats container's variables with each broker user's password, from its key of Secret platform-nats. */
function passwordEnv(): string {
  return natsUsers.map((user) => `        - name: ${natsPasswordVariableOf(user)}\n          valueFrom:\n            secretKeyRef:\n              name: platform-nats\n              key: ${user}\n`).join('');
}

export function main(): void {
  const root = path.resolve(__dirname, '../..'); // tmp/ts-run/, where ts-run bundles this
  const target = path.join(root, MANIFEST);
  const current = readFileSync(target, 'utf8');
  const rendered = spliced(spliced(current, 'nats-authorization', natsAuthorizationConf()), 'nats-passwords', passwordEnv());
  writeOrCheck(root, target, rendered, REGENERATE);
}
