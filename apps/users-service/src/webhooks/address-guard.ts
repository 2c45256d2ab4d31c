// The SSRF guard of webhook URLs: a URL may name only a public internet address. It is checked
// when an endpoint is registered or changed, and again before every delivery, after DNS
// resolution; the delivery then connects to the address checked here (no second lookup, so a
// name that resolves elsewhere the next time cannot slip past — DNS rebinding).
import { Resolver } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (A and AAAA). */
export type HostResolver = (host: string) => Promise<ResolvedAddress[]>;

/** The longest a webhook URL's host name may take to resolve, every name server and retry included. */
export const RESOLVE_TIMEOUT_MS = 5_000;

/** A name that did not resolve within its time: said apart from one that does not exist. */
export class ResolveTimedOut extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

export interface DnsResolverSettings {
  /** Name servers to ask (`127.0.0.1:5353`); the system's (resolv.conf) when unset. */
  servers?: string[];
  timeoutMs?: number;
}

const LOOPBACK: ResolvedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/**
 * Resolves names by asking DNS from the event loop (c-ares, `dns.Resolver`), never with
 * getaddrinfo (`dns.lookup`). A lookup holds one of libuv's four pool threads until the system
 * resolver gives up, seconds per name server, and the same four threads hash passwords (scrypt):
 * four webhook URLs on a domain whose name server never answers, registered or delivered to at
 * once, would hold every sign-in of the service until they timed out. Here a name costs a socket, and
 * its time is bounded as a whole. `localhost` and its subdomains are loopback without asking
 * (RFC 6761 §6.3), as getaddrinfo read them from /etc/hosts.
 */
export function dnsResolver(settings: DnsResolverSettings = {}): HostResolver {
  const timeoutMs = settings.timeoutMs ?? RESOLVE_TIMEOUT_MS;
  return async (host) => {
    const name = host.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) return LOOPBACK;
    // Two tries a server, the second with twice the first's time (c-ares' back-off).
    const resolver = new Resolver({ timeout: Math.max(1, Math.floor(timeoutMs / 3)), tries: 2 });
    if (settings.servers) resolver.setServers(settings.servers);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      resolver.cancel();
    }, timeoutMs);
    try {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
      const addresses: ResolvedAddress[] = [...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []), ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : [])];
      if (addresses.length > 0) return addresses;
      const timeouts = [v4, v6].filter((result) => result.status === 'rejected' && ['ETIMEOUT', 'ECANCELLED'].includes((result.reason as NodeJS.ErrnoException).code ?? ''));
      if (timedOut || timeouts.length > 0) throw new ResolveTimedOut(timeoutMs);
      throw v4.status === 'rejected' ? v4.reason : new Error(`${host} has no address`);
    } finally {
      clearTimeout(timer);
    }
  };
}

export type ForbiddenKind = 'loopback' | 'private' | 'link-local' | 'metadata' | 'reserved';

// Cloud metadata services: named apart because they are the prize of most SSRF attacks.
const metadata = new BlockList();
metadata.addAddress('169.254.169.254', 'ipv4');
metadata.addAddress('fd00:ec2::254', 'ipv6');

const ranges: [ForbiddenKind, BlockList][] = [
  ['metadata', metadata],
  ['loopback', list([['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']])],
  [
    'private',
    list([
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT
      ['fc00::', 7, 'ipv6'], // unique local
      ['fec0::', 10, 'ipv6'], // site-local (deprecated, still routed inside some networks)
    ]),
  ],
  ['link-local', list([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']])],
  [
    'reserved',
    list([
      ['0.0.0.0', 8, 'ipv4'],
      ['192.0.0.0', 24, 'ipv4'],
      ['192.0.2.0', 24, 'ipv4'],
      ['198.18.0.0', 15, 'ipv4'],
      ['198.51.100.0', 24, 'ipv4'],
      ['203.0.113.0', 24, 'ipv4'],
      ['224.0.0.0', 4, 'ipv4'], // multicast
      ['240.0.0.0', 4, 'ipv4'], // reserved and broadcast
      ['192.88.99.0', 24, 'ipv4'], // 6to4 relay anycast (deprecated)
      ['::', 128, 'ipv6'],
      ['100::', 64, 'ipv6'],
      ['2001:db8::', 32, 'ipv6'],
      ['ff00::', 8, 'ipv6'],
    ]),
  ],
];

// Blocks of IANA's IPv6 special-purpose registry where no webhook receiver can be, checked for
// IPv6 addresses only: BlockList matches an IPv4 address against IPv6 rules as ::ffff:a.b.c.d,
// which ::/8 contains.
const reservedIpv6 = list([
  ['::', 8, 'ipv6'], // what is left of ::/8 once the IPv4 forms (embeddedIpv4) are taken out: IPv4-translated ::ffff:0:0/96 among it
  ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64: translates to addresses of the operator's choosing
  ['2001::', 23, 'ipv6'], // IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT
  ['3fff::', 20, 'ipv6'], // documentation (2024)
  ['5f00::', 16, 'ipv6'], // SRv6 segment identifiers
]);

function list(subnets: [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const blocks = new BlockList();
  for (const [network, prefix, family] of subnets) blocks.addSubnet(network, prefix, family);
  return blocks;
}

/**
 * An IPv4 address carried inside IPv6 is judged as the IPv4 address it reaches: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d, deprecated, still routed as IPv4 by some
 * stacks), NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::/48, which a 6to4 relay delivers
 * to aa.bb.cc.dd: 2002:a00:1:: is 10.0.0.1).
 */
function embeddedIpv4(address: string): string | undefined {
  if (isIP(address) !== 6) return undefined;
  const groups = ipaddr.IPv6.parse(address.replace(/%.*$/, '')).parts; // eight 16-bit groups, a dotted IPv4 tail as the last two
  const ipv4 = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join('.');
  const zeroFrom = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  if (zeroFrom(0, 5) && groups[5] === 0xffff) return ipv4(groups[6], groups[7]);
  // :: and ::1 are themselves (unspecified, loopback), not IPv4-compatible addresses.
  if (zeroFrom(0, 6) && !(groups[6] === 0 && groups[7] <= 1)) return ipv4(groups[6], groups[7]);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeroFrom(2, 6)) return ipv4(groups[6], groups[7]);
  if (groups[0] === 0x2002) return ipv4(groups[1], groups[2]);
  return undefined;
}

/** Why an address may not be called, or undefined when it is a public one. */
export function forbiddenKindOf(address: string): ForbiddenKind | undefined {
  const ipv4 = isIP(address) === 4 ? address : embeddedIpv4(address);
  const [candidate, family] = ipv4 ? [ipv4, 'ipv4' as const] : [address, 'ipv6' as const];
  const kind = ranges.find(([, blocks]) => blocks.check(candidate, family))?.[0];
  return kind ?? (family === 'ipv6' && reservedIpv6.check(candidate, 'ipv6') ? 'reserved' : undefined);
}

export class ForbiddenUrl extends Error {
  constructor(
    readonly reason: string,
    /** Whether the URL could not be resolved at all (not a rule it broke). */
    readonly unreachable = false,
  ) {
    super(reason);
  }
}

export interface AddressGuardSettings {
  /** Lets loopback addresses through: for tests and local development only, never in production. */
  allowLoopback: boolean;
  /** The ports a URL may name (its scheme's when it names none); unset: any (WEBHOOK_ALLOWED_PORTS). */
  allowedPorts?: readonly number[];
  resolve?: HostResolver;
}

/** A URL checked for delivery: where to connect, and the name to send in Host and TLS SNI. */
export interface PinnedTarget {
  url: URL;
  address: ResolvedAddress;
}

export class AddressGuard {
  private readonly resolve: HostResolver;

  constructor(private readonly settings: AddressGuardSettings) {
    this.resolve = settings.resolve ?? dnsResolver();
  }

  /** The shape rules, no DNS: http(s), no credentials in it, no fragment. Throws ForbiddenUrl. */
  checkShape(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ForbiddenUrl('not an absolute URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ForbiddenUrl('only http and https URLs can receive webhooks');
    if (url.username || url.password) throw new ForbiddenUrl('a URL may not carry credentials; use the signature to authenticate deliveries');
    if (url.hash) throw new ForbiddenUrl('a URL may not carry a fragment');
    // The network lets deliveries out on these ports only: a URL on another would fail every attempt unseen.
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    // Port 0 is no port a server listens on (a connection to it fails): refused whatever ports are allowed.
    if (port === 0) throw new ForbiddenUrl('port 0 cannot receive webhooks; a URL needs a port from 1 to 65535');
    const allowed = this.settings.allowedPorts;
    if (allowed && !allowed.includes(port)) throw new ForbiddenUrl(`port ${port} is closed to webhooks here; a URL may use port ${allowed.join(' or ')}`);
    return url;
  }

  /**
   * Resolves the URL's host and checks every address it has (one forbidden address is enough to
   * refuse: a name that points at both a public and an internal address is an attack). Answers
   * the address to connect to. Throws ForbiddenUrl.
   */
  async pin(raw: string): Promise<PinnedTarget> {
    const url = this.checkShape(raw);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: ResolvedAddress[];
    if (isIP(host)) addresses = [{ address: host, family: isIP(host) === 6 ? 6 : 4 }];
    else {
      try {
        addresses = await this.resolve(host);
      } catch (error) {
        if (error instanceof ResolveTimedOut) throw new ForbiddenUrl(`the host ${host} did not resolve within ${error.timeoutMs} ms`, true);
        throw new ForbiddenUrl(`the host ${host} does not resolve`, true);
      }
      if (addresses.length === 0) throw new ForbiddenUrl(`the host ${host} does not resolve`, true);
    }
    for (const { address } of addresses) {
      const kind = forbiddenKindOf(address);
      if (kind && !(kind === 'loopback' && this.settings.allowLoopback)) {
        // A name's address stays unsaid: in a cluster the resolver is the cluster's, and naming
        // what an internal name resolves to would map the inside for whoever registers URLs.
        throw new ForbiddenUrl(host === address ? `${address} is a ${kind} address` : `${host} resolves to a ${kind} address`);
      }
    }
    return { url, address: addresses[0] };
  }
}
