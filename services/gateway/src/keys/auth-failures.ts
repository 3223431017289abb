/**
 * Failed authentications per client: past AUTH_FAILURE_LIMIT failed keys in a minute, the
 * client's further failed attempts are answered 429 RATE_LIMITED with `Retry-After` (the
 * seconds left in the minute) instead of 401, logged at debug. A failure is counted when the
 * key step decides it (api-key-step.ts), so concurrent guesses count at once. A valid key is
 * never refused, so a shared address (a NAT, a load balancer without TRUSTED_PROXIES) can lock
 * out only the guessers behind it, and no route without a key (health checks) is refused.
 *
 * A client is its address; an IPv6 client is its /64 (one host usually holds a whole /64 and
 * could rotate through it).
 *
 * The client address is the socket's. `X-Forwarded-For` counts only when the socket's peer is
 * one of TRUSTED_PROXIES: then the client is the right-most address of the header that is not
 * itself a trusted proxy (what a proxy appends cannot be forged by the client; what is left of
 * it can). Without TRUSTED_PROXIES the header is ignored, so a client cannot pick its address.
 *
 * Counts are kept in this process (no Redis: the point is to spend nothing on a guess), per
 * gateway replica, in fixed one-minute windows; at most MAX_CLIENTS clients are tracked in a
 * window, and past it every new client shares one count (with the same limit): a full table
 * still limits.
 */
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

const WINDOW_MS = 60_000;
const MAX_CLIENTS = 100_000;
/** The count shared by clients that arrive when the table is full. */
const OVERFLOW = 'overflow';

export interface AuthFailureOptions {
  /** 401s per client address and minute before its requests are refused; 0: no limit. */
  limit: number;
  /** Addresses or CIDR ranges of the proxies whose X-Forwarded-For is believed. */
  trustedProxies: readonly string[];
  now?: () => number;
  /** Clients tracked per window before new ones share one count (default MAX_CLIENTS). */
  maxClients?: number;
}

/** `::ffff:1.2.3.4` → `1.2.3.4` (an IPv4 client of a dual-stack socket). */
function plain(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** A BlockList of `addresses` (each an IP or `ip/prefix`); throws on anything else. */
export function proxyList(addresses: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of addresses) {
    const [ip = '', prefix] = entry.split('/');
    const family = isIP(ip);
    if (family === 0) throw new Error(`not an IP address or CIDR range: ${JSON.stringify(entry)}`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(ip, type);
    else {
      const bits = /^[0-9]{1,3}$/.test(prefix) ? Number(prefix) : NaN;
      if (!(bits >= 0 && bits <= (family === 4 ? 32 : 128)))
        throw new Error(`not an IP address or CIDR range: ${JSON.stringify(entry)}`);
      list.addSubnet(ip, bits, type);
    }
  }
  return list;
}

/** The /64 of an IPv6 address, as `a:b:c:d::/64` (groups without leading zeros). */
export function ipv6Prefix64(address: string): string {
  const bare = address.split('%')[0]!;
  const [left = '', right] = bare.split('::');
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':'));
  const head = groupsOf(left);
  // An embedded IPv4 address (a.b.c.d) fills two groups; it can only be at the end.
  const tail = right === undefined ? [] : groupsOf(right).flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const groups =
    right === undefined ? head : [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** Whom failures are counted against: the client's address, an IPv6 one as its /64. */
export function clientKey(address: string): string {
  return isIP(address) === 6 ? ipv6Prefix64(address) : address;
}

function trusted(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The client's address: the socket's, or per trusted X-Forwarded-For (see the module comment). */
export function clientAddress(req: IncomingMessage, proxies: BlockList | undefined): string {
  const peer = plain(req.socket.remoteAddress ?? '');
  if (!proxies || !trusted(proxies, peer)) return peer;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((s) => plain(s.trim()))
    .filter((s) => isIP(s) !== 0);
  for (let i = hops.length - 1; i >= 0; i--) if (!trusted(proxies, hops[i]!)) return hops[i]!;
  return hops[0] ?? peer;
}

export class AuthFailures {
  private readonly proxies: BlockList | undefined;
  private readonly now: () => number;
  private window = 0;
  private counts = new Map<string, number>();

  constructor(private readonly opts: AuthFailureOptions) {
    this.proxies = opts.trustedProxies.length > 0 ? proxyList(opts.trustedProxies) : undefined;
    this.now = opts.now ?? Date.now;
  }

  private current(): Map<string, number> {
    const window = Math.floor(this.now() / WINDOW_MS);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    return this.counts;
  }

  /**
   * Counts a failed authentication of `req`'s client, now. Returns 0 while the client is within
   * its limit (answer 401), else the seconds until the window ends (answer 429).
   */
  fail(req: IncomingMessage): number {
    if (this.opts.limit === 0) return 0;
    const counts = this.current();
    const client = clientKey(clientAddress(req, this.proxies));
    const key = counts.has(client) || counts.size < (this.opts.maxClients ?? MAX_CLIENTS) ? client : OVERFLOW;
    const count = (counts.get(key) ?? 0) + 1;
    counts.set(key, count);
    if (count <= this.opts.limit) return 0;
    return Math.max(1, Math.ceil(((this.window + 1) * WINDOW_MS - this.now()) / 1000));
  }
}
