// users-service, which confirms every token's credential version to the gateway, frozen (SIGSTOP)
// and then killed while a signed-in customer calls through the gateway. Once the gateway's answer
// for that customer is older than its bound (CREDENTIALS_CACHE_MS, 1 s here to keep the case
// short; 5 s by default), each call is 503 SERVICE_UNAVAILABLE with Retry-After: never let through
// on an old answer, never another 5xx. Once users-service answers again, the calls succeed.
import { report, startFaultStack, type FaultStack, until } from './fault-stack';
import { brief, call } from './traffic';

const CACHE_MS = 1_000;
let world: FaultStack;

beforeAll(async () => {
  world = await startFaultStack('users', { CREDENTIALS_CACHE_MS: String(CACHE_MS) });
}, 120_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

const usersPid = () => world.pids['users-service'];

describe.each([
  { fault: 'hangs (SIGSTOP)', begin: async () => void process.kill(usersPid(), 'SIGSTOP'), end: async () => void process.kill(usersPid(), 'SIGCONT') },
  {
    fault: 'is killed (SIGKILL), then started again',
    begin: async () => {
      process.kill(usersPid(), 'SIGKILL');
      await world.nextLine(/users-service exited/, 10_000);
    },
    end: () => world.restart('users-service'),
  },
])('users-service $fault', ({ fault, begin, end }) => {
  it('answers a signed-in call 503 with Retry-After once its credential answer is older than the bound, and 200 again after', async () => {
    const { token } = await world.customer();
    const products = () => call('GET', '/v1/products?size=1', { token, timeoutMs: 5_000 });
    expect(brief(await products())).toMatch(/→ 200$/);
    const answeredAt = Date.now();
    await begin();
    let ended = false;
    try {
      // Still younger than the bound: served from the gateway's answer, users-service not asked.
      const fresh = await products();
      if (Date.now() - answeredAt < CACHE_MS) expect(brief(fresh)).toMatch(/→ 200$/);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, answeredAt + CACHE_MS + 100 - Date.now())));
      const refused = [];
      for (let i = 0; i < 3; i++) refused.push(await products());
      expect(refused.filter((answer) => !(answer.status === 503 && answer.code === 'SERVICE_UNAVAILABLE' && /^\d+$/.test(answer.retryAfter ?? ''))).map(brief)).toEqual([]);
      const endedAt = Date.now();
      await end();
      ended = true;
      await until('served again', 30_000, async () => (await products()).status === 200);
      report(`users-service ${fault}: ${refused.length} calls past the ${CACHE_MS} ms bound refused 503 (${refused.map((answer) => `${answer.endedAt - answer.startedAt} ms`).join(', ')}); served again ${Date.now() - endedAt} ms after the fault ended (a restart included)`);
    } finally {
      if (!ended) await end().catch(() => undefined);
    }
  }, 60_000);
});
