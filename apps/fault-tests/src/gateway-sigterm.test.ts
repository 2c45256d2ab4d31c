// The gateway SIGTERMed while clients call it, as Kubernetes stops a pod. A load balancer
// (here: a readiness poller that stops the traffic) sees readiness fail first; every call the
// gateway had accepted completes, a slow upload included whose body ends only after the
// gateway stopped accepting connections; the process exits 0 within its shutdown timeout.
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { type FaultStack, ports, report, startFaultStack } from './fault-stack';
import { type Answer, brief, call, tally, Traffic } from './traffic';

const DRAIN_MS = 1_000;
const TIMEOUT_MS = 5_000;

let world: FaultStack;
let answers: Answer[];
let slowUpload: { status: number; error?: string };
let termAt: number;
let unready: { at: number; body: string } | undefined;
let refusedAt: number | undefined;
let exit: { line: string; at: number } | undefined;

/** GET /readyz on a connection of its own, as a load balancer's health check. */
function readiness(): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const probe = request({ host: '127.0.0.1', port: ports.gateway, path: '/readyz', agent: false, timeout: 2_000 }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve({ status: 0, body: '' }));
    });
    probe.on('timeout', () => probe.destroy(new Error('timeout')));
    probe.on('error', () => resolve({ status: 0, body: '' }));
    probe.end();
  });
}

/** A POST /v1/orders whose body arrives in two halves; the second when `rest` resolves. */
function uploadSlowly(token: string, productId: string, rest: Promise<unknown>): { sent: Promise<void>; answered: Promise<{ status: number; error?: string }> } {
  const body = Buffer.from(JSON.stringify({ items: [{ productId, quantity: 1 }] }));
  let sent!: () => void;
  const headSent = new Promise<void>((resolve) => (sent = resolve));
  const answered = new Promise<{ status: number; error?: string }>((resolve) => {
    const upload = request(
      {
        host: '127.0.0.1',
        port: ports.gateway,
        method: 'POST',
        path: '/v1/orders',
        agent: false,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': body.length, 'idempotency-key': randomUUID() },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
        res.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, error: error.code ?? error.message }));
      },
    );
    upload.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, error: error.code ?? error.message }));
    upload.write(body.subarray(0, body.length >> 1), () => sent());
    void rest.then(() => upload.end(body.subarray(body.length >> 1)));
  });
  return { sent: headSent, answered };
}

beforeAll(async () => {
  // The slow upload waits for the listener to close, which comes after 40 more calls and the SIGTERM:
  // on a loaded machine that outlasts the default 5 s allowed for a body, and the minimum-rate
  // guard (tested in the gateway's own suite) would answer 408 before the drain is what is tested.
  world = await startFaultStack('sigterm', { SHUTDOWN_DRAIN_MS: String(DRAIN_MS), SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS), CLIENT_BODY_TIMEOUT_MS: '60000' });
  const customers = await Promise.all(Array.from({ length: 8 }, () => world.customer()));
  const productId = (await call('GET', '/v1/products?size=1', { token: customers[0].token })).body.items[0].id as string;
  const calls = [
    (i: number) => call('GET', '/v1/products?size=10', { token: customers[i % 8].token }),
    (i: number) => call('POST', '/v1/orders', { token: customers[i % 8].token, body: { items: [{ productId, quantity: 1 }] }, headers: { 'idempotency-key': randomUUID() } }),
    (i: number) => call('GET', '/v1/orders', { token: customers[i % 8].token }),
  ];
  const load = new Traffic({ concurrency: 4, maxCalls: 2_000, maxMs: 30_000, call: (i) => calls[i % calls.length](i) });

  let closed!: () => void;
  const listenerClosed = new Promise<void>((resolve) => (closed = resolve));
  // The load balancer: polls readiness, stops sending on the first failure, notes the refusal.
  let stopPolling = false;
  const poller = (async () => {
    while (!stopPolling && refusedAt === undefined) {
      const answer = await readiness();
      if (answer.status === 503 && !unready) {
        unready = { at: Date.now(), body: answer.body };
        void load.stop();
      }
      if (answer.status === 0) {
        refusedAt = Date.now();
        closed();
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  const slow = uploadSlowly(customers[0].token, productId, listenerClosed);
  try {
    await slow.sent;
    await load.more(40, 20_000);
    const exited = world.nextLine(/gateway exited/, DRAIN_MS + TIMEOUT_MS + 10_000).then((line) => (exit = { line, at: Date.now() }));
    termAt = Date.now();
    process.kill(world.pids.gateway, 'SIGTERM');
    await exited;
  } finally {
    stopPolling = true;
    await poller;
    closed(); // if the poller saw no refusal
    answers = await load.stop();
    slowUpload = await slow.answered;
  }
  report(
    `gateway SIGTERM: readiness failed ${unready ? unready.at - termAt : '—'} ms after, connections refused ${refusedAt ? refusedAt - termAt : '—'} ms after, ` +
      `exited ${exit ? exit.at - termAt : '—'} ms after (${exit?.line.replace(/.*gateway exited/, 'exited')}); ${answers.length} calls: ${tally(answers)}; slow upload: ${slowUpload.status || slowUpload.error}`,
  );
}, 120_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

it('fails readiness first: /readyz answers 503 "stopping" while the gateway still accepts connections', () => {
  expect(JSON.parse(unready?.body ?? '{}')).toMatchObject({ status: 'unavailable', checks: { process: 'stopping' } });
  expect(refusedAt).toBeDefined();
  expect(unready?.at).toBeLessThan(refusedAt ?? 0);
});

it('completes every call it accepted, a body still arriving after the listener closed included', () => {
  expect(answers.filter((answer) => !(answer.status >= 200 && answer.status < 300)).map(brief)).toEqual([]);
  expect(slowUpload).toEqual({ status: 201 });
});

it(`exits 0 within its drain and shutdown timeout (${DRAIN_MS} + ${TIMEOUT_MS} ms)`, () => {
  expect(exit?.line).toMatch(/gateway exited \(0\)/);
  expect((exit?.at ?? Infinity) - termAt).toBeLessThan(DRAIN_MS + TIMEOUT_MS);
});
