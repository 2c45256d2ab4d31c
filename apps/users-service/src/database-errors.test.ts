// The database errors libs/db recognises, as the database really raises them through Prisma 7 and
// its driver adapter (PostgreSQL when TEST_DATABASE_URL is set, PGlite otherwise): a broken
// unique index, a deadlock, a server that cannot be reached or cuts the connection. It lives
// here because it needs a generated Prisma client, and the users table (a unique email key)
// serves. Each error is recognised by its code and SQLSTATE, whatever its message says.
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { type Database, isDatabaseUnavailable, isDeadlock, isUniqueViolation } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { PrismaClient } from './generated/prisma/client';

let database: Database<PrismaClient>;

beforeAll(async () => {
  database = await openTestDatabase({ service: 'users_db_errors', migrationsDir: path.join(__dirname, '../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
});

afterAll(async () => {
  await database?.close();
});

const newUser = (emailKey: string) => ({ id: randomUUID(), name: 'Someone', email: emailKey, emailKey, passwordHash: 'not-a-hash' });

/** The error `work` rejects with (fails the test when it resolves). */
async function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => {
      throw new Error('expected the database to refuse');
    },
    (error: unknown) => error,
  );
}

describe('a broken unique index', () => {
  it('is recognised from a model query (P2002) and from raw SQL (SQLSTATE 23505 under P2010)', async () => {
    const emailKey = `taken-${randomUUID()}@example.com`;
    await database.prisma.user.create({ data: newUser(emailKey) });
    const modelError = await rejection(database.prisma.user.create({ data: newUser(emailKey) }));
    const rawError = await rejection(
      database.prisma.$executeRawUnsafe(`INSERT INTO users (id, name, email, email_key, password_hash, updated_at) VALUES ($1::uuid, 'Someone', $2, $2, 'not-a-hash', now())`, randomUUID(), emailKey),
    );
    expect([isUniqueViolation(modelError), isUniqueViolation(rawError)]).toEqual([true, true]);
    expect([isDeadlock(modelError), isDatabaseUnavailable(modelError)]).toEqual([false, false]);
  });

  it('is not confused with another constraint', async () => {
    const nullViolation = await rejection(database.prisma.$executeRawUnsafe(`INSERT INTO users (id, name, email, email_key, password_hash) VALUES ($1::uuid, 'Someone', 'a', 'a', 'h')`, randomUUID()));
    expect([isUniqueViolation(nullViolation), isDeadlock(nullViolation), isDatabaseUnavailable(nullViolation)]).toEqual([false, false, false]);
  });
});

describe('a deadlock (SQLSTATE 40P01)', () => {
  it('is recognised whichever adapter reports it', async () => {
    // PGlite has one connection and cannot deadlock: PostgreSQL's code raised as PostgreSQL would.
    const raised = await rejection(database.prisma.$executeRawUnsafe(`DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40P01', MESSAGE = 'an error by its code alone'; END $$`));
    expect([isDeadlock(raised), isUniqueViolation(raised), isDatabaseUnavailable(raised)]).toEqual([true, false, false]);
  });

  it('is recognised when two transactions lock rows in opposite orders (PostgreSQL; PGlite runs them one after the other)', async () => {
    const [first, second] = [newUser(`a-${randomUUID()}`), newUser(`b-${randomUUID()}`)];
    await database.prisma.user.createMany({ data: [first, second] });
    const lockBoth = (one: string, other: string) =>
      database.prisma.$transaction(async (tx) => {
        await tx.user.update({ where: { id: one }, data: { name: 'Locked' } });
        await new Promise((resolve) => setTimeout(resolve, 300));
        await tx.user.update({ where: { id: other }, data: { name: 'Locked' } });
      });
    const outcomes = await Promise.allSettled([lockBoth(first.id, second.id), lockBoth(second.id, first.id)]);
    const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    expect(failures.map(isDeadlock)).toEqual(database.kind === 'postgresql' ? [true] : []);
  });
});

describe('a database that cannot be reached', () => {
  const servers: Server[] = [];
  afterAll(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));

  /** A PostgreSQL client whose server at a local port does what `onConnection` says. */
  async function clientOfPeer(onConnection: (socket: Socket) => void): Promise<PrismaClient> {
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      onConnection(socket);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    return new PrismaClient({ adapter: new PrismaPg({ connectionString: `postgresql://postgres@127.0.0.1:${(server.address() as { port: number }).port}/users` }) });
  }

  it('is recognised when the connection is refused, from a model query and from raw SQL', async () => {
    const refused = await clientOfPeer(() => undefined);
    await new Promise((resolve) => servers.pop()!.close(resolve));
    try {
      expect(isDatabaseUnavailable(await rejection(refused.user.findFirst()))).toBe(true);
      expect(isDatabaseUnavailable(await rejection(refused.$queryRawUnsafe('SELECT 1')))).toBe(true);
    } finally {
      await refused.$disconnect();
    }
  });

  it('is recognised when the server resets the connection or closes it without a word', async () => {
    const reset = await clientOfPeer((socket) => socket.once('data', () => socket.resetAndDestroy()));
    const closed = await clientOfPeer((socket) => socket.once('data', () => socket.destroy()));
    try {
      expect(isDatabaseUnavailable(await rejection(reset.$queryRawUnsafe('SELECT 1')))).toBe(true);
      expect(isDatabaseUnavailable(await rejection(closed.$queryRawUnsafe('SELECT 1')))).toBe(true);
    } finally {
      await Promise.all([reset.$disconnect(), closed.$disconnect()]);
    }
  });

  it('is recognised when the server shuts down under the query (SQLSTATE 57P01)', async () => {
    const shutdown = await rejection(database.prisma.$executeRawUnsafe(`DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '57P01', MESSAGE = 'an error by its code alone'; END $$`));
    expect(isDatabaseUnavailable(shutdown)).toBe(true);
  });
});
