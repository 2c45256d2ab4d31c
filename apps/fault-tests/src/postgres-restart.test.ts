// PostgreSQL (every service's database) stopped and started again while clients call through
// the gateway: while it is down each call is a 503 SERVICE_UNAVAILABLE with Retry-After, never
// another 5xx or a dropped connection; once it is up, calls succeed again, no app restarted.
import { alive } from '@platform/test-kit';
import { type FaultStack, report, startFaultStack } from './fault-stack';
import { type Answer, between, brief, call, tally, Traffic } from './traffic';

let world: FaultStack;
let answers: Answer[];
let outage: Answer[];
/** When `pg_ctl stop` returned, when `pg_ctl start` began and when it returned (epoch ms). */
let downAt: number;
let startingAt: number;
let upAt: number;
let pidsBefore: Record<string, number>;

beforeAll(async () => {
  world = await startFaultStack('postgres');
  pidsBefore = { ...world.pids };
  const users = await Promise.all(
    [1, 2].map(async (n) => {
      const email = `fault-pg-${Date.now()}-${n}@example.com`;
      const signedUp = await call('POST', '/v1/users', { body: { name: `Fault ${n}`, email, password: 'fault-password-1' } });
      expect(signedUp.status).toBe(201);
      const token = await call('POST', '/v1/tokens', { body: { email, password: 'fault-password-1' } });
      expect(token.status).toBe(200);
      return token.body.accessToken as string;
    }),
  );
  // Each service's database in turn; one call in eight a sign-up (a write).
  const calls = [
    () => call('GET', '/v1/users/me', { token: users[0] }),
    () => call('GET', '/v1/products?size=5', { token: users[1] }),
    () => call('GET', '/v1/orders', { token: users[0] }),
    () => call('GET', '/v1/products?size=5&sort=price,asc', { token: users[0] }),
    () => call('GET', '/v1/users/me', { token: users[1] }),
    () => call('GET', '/v1/orders', { token: users[1] }),
    () => call('GET', '/v1/products?size=5', { token: users[0] }),
    () => call('POST', '/v1/users', { body: { name: 'Fault', email: `fault-pg-${Date.now()}-${Math.random()}@example.com`, password: 'fault-password-1' } }),
  ];
  const load = new Traffic({ concurrency: 4, maxCalls: 3_000, maxMs: 60_000, call: (i) => calls[i % calls.length]() });
  try {
    await load.more(40, 20_000);
    await world.postgres.stopServer('fast');
    downAt = Date.now();
    await load.more(150, 20_000);
    startingAt = Date.now();
    await world.postgres.startServer();
    upAt = Date.now();
    // Until 80 calls in a row have succeeded, or the traffic's own limits end it (the last
    // test then says the stack did not recover).
    const recovered = () => load.answers.length >= 80 && load.answers.slice(-80).every((answer) => answer.status >= 200 && answer.status < 300 && answer.startedAt > upAt);
    while (!recovered() && (await load.more(1, 30_000).then(() => true, () => false)));
  } finally {
    answers = await load.stop();
  }
  outage = between(answers, downAt, startingAt);
  const failedAfterStart = answers.filter((answer) => answer.endedAt > upAt && !(answer.status >= 200 && answer.status < 300));
  const recoveredAt = Math.max(upAt, ...failedAfterStart.map((answer) => answer.endedAt));
  report(
    `PostgreSQL down ${startingAt - downAt} ms: ${answers.length} calls (${tally(answers)}); during the outage: ${tally(outage)}; ` +
      `pg_ctl start took ${upAt - startingAt} ms, last failed call ${recoveredAt - upAt} ms after it returned`,
  );
}, 120_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

it('answers 503 SERVICE_UNAVAILABLE with Retry-After to every call while PostgreSQL is down', () => {
  expect(outage.length).toBeGreaterThanOrEqual(20);
  expect(outage.filter((answer) => !(answer.status === 503 && answer.code === 'SERVICE_UNAVAILABLE' && /^\d+$/.test(answer.retryAfter ?? ''))).map(brief)).toEqual([]);
});

it('never answers another 5xx or drops a connection, before, during or after', () => {
  expect(answers.filter((answer) => !((answer.status >= 200 && answer.status < 300) || answer.status === 503)).map(brief)).toEqual([]);
});

it('serves again once PostgreSQL is up, without restarting any app', () => {
  expect(answers.slice(-80).every((answer) => answer.status >= 200 && answer.status < 300)).toBe(true);
  expect(world.pids).toEqual(pidsBefore);
  expect(Object.values(pidsBefore).every(alive)).toBe(true);
});
