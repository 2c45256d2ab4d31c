// The operators' command for dead letters (events a consumer parked, libs/events/src/dead-letters.ts):
// lists them, or replays one once its cause is fixed, through the consuming service's
// /internal/dead-letters with a service token signed by JWT_SECRET (the development secret when
// unset, as the apps do). In a cluster, run it from a checkout through a port-forward, with the
// platform's JWT secret in the shell (docs/runbook.md "EventsParked").
// Usage: npm run events:dead-letters -- list [service] [--state parked|replayed|all]
//        npm run events:dead-letters -- replay <id> [service]
// service: orders-service (default), catalog-service or users-service (webhooks); their addresses
// are ORDERS_URL, CATALOG_URL and USERS_URL (default 127.0.0.1:3002/3003/3001 plus PORT_OFFSET).
import { serviceTokenSource } from '@platform/auth';
import { ConfigError, loadConfig } from '@platform/service-kit';

const CONSUMERS: Record<string, { env: string; port: number }> = {
  'users-service': { env: 'USERS_URL', port: 3001 },
  'orders-service': { env: 'ORDERS_URL', port: 3002 },
  'catalog-service': { env: 'CATALOG_URL', port: 3003 },
};

function addressOf(service: string): string {
  const consumer = CONSUMERS[service];
  if (!consumer) throw new Error(`unknown consuming service ${service}: one of ${Object.keys(CONSUMERS).join(', ')}`);
  return process.env[consumer.env] ?? `http://127.0.0.1:${consumer.port + Number(process.env.PORT_OFFSET ?? 0)}`;
}

async function request(method: 'GET' | 'POST', url: string, token: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, signal: AbortSignal.timeout(30_000) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const stateAt = args.indexOf('--state');
  const state = stateAt >= 0 ? args.splice(stateAt, 2)[1] : 'parked';
  const [command, ...rest] = args;
  let secret: string;
  try {
    secret = loadConfig({}).jwtSecret;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`events:dead-letters: ${error.message}\n`);
    process.exitCode = 1;
    return;
  }
  const token = await serviceTokenSource(secret, 'events-cli')();
  if (command === 'list') {
    const service = rest[0] ?? 'orders-service';
    const { status, body } = await request('GET', `${addressOf(service)}/internal/dead-letters?state=${encodeURIComponent(state)}`, token);
    if (status !== 200) return fail(status, body);
    const items = body.items as { id: string; type: string; source: string; attempts: number; parkedAt: string; replayedAt: string | null; error: string }[];
    if (!items.length) process.stdout.write(`${service}: no ${state === 'all' ? '' : `${state} `}dead letters\n`);
    for (const item of items) process.stdout.write(`${item.id}  ${item.type}  from ${item.source}  ${item.attempts} attempts  parked ${item.parkedAt}${item.replayedAt ? `  replayed ${item.replayedAt}` : ''}\n    ${item.error}\n`);
    return;
  }
  if (command === 'replay' && rest[0]) {
    const service = rest[1] ?? 'orders-service';
    const { status, body } = await request('POST', `${addressOf(service)}/internal/dead-letters/${encodeURIComponent(rest[0])}/replay`, token);
    if (status !== 200) return fail(status, body);
    process.stdout.write(`${rest[0]}: replayed (${String(body.outcome)})\n`);
    return;
  }
  process.stderr.write('usage: npm run events:dead-letters -- list [service] [--state parked|replayed|all] | replay <id> [service]\n');
  process.exitCode = 2;
}

function fail(status: number, body: Record<string, unknown>): void {
  process.stderr.write(`events:dead-letters: ${status} ${String(body.code ?? '')}: ${String(body.message ?? '')}\n`);
  process.exitCode = 1;
}
