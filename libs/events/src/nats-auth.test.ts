// The broker's authorization as prod runs it: a nats-server of the test's own with the very
// authorization block of deploy/k8s/overlays/prod/nats.yaml (test passwords for its $variables).
// A service signed in as itself publishes and consumes its events as without authentication,
// and cannot publish under another service's name: no forged `user.deleted` from orders-service
// (or anyone) reaches the stream. The block is generated from the wiring the services run with
// (eventSubscriptions, PARTITIONS; tools/deploy/render-nats-auth.ts): every service here consumes
// every source it is wired to over every partition, and cannot touch another's durable consumers.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createLogger } from '@platform/service-kit';
import { NatsServer } from '@platform/test-kit';
import { parse } from 'yaml';
import { toCloudEvent } from './envelope';
import { eventsConfigFrom } from './config';
import { applyEventsStream, durableNameOf, EVENTS_STREAM, inboxPrefixOf, NatsTransport, PARTITIONS, partitionFilterOf } from './nats-transport';
import { natsPasswordVariableOf, natsUsers } from './nats-permissions';
import { eventServices, eventSubscriptions, subscriptionOf } from './subscriptions';

const logger = createLogger('nats-auth-test', 'silent');
/** The events settings with their defaults, as a service reads them from an empty environment. */
const eventsConfig = eventsConfigFrom({});
const services = eventServices;
const passwordOf = (service: string) => `test-password-of-${service}`;
/** A forged publish must fail; this long for JetStream's answer that never comes is plenty on a local server. */
const PUBLISH_TIMEOUT_MS = 2_000;

/** nats.conf's `authorization { … }` block, as the prod overlay ships it. */
function prodAuthorization(): string {
  const manifest = readFileSync(path.resolve(__dirname, '../../../deploy/k8s/overlays/prod/nats.yaml'), 'utf8');
  const configMap = manifest.split(/^---$/m).map((document) => parse(document)).find((object) => object?.kind === 'ConfigMap' && object.metadata.name === 'nats-config');
  const conf = configMap.data['nats.conf'] as string;
  const start = conf.indexOf('authorization {');
  if (start < 0) throw new Error('no authorization block in nats.conf');
  let depth = 0;
  for (let index = conf.indexOf('{', start); index < conf.length; index++) {
    if (conf[index] === '{') depth++;
    else if (conf[index] === '}' && --depth === 0) return conf.slice(start, index + 1);
  }
  throw new Error('unbalanced authorization block in nats.conf');
}

let server: NatsServer;

beforeAll(async () => {
  const env = Object.fromEntries(natsUsers.map((user) => [natsPasswordVariableOf(user), passwordOf(user)]));
  server = await NatsServer.start(undefined, { config: prodAuthorization(), env });
  // As in prod, the events-stream Job creates the stream as stream-admin; the services only read it.
  await applyEventsStream(streamAdminConfig(), logger);
});

/** The events-stream Job's settings: the stream-admin user, these stream settings. */
const streamAdminConfig = (settings: Partial<typeof eventsConfig> = {}) => ({ ...eventsConfig, ...settings, NATS_URL: server.url, NATS_USER: 'stream-admin', NATS_PASSWORD: passwordOf('stream-admin') });

afterAll(async () => {
  await server?.stop();
});

const signedInAs = (service: string) => NatsTransport.connect({ servers: server.url, name: service, user: service, pass: passwordOf(service), logger, publishTimeoutMs: PUBLISH_TIMEOUT_MS, connectWithinMs: 0, stream: 'check' });
const userId = '01900000-0000-7000-8000-000000000001';
const deletedBy = (source: string, sequence: number) =>
  toCloudEvent(`/${source}`, { id: `01900000-0000-7000-8000-${String(sequence).padStart(12, '0')}`, type: 'user.deleted', aggregateType: 'user', aggregateId: userId, sequence, data: { id: userId }, occurredAt: new Date() });

async function storedEvents(): Promise<number> {
  const connection = await connect({ servers: server.url, user: 'users-service', pass: passwordOf('users-service'), inboxPrefix: inboxPrefixOf('users-service') });
  try {
    return (await (await jetstreamManager(connection)).streams.info(EVENTS_STREAM)).state.messages;
  } finally {
    await connection.close();
  }
}

it('lets a service publish its own events and the services consume them, each signed in as itself', async () => {
  const users = await signedInAs('users-service');
  const orders = await signedInAs('orders-service');
  try {
    await users.publish([deletedBy('users-service', 1)]);
    const seen: string[] = [];
    const consumptions = await Promise.all([
      orders.consume({ consumer: 'orders-service', sources: ['users-service'], types: ['user.deleted'] }, async ({ event }) => void seen.push(`orders-service got ${event.id}`)),
      users.consume({ consumer: 'users-service', sources: ['users-service'], types: ['user.deleted'] }, async ({ event }) => void seen.push(`users-service got ${event.id}`)),
    ]);
    for (const giveUpAt = Date.now() + 60_000; seen.length < 2 && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 20));
    await Promise.all(consumptions.map((consumption) => consumption.stop()));
    expect(seen.sort()).toEqual([`orders-service got ${deletedBy('users-service', 1).id}`, `users-service got ${deletedBy('users-service', 1).id}`]);
  } finally {
    await users.close();
    await orders.close();
  }
});

it('lets every service consume every source it is wired to, on every partition (each durable consumer the generated block names)', async () => {
  const transports = Object.fromEntries(await Promise.all(services.map(async (service) => [service, await signedInAs(service)] as const)));
  try {
    // One event of each producer; its aggregate decides its partition, and every partition's durable is made and pulled.
    const published = services.map((source, index) => deletedBy(source, 100 + index));
    for (const [index, source] of services.entries()) await transports[source].publish([published[index]]);
    const wanted = services.flatMap((consumer) => eventSubscriptions[consumer].map((source) => `${consumer} got ${published[services.indexOf(source)].id}`));
    const seen = new Set<string>();
    const consumptions = await Promise.all(
      services.filter((service) => eventSubscriptions[service].length > 0).map((service) => transports[service].consume({ ...subscriptionOf(service), types: ['user.deleted'] }, async ({ event }) => void seen.add(`${service} got ${event.id}`))),
    );
    for (const giveUpAt = Date.now() + 20_000; wanted.some((entry) => !seen.has(entry)) && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 20));
    await Promise.all(consumptions.map((consumption) => consumption.stop()));
    expect(wanted.filter((entry) => !seen.has(entry))).toEqual([]);
    expect(wanted.length).toBeGreaterThan(services.length); // users-service reads all four, the others users-service's
    // Each service made its durable consumer of every source and partition: none was refused.
    const operator = await connect({ servers: server.url, user: 'operator', pass: passwordOf('operator') });
    try {
      const names = new Set<string>();
      for await (const info of (await jetstreamManager(operator)).consumers.list(EVENTS_STREAM)) names.add(info.name);
      const durables = services.flatMap((consumer) => eventSubscriptions[consumer].flatMap((source) => Array.from({ length: PARTITIONS }, (_, partition) => durableNameOf(consumer, source, partition))));
      expect(durables.filter((name) => !names.has(name))).toEqual([]);
    } finally {
      await operator.close();
    }
  } finally {
    await Promise.all(Object.values(transports).map((transport) => transport.close()));
  }
});

it("keeps a service to its own durable consumers: another service's it can neither create, read nor pull from, nor its own on other events", async () => {
  // orders-service's durables exist (it consumed above); catalog-service reads the same source.
  const theirs = durableNameOf('orders-service', 'users-service', 0);
  const connection = await connect({ servers: server.url, user: 'catalog-service', pass: passwordOf('catalog-service'), inboxPrefix: inboxPrefixOf('catalog-service') });
  try {
    const manager = await jetstreamManager(connection, { timeout: 5_000 });
    await expect(manager.consumers.info(EVENTS_STREAM, theirs)).rejects.toThrow(/permission/i);
    await expect(manager.consumers.add(EVENTS_STREAM, { durable_name: theirs, filter_subject: partitionFilterOf('users-service', 0), ack_policy: AckPolicy.Explicit })).rejects.toThrow(/permission/i);
    await expect(manager.consumers.add(EVENTS_STREAM, { durable_name: durableNameOf('catalog-service', 'users-service', 0), filter_subject: partitionFilterOf('orders-service', 0), ack_policy: AckPolicy.Explicit })).rejects.toThrow(/permission/i);
    await expect(connection.request(`$JS.API.CONSUMER.MSG.NEXT.${EVENTS_STREAM}.${theirs}`, JSON.stringify({ batch: 1 }), { timeout: 2_000 })).rejects.toThrow(/permission/i);
    // Its own durable, as the transport makes it, it may read: the refusals above are about whose it is.
    expect((await manager.consumers.info(EVENTS_STREAM, durableNameOf('catalog-service', 'users-service', 0))).name).toBe(durableNameOf('catalog-service', 'users-service', 0));
  } finally {
    await connection.close();
  }
});

it("keeps a service out of another service's reply inboxes: it cannot read the events pulled for it, and consumes its own as before", async () => {
  // catalog-service listens where orders-service's replies arrive, under its inbox prefix as well
  // as the shared `_INBOX.` (where they arrived before each service had a prefix of its own).
  const spy = await connect({ servers: server.url, user: 'catalog-service', pass: passwordOf('catalog-service'), inboxPrefix: inboxPrefixOf('catalog-service') });
  const overheard: string[] = [];
  const refusals: string[] = [];
  for (const subject of [`${inboxPrefixOf('orders-service')}.>`, '_INBOX.>'])
    spy.subscribe(subject, {
      callback: (error: Error | null, message: { string(): string }) => {
        if (error) refusals.push(String(error));
        else overheard.push(message.string());
      },
    });
  await spy.flush();
  const users = await signedInAs('users-service');
  const orders = await signedInAs('orders-service');
  const catalog = await signedInAs('catalog-service');
  try {
    const event = deletedBy('users-service', 4);
    await users.publish([event]);
    const seen: string[] = [];
    const consumptions = await Promise.all(
      ['orders-service', 'catalog-service'].map((service) => (service === 'orders-service' ? orders : catalog).consume({ consumer: service, sources: ['users-service'], types: ['user.deleted'] }, async ({ event: got }) => void seen.push(`${service} got ${got.id}`))),
    );
    for (const giveUpAt = Date.now() + 20_000; seen.length < 2 && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 20));
    await Promise.all(consumptions.map((consumption) => consumption.stop()));
    await spy.flush();
    // Both consume it through their own inboxes; the spy heard none of orders-service's replies, not even the event.
    expect(seen.sort()).toEqual([`catalog-service got ${event.id}`, `orders-service got ${event.id}`]);
    expect(overheard.filter((body) => body.includes(event.id))).toEqual([]);
    expect(overheard).toEqual([]);
    expect(refusals.join('\n')).toMatch(/permissions violation for subscription to "_INBOX_orders-service\.>"/i);
    expect(refusals.join('\n')).toMatch(/permissions violation for subscription to "_INBOX\.>"/i);
  } finally {
    await Promise.all([users, orders, catalog].map((transport) => transport.close()));
    await spy.close();
  }
});

it("refuses a service's publish under another service's name, and stores nothing of it", async () => {
  const before = await storedEvents();
  const users = await signedInAs('users-service');
  try {
    // The forged event of the security report: orders-service's subject, from users-service's credentials.
    await expect(users.publish([deletedBy('orders-service', 2)])).rejects.toThrow();
  } finally {
    await users.close();
  }
  // A raw publish on the subject the report names: the server answers with a permissions violation.
  const raw = await connect({ servers: server.url, user: 'users-service', pass: passwordOf('users-service') });
  try {
    const refused = (async () => {
      for await (const status of raw.status()) if (status.type === 'error') return String(status.error);
      return 'closed';
    })();
    raw.publish('events.orders-service.p3.user.deleted', JSON.stringify(deletedBy('orders-service', 3).toJSON()));
    expect(await refused).toMatch(/permissions violation for publish to "events\.orders-service\.p3\.user\.deleted"/i);
  } finally {
    await raw.close();
  }
  expect(await storedEvents()).toBe(before);
});

it("lets the events-stream Job's user, stream-admin, change the stream's settings, and nothing else: no purge or deletion, no other stream, no event, no consumer", async () => {
  const maxBytesNow = async () => {
    const operator = await connect({ servers: server.url, user: 'operator', pass: passwordOf('operator') });
    try {
      return (await (await jetstreamManager(operator)).streams.info(EVENTS_STREAM)).config.max_bytes;
    } finally {
      await operator.close();
    }
  };
  // A changed NATS_STREAM_MAX_BYTES, applied again (the Job of the next `kubectl apply`), then put back.
  await applyEventsStream(streamAdminConfig({ NATS_STREAM_MAX_BYTES: 512 * 1024 ** 2 }), logger);
  expect(await maxBytesNow()).toBe(512 * 1024 ** 2);
  await applyEventsStream(streamAdminConfig(), logger);
  expect(await maxBytesNow()).toBe(eventsConfig.NATS_STREAM_MAX_BYTES);

  const before = await storedEvents();
  const connection = await connect({ servers: server.url, user: 'stream-admin', pass: passwordOf('stream-admin'), inboxPrefix: inboxPrefixOf('stream-admin') });
  try {
    const manager = await jetstreamManager(connection, { timeout: 5_000 });
    const { config } = await manager.streams.info(EVENTS_STREAM);
    await expect(manager.streams.purge(EVENTS_STREAM)).rejects.toThrow(/permission/i);
    await expect(manager.streams.delete(EVENTS_STREAM)).rejects.toThrow(/permission/i);
    await expect(manager.streams.add({ ...config, name: 'EVENTS2', subjects: ['other.>'] })).rejects.toThrow(/permission/i);
    await expect(manager.consumers.info(EVENTS_STREAM, durableNameOf('orders-service', 'users-service', 0))).rejects.toThrow(/permission/i);
    await expect(manager.consumers.add(EVENTS_STREAM, { durable_name: 'stream-admin-reads', ack_policy: AckPolicy.Explicit })).rejects.toThrow(/permission/i);
    // A forged user.deleted goes nowhere: its publish is refused and the stream stores nothing.
    await expect(jetstream(connection).publish('events.users-service.p0.user.deleted', JSON.stringify(deletedBy('users-service', 900).toJSON()), { timeout: PUBLISH_TIMEOUT_MS })).rejects.toThrow();
  } finally {
    await connection.close();
  }
  expect(await storedEvents()).toBe(before);
});

it("leaves the stream to stream-admin: a service reads it, but can neither create, change, purge nor delete it", async () => {
  // A compromised service could otherwise widen its subjects, cut its retention to nothing or purge it.
  const connection = await connect({ servers: server.url, user: 'orders-service', pass: passwordOf('orders-service'), inboxPrefix: inboxPrefixOf('orders-service') });
  try {
    const manager = await jetstreamManager(connection, { timeout: 5_000 });
    const { config } = await manager.streams.info(EVENTS_STREAM);
    await expect(manager.streams.update(EVENTS_STREAM, { ...config, max_age: 3_600 * 1_000_000_000, subjects: ['events.>', 'other.>'] })).rejects.toThrow(/permission/i);
    await expect(manager.streams.add({ ...config, name: 'EVENTS2' })).rejects.toThrow(/permission/i);
    await expect(manager.streams.purge(EVENTS_STREAM)).rejects.toThrow(/permission/i);
    await expect(manager.streams.delete(EVENTS_STREAM)).rejects.toThrow(/permission/i);
  } finally {
    await connection.close();
  }
  const operator = await connect({ servers: server.url, user: 'operator', pass: passwordOf('operator') });
  try {
    expect((await (await jetstreamManager(operator)).streams.info(EVENTS_STREAM)).config).toMatchObject({ subjects: ['events.>'], max_age: eventsConfig.NATS_STREAM_MAX_AGE_S * 1_000_000_000 });
  } finally {
    await operator.close();
  }
});

it('refuses a connection without credentials or with the wrong password', async () => {
  await expect(connect({ servers: server.url })).rejects.toThrow(/authorization/i);
  await expect(connect({ servers: server.url, user: 'orders-service', pass: passwordOf('users-service') })).rejects.toThrow(/authorization/i);
});

it("lets the operators' user read the stream, as the runbook's nats commands do", async () => {
  const connection = await connect({ servers: server.url, user: 'operator', pass: passwordOf('operator') });
  try {
    const manager = await jetstreamManager(connection, { timeout: 5_000 });
    expect((await manager.streams.info(EVENTS_STREAM)).config.name).toBe(EVENTS_STREAM);
  } finally {
    await connection.close();
  }
});
