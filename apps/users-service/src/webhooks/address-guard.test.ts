// The guard's name resolution, against a DNS server of the test's own on 127.0.0.1: names it
// answers, names it says do not exist, and names whose queries it drops, as a hostile domain's
// name server can.
import { scrypt } from 'node:crypto';
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { AddressGuard, dnsResolver } from './address-guard';

const ANSWERED = 'hooks.example';
const ANSWERED_ADDRESS = [93, 184, 216, 34];
const MISSING = 'missing.example';
/** Queries for names under this are dropped: the server never answers them. */
const SILENT = 'silent.example';

let server: dgram.Socket;
let servers: string[];
const asked: string[] = [];

/** The query's name and type, and where its question ends. */
function questionOf(query: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (query[at] !== 0) {
    labels.push(query.subarray(at + 1, at + 1 + query[at]).toString('ascii'));
    at += 1 + query[at];
  }
  return { name: labels.join('.').toLowerCase(), type: query.readUInt16BE(at + 1), end: at + 5 };
}

/** An answer to `query`: its A record when there is one, else none; NXDOMAIN for the missing name. */
function answerTo(query: Buffer): Buffer | undefined {
  const { name, type, end } = questionOf(query);
  asked.push(name);
  if (name === SILENT || name.endsWith(`.${SILENT}`)) return undefined;
  const records = name === ANSWERED && type === 1 ? [Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...ANSWERED_ADDRESS])] : [];
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // the query's id
  header.writeUInt16BE(name === MISSING ? 0x8183 : 0x8180, 2); // a response, recursion available; NXDOMAIN or no error
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  return Buffer.concat([header, query.subarray(12, end), ...records]);
}

beforeAll(async () => {
  server = dgram.createSocket('udp4');
  server.on('message', (query, from) => {
    const answer = answerTo(query);
    if (answer) server.send(answer, from.port, from.address);
  });
  await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
  servers = [`127.0.0.1:${(server.address() as AddressInfo).port}`];
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the name resolution of webhook URLs', () => {
  it('resolves a name by asking DNS, and pins the delivery to the address it answered', async () => {
    const guard = new AddressGuard({ allowLoopback: false, resolve: dnsResolver({ servers }) });
    await expect(guard.pin(`https://${ANSWERED}/hooks`)).resolves.toMatchObject({ address: { address: '93.184.216.34', family: 4 } });
    await expect(guard.pin(`https://${MISSING}/hooks`)).rejects.toThrow(`the host ${MISSING} does not resolve`);
  });

  it("gives up on a name whose name server never answers after its time, and says so", async () => {
    const guard = new AddressGuard({ allowLoopback: false, resolve: dnsResolver({ servers, timeoutMs: 300 }) });
    await expect(guard.pin(`https://a.${SILENT}/hooks`)).rejects.toMatchObject({ reason: `the host a.${SILENT} did not resolve within 300 ms`, unreachable: true });
  });

  it("leaves libuv's pool to the password hashing while names go unanswered (before, each held a pool thread)", async () => {
    const resolve = dnsResolver({ servers, timeoutMs: 2_000 });
    let unansweredSettled = 0;
    // Eight at once: twice the pool's four threads, which getaddrinfo would have held until it gave up.
    const unanswered = Array.from({ length: 8 }, (_, index) => resolve(`n${index}.${SILENT}`).catch(() => undefined).finally(() => unansweredSettled++));
    while (asked.filter((name) => name.endsWith(SILENT)).length < 16) await new Promise((resolveWait) => setTimeout(resolveWait, 5));
    // Four scrypt hashes take the four pool threads; they finish while every name still waits.
    await Promise.all(Array.from({ length: 4 }, () => new Promise((done, fail) => scrypt('correct-horse-1', 'salt', 32, { N: 1024 }, (error, key) => (error ? fail(error) : done(key))))));
    expect(unansweredSettled).toBe(0);
    await Promise.all(unanswered);
  });

  it('refuses a URL on a port the network does not let deliveries out on, when the ports are set (WEBHOOK_ALLOWED_PORTS)', async () => {
    const guard = new AddressGuard({ allowLoopback: false, allowedPorts: [443, 80], resolve: dnsResolver({ servers }) });
    await expect(guard.pin(`https://${ANSWERED}/hooks`)).resolves.toMatchObject({ address: { address: '93.184.216.34' } });
    await expect(guard.pin(`http://${ANSWERED}:80/hooks`)).resolves.toMatchObject({ address: { address: '93.184.216.34' } });
    await expect(guard.pin(`https://${ANSWERED}:8443/hooks`)).rejects.toMatchObject({ reason: 'port 8443 is closed to webhooks here; a URL may use port 443 or 80', unreachable: false });
    // Unset, any port but 0, where no server listens.
    const anyPort = new AddressGuard({ allowLoopback: false, resolve: dnsResolver({ servers }) });
    await expect(anyPort.pin(`https://${ANSWERED}:8443/hooks`)).resolves.toMatchObject({ url: expect.objectContaining({ port: '8443' }) });
    for (const settings of [{}, { allowedPorts: [443, 80] }]) {
      await expect(new AddressGuard({ allowLoopback: true, ...settings, resolve: dnsResolver({ servers }) }).pin('http://1.1.1.1:0/')).rejects.toMatchObject({ reason: 'port 0 cannot receive webhooks; a URL needs a port from 1 to 65535', unreachable: false });
    }
  });

  it('answers localhost and its subdomains as loopback without asking DNS, as /etc/hosts did', async () => {
    const before = asked.length;
    const resolve = dnsResolver({ servers, timeoutMs: 5_000 });
    for (const name of ['localhost', 'api.localhost', 'LOCALHOST.']) await expect(resolve(name)).resolves.toEqual([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
    expect(asked.length).toBe(before);
    const strict = new AddressGuard({ allowLoopback: false, resolve });
    await expect(strict.pin('http://localhost:3000/hooks')).rejects.toThrow('localhost resolves to a loopback address');
  });
});
