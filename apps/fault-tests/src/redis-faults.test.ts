// Redis, the gateway's rate-limit store, frozen (SIGSTOP) and then killed and restarted empty,
// while clients call through the whole stack: no 5xx, limits keep applying, and once Redis is
// back the gateway counts there again without handing anyone a fresh budget.
import { percentile } from '@platform/test-kit';
import { type FaultStack, rateLimitStore, report, startFaultStack, until } from './fault-stack';
import { type Answer, between, brief, call, tally, Traffic } from './traffic';

const POINTS = 30;
let world: FaultStack;

beforeAll(async () => {
  // A window longer than the test: budgets only go down.
  world = await startFaultStack('redis', { RATE_LIMIT_POINTS: String(POINTS), RATE_LIMIT_WINDOW_S: '600' });
}, 120_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

const remainingOf = (answer: Answer) => Number(/;r=(\d+);/.exec(answer.rateLimit ?? '')?.[1]);

describe.each([
  { fault: 'hangs (SIGSTOP)', begin: () => world.redis.pause(), end: async () => world.redis.resume() },
  { fault: 'is killed (SIGKILL), then restarted empty', begin: () => world.redis.kill(), end: () => world.redis.restart() },
])('Redis $fault under load', ({ fault, begin, end }) => {
  it('answers only 200/429, still limits, and is back on Redis afterwards with every budget kept', async () => {
    // A call still unanswered after 3 s counts as hung (status 0).
    const products = (token: string) => call('GET', '/v1/products?size=5', { token, timeoutMs: 3_000 });
    const inTurn = async (count: number, token: string) => {
      const answers: Answer[] = [];
      while (answers.length < count && answers.at(-1)?.status !== 0) answers.push(await products(token));
      return answers;
    };
    const [spender, limited] = await Promise.all([world.customer(), world.customer()]);
    // Enough callers that the whole run stays within each one's budget even on a quick machine.
    const crowd = await Promise.all(Array.from({ length: 100 }, () => world.customer()));
    const before = await inTurn(5, spender.token);

    // At most 25 calls per crowd member: within every budget.
    const load = new Traffic({ concurrency: 4, maxCalls: 2_500, maxMs: 60_000, call: (i) => products(crowd[i % crowd.length].token) });
    await load.more(20, 20_000);
    const faultAt = Date.now();
    await begin();
    const limitedAnswers = await inTurn(POINTS + 5, limited.token);
    const spenderAnswers = await inTurn(5, spender.token);
    const storeDuring = await rateLimitStore();
    await load.more(100, 30_000);
    const returnedAt = Date.now();
    await end();
    await until('the gateway back on Redis', 15_000, async () => (await rateLimitStore()) === 'redis');
    const backAt = Date.now();
    await load.more(20, 20_000);
    const crowdAnswers = await load.stop();
    const spenderAfter = await products(spender.token);
    const limitedAfter = await products(limited.token);

    const during = between(crowdAnswers, faultAt, returnedAt);
    const latencies = during.map((answer) => answer.endedAt - answer.startedAt);
    report(
      `Redis ${fault}: ${crowdAnswers.length} crowd calls (${tally(crowdAnswers)}), ${during.length} of them during the fault: p50 ${percentile(latencies, 0.5)} ms, p99 ${percentile(latencies, 0.99)} ms, max ${Math.max(...latencies)} ms; ` +
        `limited caller: ${tally(limitedAnswers)}; back on Redis ${backAt - returnedAt} ms after Redis returned`,
    );
    expect([...before, ...crowdAnswers, ...spenderAnswers, spenderAfter].filter((answer) => answer.status !== 200).map(brief)).toEqual([]);
    expect(storeDuring).toBe('memory');
    expect(limitedAnswers.map((answer) => answer.status)).toEqual([...Array(POINTS).fill(200), ...Array(5).fill(429)]);
    expect(limitedAnswers[POINTS].retryAfter).toMatch(/^\d+$/);
    // Back on Redis, the outage's counts still hold: 30 - 5 before - 5 during - 1 now.
    expect(remainingOf(spenderAfter)).toBe(POINTS - 11);
    expect(limitedAfter.status).toBe(429);
  });
});
