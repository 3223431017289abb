/**
 * Failed authentications per client address: past AUTH_FAILURE_LIMIT 401s in a minute, every
 * request from that address is refused with 429 RATE_LIMITED and `Retry-After` (the seconds
 * left in the minute) before anything else runs: no key lookup (no Redis read), and the
 * access log line at debug instead of info. A guessing client pays for its guesses; the
 * integrators keep their own per-key limits (rate-limit.ts).
 *
 * The client address is the socket's. `X-Forwarded-For` counts only when the socket's peer is
 * one of TRUSTED_PROXIES: then the client is the right-most address of the header that is not
 * itself a trusted proxy (what a proxy appends cannot be forged by the client; what is left of
 * it can). Without TRUSTED_PROXIES the header is ignored, so a client cannot pick its address.
 *
 * Counts are kept in this process (no Redis: the point is to spend nothing on a guess), per
 * gateway replica, in fixed one-minute windows; at most MAX_ADDRESSES addresses are tracked in
 * a window (past it, new addresses are not counted until the next one).
 */
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '@pmm/protocol';
import { sendError } from '@pmm/core';
import type { RequestFrame } from './request-frame';

const WINDOW_MS = 60_000;
const MAX_ADDRESSES = 100_000;

export interface AuthFailureOptions {
  /** 401s per client address and minute before its requests are refused; 0: no limit. */
  limit: number;
  /** Addresses or CIDR ranges of the proxies whose X-Forwarded-For is believed. */
  trustedProxies: readonly string[];
  now?: () => number;
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

  /** Counts a failed authentication of `req`'s client. */
  record(req: IncomingMessage): void {
    if (this.opts.limit === 0) return;
    const counts = this.current();
    const address = clientAddress(req, this.proxies);
    const count = counts.get(address);
    if (count !== undefined) counts.set(address, count + 1);
    else if (counts.size < MAX_ADDRESSES) counts.set(address, 1);
  }

  /** Seconds until `req`'s client may try again, or 0 when it may now. */
  retryAfter(req: IncomingMessage): number {
    if (this.opts.limit === 0) return 0;
    const count = this.current().get(clientAddress(req, this.proxies)) ?? 0;
    if (count < this.opts.limit) return 0;
    return Math.max(1, Math.ceil(((this.window + 1) * WINDOW_MS - this.now()) / 1000));
  }

  /**
   * Answers 429 for a client over its limit (the request framed like any other: request id,
   * security headers, metrics; logged at debug) and returns true; false lets the request on.
   */
  refuse(req: IncomingMessage, res: ServerResponse, frame: RequestFrame, onRefused?: () => void): boolean {
    const seconds = this.retryAfter(req);
    if (seconds === 0) return false;
    const locals = frame.begin(req, res);
    locals.route = 'auth-refused';
    locals.quiet = true;
    onRefused?.();
    res.setHeader('Retry-After', String(seconds));
    // The request's body, if any, is not read: the connection is not reused.
    res.setHeader('Connection', 'close');
    sendError(
      res,
      new ApiError('RATE_LIMITED', `too many failed authentications from this address; retry after ${seconds} s`),
    );
    return true;
  }
}
