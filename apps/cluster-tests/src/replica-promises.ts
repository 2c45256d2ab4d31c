// "Any server instance may answer any request" (the specification), tried on two replicas of
// every app behind HAProxy, as a client: every promise that lives in a shared store (Redis for
// rate limits, PostgreSQL for the rest, the build for trusted documents, CURSOR_SECRET for
// cursors) is made on one replica and checked on the other, which HAProxy's X-Served-By names.
// With the store per process instead (e.g. the gateways without REDIS_URL), these tests fail.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { serviceTokenSource } from '@platform/auth';
import { type AdjustStockReply, InventoryClient, type StockLevel } from '@platform/inventory-contract';
import { type Answer, brief, connects, type Door, door, otherAddresses, runBounded } from '@platform/test-kit';
import { type ClusterWorld, report } from './cluster-world';

/** The gateway trusts a user's credential version this long (CREDENTIALS_CACHE_MS, documented in docs/operations.md). */
const CREDENTIALS_CACHE_MS = 5_000;
const RATE_LIMIT_POINTS = 100;
/** The gateway trusts users-service's answer about an API key this long (API_KEYS_CACHE_MS, docs/operations.md); the push is faster. */
const API_KEYS_CACHE_MS = 5_000;

let world: ClusterWorld;
let call: Door;
let productId: string;
let sku: string;

/** The tests, on the cluster `getWorld` gives once it runs (cluster.test.ts). */
export function replicaPromises(getWorld: () => ClusterWorld): void {
  beforeAll(async () => {
    world = getWorld();
    call = door(world.cluster.url);
    const { token } = await world.customer();
    const product = (await call('GET', '/v1/products?size=1&sort=createdAt,asc', { token })).body.items[0];
    productId = product.id;
    sku = product.sku;
  }, 120_000);


  /**
   * Calls `first`, then `second` until a replica other than the first's answers it; `replica`
   * names the replica of an answer. Round robin makes that the next call unless other calls to the
   * same service came between, and some come in step with the test's own: a gateway that has not
   * checked this user's credentials lately asks users-service first (always the case for a user
   * write through the other gateway, which forgets the user after it), and orders and catalog read
   * users-service's events through the same balancer. So after a try that did not cross, one more
   * `first` call shifts both round robins by one. Fails after 20 tries rather than pass without crossing.
   */
  async function acrossReplicas(replica: (answer: Answer) => string | undefined, first: () => Promise<Answer>, second: (firstAnswer: Answer) => Promise<Answer>): Promise<[Answer, Answer]> {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const one = await first();
      const two = await second(one);
      if (replica(one) && replica(two) && replica(one) !== replica(two)) return [one, two];
      await first();
    }
    throw new Error('never reached two different replicas in 20 tries');
  }

  const placeOrder = (token: string, key = randomUUID()) => call('POST', '/v1/orders', { token, body: { items: [{ productId, quantity: 1 }] }, headers: { 'idempotency-key': key } });

  it('sends consecutive requests of one client to different replicas of the gateway and of the service behind it', async () => {
    const { token } = await world.customer();
    const answers: Answer[] = [];
    for (let i = 0; i < 4; i += 1) answers.push(await call('GET', '/v1/products?size=1', { token }));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((answer) => answer.gateway))).toEqual(new Set(['gateway-1', 'gateway-2']));
    expect(new Set(answers.map((answer) => answer.service))).toEqual(new Set(['catalog-1', 'catalog-2']));
    report(`4 consecutive calls served by ${answers.map((answer) => `${answer.service} via ${answer.gateway}`).join('; ')}`);
  });

  /** Where each gateway replica counts rate limits now, read from its metrics as an operator would. */
  async function rateLimitStores(): Promise<(string | undefined)[]> {
    return Promise.all(
      world.cluster.ports.replicas.map(async (ports) => {
        const text = await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text();
        return /^gateway_rate_limit_store\{[^}]*store="(\w+)"[^}]*\} 1$/m.exec(text)?.[1];
      }),
    );
  }

  it(`counts one rate-limit budget across gateways: past ${RATE_LIMIT_POINTS} calls in a window, every gateway answers 429`, async () => {
    expect(await rateLimitStores()).toEqual(['redis', 'redis']);
    const { token } = await world.customer();
    const budget = await runBounded(RATE_LIMIT_POINTS, 5, () => call('GET', '/v1/products?size=1', { token }));
    expect(budget.filter((answer) => answer.status !== 200).map(brief)).toEqual([]);
    // Had a gateway switched to its memory meanwhile, its calls would be missing from the shared count.
    expect(await rateLimitStores()).toEqual(['redis', 'redis']);
    const perGateway = (name: string) => budget.filter((answer) => answer.gateway === name).length;
    // Each gateway alone saw about half of the budget: only a shared count reaches the limit.
    expect(Math.min(perGateway('gateway-1'), perGateway('gateway-2'))).toBeGreaterThanOrEqual(30);
    const past: Answer[] = [];
    for (let i = 0; i < 4; i += 1) past.push(await call('GET', '/v1/products?size=1', { token }));
    expect(past.map((answer) => [answer.status, answer.code])).toEqual(past.map(() => [429, 'RATE_LIMITED']));
    expect(past.every((answer) => Number(answer.headers.get('retry-after')) > 0)).toBe(true);
    expect(new Set(past.map((answer) => answer.gateway))).toEqual(new Set(['gateway-1', 'gateway-2']));
    report(`rate limit: ${perGateway('gateway-1')} + ${perGateway('gateway-2')} calls on the two gateways, then ${past.map((answer) => `${answer.status} (${answer.gateway})`).join(', ')}`);
  });

  it(`refuses a deleted user's token on every gateway within CREDENTIALS_CACHE_MS (${CREDENTIALS_CACHE_MS} ms)`, async () => {
    const user = await world.customer();
    // Both gateways have accepted the token, so each holds the user's credentials in its cache.
    const accepted = new Set<string>();
    for (let i = 0; i < 6 && accepted.size < 2; i += 1) {
      const answer = await call('GET', '/v1/users/me', { token: user.token });
      expect(answer.status).toBe(200);
      accepted.add(answer.gateway ?? '');
    }
    expect(accepted).toEqual(new Set(['gateway-1', 'gateway-2']));
    const deleted = await call('DELETE', `/v1/users/${user.userId}`, { token: user.token });
    expect(deleted.status).toBe(204);
    const deletedAt = Date.now();
    const refusedAfter = new Map<string, number>();
    while (refusedAfter.size < 2 && Date.now() - deletedAt < CREDENTIALS_CACHE_MS + 1_000) {
      const answer = await call('GET', '/v1/users/me', { token: user.token });
      if (answer.status === 401 && answer.gateway && !refusedAfter.has(answer.gateway)) refusedAfter.set(answer.gateway, Date.now() - deletedAt);
      // Until its cache expires a gateway passes the token on, and users-service finds no such user.
      else if (answer.status !== 401) expect([200, 404]).toContain(answer.status);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    report(`deleted user's token refused after ${[...refusedAfter].map(([gateway, ms]) => `${ms} ms on ${gateway}`).join(', ')}`);
    expect([...refusedAfter.keys()].sort()).toEqual(['gateway-1', 'gateway-2']);
    // And it stays refused everywhere.
    const later = [await call('GET', '/v1/users/me', { token: user.token }), await call('GET', '/v1/users/me', { token: user.token })];
    expect(later.map((answer) => answer.status)).toEqual([401, 401]);
  });

  it("cancels a deleted user's open order through user.deleted, published by one users replica and handled by either orders replica over JetStream", async () => {
    const user = await world.customer();
    const placed = await placeOrder(user.token);
    expect(placed.status).toBe(201);
    const deleted = await call('DELETE', `/v1/users/${user.userId}`, { token: user.token });
    expect(deleted.status).toBe(204);
    const deletedAt = Date.now();
    const orders = await world.database('ORDERS');
    let row: { status: string } | undefined;
    let canceledAfterMs: number | undefined;
    let handled: string[] = [];
    // The consumer handles the event (the cancellation commits), then records it as handled: wait for both.
    while (Date.now() - deletedAt < 30_000) {
      row = (await orders.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [placed.body.id])).rows[0];
      if (row?.status === 'CANCELED') canceledAfterMs ??= Date.now() - deletedAt;
      handled = (await orders.query<{ source: string }>("SELECT source FROM processed_events WHERE aggregate_type = 'user' AND aggregate_id = $1", [user.userId])).rows.map((handledRow) => handledRow.source);
      if (canceledAfterMs !== undefined && handled.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    report(`deleted user's open order canceled ${canceledAfterMs ?? 'never'} ms after the deletion (user.deleted over JetStream)`);
    expect(row?.status).toBe('CANCELED');
    // Recorded as handled once in orders' own database (a redelivery to the other replica changes nothing).
    expect(handled).toEqual(['/users-service']);
  });

  it(`refuses a revoked API key on every gateway within API_KEYS_CACHE_MS (${API_KEYS_CACHE_MS} ms)`, async () => {
    const user = await world.customer();
    const issued = await call('POST', '/v1/api-keys', { token: user.token, body: { name: 'cluster test', scopes: ['users:read'] } });
    expect(issued.status).toBe(201);
    const withKey = { headers: { 'x-api-key': issued.body.key as string } };
    // Both gateways have accepted the key, so each holds users-service's answer in its cache.
    const accepted = new Set<string>();
    for (let i = 0; i < 6 && accepted.size < 2; i += 1) {
      const answer = await call('GET', '/v1/users/me', withKey);
      expect([answer.status, answer.body.id]).toEqual([200, user.userId]);
      accepted.add(answer.gateway ?? '');
    }
    expect(accepted).toEqual(new Set(['gateway-1', 'gateway-2']));
    const revoked = await call('DELETE', `/v1/api-keys/${issued.body.id}`, { token: user.token });
    expect(revoked.status).toBe(204);
    const revokedAt = Date.now();
    const refusedAfter = new Map<string, number>();
    while (refusedAfter.size < 2 && Date.now() - revokedAt < API_KEYS_CACHE_MS + 1_000) {
      const answer = await call('GET', '/v1/users/me', withKey);
      if (answer.status === 401 && answer.gateway && !refusedAfter.has(answer.gateway)) refusedAfter.set(answer.gateway, Date.now() - revokedAt);
      else if (answer.status !== 401) expect(answer.status).toBe(200);
      // Every 100 ms: at most 60 calls in the bound, well inside the key's rate-limit budget (100 in 10 s).
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    report(`revoked API key refused after ${[...refusedAfter].map(([gateway, ms]) => `${ms} ms on ${gateway}`).join(', ')} (revoked through ${revoked.gateway})`);
    expect([...refusedAfter.keys()].sort()).toEqual(['gateway-1', 'gateway-2']);
    const later = [await call('GET', '/v1/users/me', withKey), await call('GET', '/v1/users/me', withKey)];
    expect(later.map((answer) => [answer.status, answer.code])).toEqual([
      [401, 'UNAUTHENTICATED'],
      [401, 'UNAUTHENTICATED'],
    ]);
    expect(new Set(later.map((answer) => answer.gateway))).toEqual(new Set(['gateway-1', 'gateway-2']));
  });

  it('pages with a cursor one replica issued on the other', async () => {
    const { token } = await world.customer();
    for (let i = 0; i < 3; i += 1) expect((await placeOrder(token)).status).toBe(201);
    const [first, next] = await acrossReplicas(
      (answer) => answer.service,
      () => call('GET', '/v1/orders?size=1', { token }),
      (page) => call('GET', `/v1/orders?size=1&cursor=${encodeURIComponent(page.body.nextCursor)}`, { token }),
    );
    expect(first.status).toBe(200);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    expect(next.status).toBe(200);
    expect(next.body.items).toHaveLength(1);
    expect(next.body.items[0].id).not.toBe(first.body.items[0].id);
    report(`cursor issued by ${first.service} paged on ${next.service}`);
  });

  it('honours If-Match with an ETag one replica issued on the other, and refuses a stale one there too', async () => {
    const user = await world.customer();
    let renamed = 0;
    const [read, written] = await acrossReplicas(
      (answer) => answer.service,
      () => call('GET', `/v1/users/${user.userId}`, { token: user.token }),
      (read) => call('PATCH', `/v1/users/${user.userId}`, { token: user.token, body: { name: `Renamed ${(renamed += 1)}` }, headers: { 'if-match': read.headers.get('etag') ?? '' } }),
    );
    expect(read.headers.get('etag')).toMatch(/^"\d+"$/);
    expect(written.status).toBe(200);
    expect(written.headers.get('etag')).not.toBe(read.headers.get('etag'));
    const stale = await acrossReplicas(
      (answer) => answer.service,
      () => call('GET', `/v1/users/${user.userId}`, { token: user.token }),
      () => call('PATCH', `/v1/users/${user.userId}`, { token: user.token, body: { name: 'Stale' }, headers: { 'if-match': read.headers.get('etag') ?? '' } }),
    );
    expect([stale[1].status, stale[1].code]).toEqual([412, 'PRECONDITION_FAILED']);
    report(`ETag from ${read.service} honoured by ${written.service}; the stale one refused by ${stale[1].service}`);
  });

  it('makes one order of the same Idempotency-Key sent at once to two replicas', async () => {
    let pair: Answer[] = [];
    let token = '';
    for (let attempt = 0; attempt < 5; attempt += 1) {
      ({ token } = await world.customer());
      const key = randomUUID();
      pair = await Promise.all([placeOrder(token, key), placeOrder(token, key)]);
      if (pair[0].service && pair[1].service && pair[0].service !== pair[1].service) break;
    }
    expect(new Set(pair.map((answer) => answer.service))).toEqual(new Set(['orders-1', 'orders-2']));
    const created = pair.filter((answer) => answer.status === 201);
    // Concurrent duplicates wait for the first and replay it, or answer 409 CONFLICT (docs/api.md).
    expect(pair.filter((answer) => answer.status !== 201).map((answer) => answer.code)).toEqual(pair.filter((answer) => answer.status !== 201).map(() => 'CONFLICT'));
    expect(new Set(created.map((answer) => answer.body.id)).size).toBe(1);
    const orders = await call('GET', '/v1/orders?size=10', { token });
    expect(orders.body.items.map((order: { id: string }) => order.id)).toEqual([created[0].body.id]);
    report(`same key at once on ${pair.map((answer) => `${answer.service}: ${answer.status}`).join(' and ')}; one order`);
  });

  it('runs a trusted GraphQL document, sent by its hash, on every gateway', async () => {
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '../../gateway/src/graphql/trusted-documents.json'), 'utf8')) as Record<string, string>;
    const [hash] = Object.entries(manifest).find(([, text]) => /query Me\b/.test(text)) ?? [];
    expect(hash).toBeDefined();
    const user = await world.customer();
    const answers: Answer[] = [];
    for (let i = 0; i < 2; i += 1) answers.push(await call('POST', '/v1/graphql', { token: user.token, body: { extensions: { persistedQuery: { version: 1, sha256Hash: hash } } } }));
    expect(answers.map((answer) => answer.body)).toEqual(answers.map(() => ({ data: { me: expect.objectContaining({ id: user.userId }) }, extensions: expect.anything() })));
    expect(new Set(answers.map((answer) => answer.gateway))).toEqual(new Set(['gateway-1', 'gateway-2']));
  });

  it('shows a WatchStock watcher on one inventory replica a change made through the other', async () => {
    const client = new InventoryClient(world.cluster.grpcAddress, credentials.createInsecure());
    const ordersToken = serviceTokenSource(world.jwtSecret, 'orders-service');
    const bearing = async () => {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${await ordersToken()}`);
      return metadata;
    };
    const levels: StockLevel[] = [];
    const watch = client.watchStock({ skus: [sku] }, await bearing());
    try {
      const watcherReplica = new Promise<string>((resolve) => watch.on('metadata', (metadata: Metadata) => resolve(String(metadata.get('x-served-by')[0] ?? ''))));
      const firstLevel = new Promise<void>((resolve) => watch.once('data', () => resolve()));
      watch.on('data', (level: StockLevel) => levels.push(level));
      watch.on('error', () => undefined); // cancelled at the end
      await firstLevel;
      const watchedOn = await watcherReplica;
      expect(watchedOn).toMatch(/^inventory-grpc-[12]$/);
      // Adjust through the door until the other replica makes the change.
      let change: { replica: string; reply: AdjustStockReply } | undefined;
      for (let attempt = 0; attempt < 6 && (!change || change.replica === watchedOn); attempt += 1) {
        const metadata = await bearing();
        change = await new Promise((resolve, reject) => {
          let replica = '';
          const unary = client.adjustStock({ sku, delta: 1, changeReason: 'cluster test', reason: '', requestId: randomUUID() }, metadata, (error: ServiceError | null, reply: AdjustStockReply) => (error ? reject(error) : resolve({ replica, reply })));
          unary.on('metadata', (headers: Metadata) => (replica = String(headers.get('x-served-by')[0] ?? '')));
        });
      }
      expect(change?.replica).toMatch(/^inventory-grpc-[12]$/);
      expect(change?.replica).not.toBe(watchedOn);
      const deadline = Date.now() + 5_000;
      while (!levels.some((level) => level.onHand === change?.reply.level?.onHand) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(levels.map((level) => level.onHand)).toContain(change?.reply.level?.onHand);
      report(`watcher on ${watchedOn} saw on_hand ${change?.reply.level?.onHand} set through ${change?.replica}`);
    } finally {
      watch.cancel();
      client.close();
    }
  });

  it("reads a 202 cancellation job's status on every replica", async () => {
    const { token } = await world.customer();
    const order = await placeOrder(token);
    expect(order.status).toBe(201);
    const accepted = await call('POST', `/v1/orders/${order.body.id}/cancellation`, { token, body: { reason: 'cluster test' } });
    expect(accepted.status).toBe(202);
    const readers = new Map<string, Answer>();
    for (let i = 0; i < 6 && readers.size < 2; i += 1) {
      const answer = await call('GET', `/v1/orders/${order.body.id}/cancellation`, { token });
      expect(answer.status).toBe(200);
      readers.set(answer.service ?? '', answer);
    }
    expect([...readers.keys()].sort()).toEqual(['orders-1', 'orders-2']);
    for (const answer of readers.values()) expect(answer.body.id).toBe(accepted.body.id);
    // The job completes on whichever replica's sweeper takes it; both see it done.
    const completed = new Set<string>();
    const deadline = Date.now() + 10_000;
    while (completed.size < 2 && Date.now() < deadline) {
      const answer = await call('GET', `/v1/orders/${order.body.id}/cancellation`, { token });
      if (answer.body?.status === 'COMPLETED') completed.add(answer.service ?? '');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect([...completed].sort()).toEqual(['orders-1', 'orders-2']);
    report(`cancellation accepted by ${accepted.service}, read on ${[...readers.keys()].join(' and ')}, seen COMPLETED on both`);
  });

  it("is reached only through HAProxy: every replica port answers on loopback and refuses the machine's other addresses", async () => {
    const others = otherAddresses();
    expect(others.length).toBeGreaterThan(0);
    const ports = world.cluster.ports.replicas.flatMap((replica) => Object.entries(replica));
    for (const [name, port] of ports) {
      expect([name, port, await connects('127.0.0.1', port)]).toEqual([name, port, true]);
      for (const address of others) expect([name, port, address, await connects(address, port)]).toEqual([name, port, address, false]);
    }
  });
}
