/**
 * `GET /v2/price/stream?chainId=<id>`: the chain's books as Server-Sent Events (see
 * stream-hub.ts for what is sent when, and docs/api.md for the contract).
 *
 * Before the stream starts, errors are ordinary enveloped responses, checked in the order of
 * `GET /v2/price` (API key 401 and rate limit 429 run before this handler as middleware):
 * an unknown query parameter 400, chainId 422/400, `Last-Event-ID` 422, then the per-key stream limit 429 (Redis down: 503).
 * Once the 200 and its headers are out, the stream only ends when the client leaves or the
 * gateway shuts down.
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { localsOf, queryOf, type Step } from '@pmm/core';
import { ApiError, validationError } from '@pmm/protocol';
import type { StreamSlots } from './stream-slots';
import type { ApiKeyCache } from '../keys/api-key-cache';
import { authenticate } from '../keys/api-key-step';
import { authOf } from '../keys/auth-context';
import { assertChainEnabled, priceChainOf } from '../price/price-route';
import { assertBookOffered, type HaltSource } from '../price/halted-book';
import { parseLastEventId } from './sse-event';
import type { StreamHub } from './stream-hub';

export interface PriceStreamOptions {
  hub: StreamHub;
  slots: StreamSlots;
  servedChains: readonly number[];
  /** Open streams allowed per API key, across replicas. */
  streamsPerKey: number;
  /** Lease life (ms): the longest a dead replica's slot stays taken; sent as Retry-After. */
  leaseMs: number;
  /** The API key cache, to re-check an open stream's key (see {@link KEY_RECHECK_MS}). */
  keys: ApiKeyCache;
  /** The operator's halts: a stream of a book a halt covers whole is refused, and ended within KEY_RECHECK_MS. */
  halts: HaltSource;
  onRefused?: () => void;
}

/**
 * How often an open stream's key is checked again. A revoked or disabled key, a disabled
 * integrator or a chain no longer enabled for it ends the stream within this time (the key cache
 * is invalidated by the key store's announcements, so the check sees the change at once); the
 * client's reconnect then gets the 401 or 400. A store that cannot be reached keeps the stream:
 * the key may well be valid.
 */
export const KEY_RECHECK_MS = 2_000;

/** Whether the request's key still grants a stream of `chainId` (true when the store is down). */
async function stillAuthorized(keys: ApiKeyCache, req: IncomingMessage, chainId: number): Promise<boolean> {
  try {
    const auth = await authenticate(keys, req.headers);
    assertChainEnabled(auth.integrator.chains, chainId);
    return true;
  } catch (err) {
    return !(err instanceof ApiError) || err.code === 'SERVICE_UNAVAILABLE';
  }
}

const STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  // nginx and similar proxies buffer responses unless told not to.
  'X-Accel-Buffering': 'no',
};

export function priceStreamStep(opts: PriceStreamOptions): Step {
  const { hub, slots, servedChains, streamsPerKey } = opts;
  const retryAfter = String(Math.ceil(opts.leaseMs / 1_000));
  return (req, res, next) => {
    const auth = authOf(res);
    let chainId: number;
    let lastEventId: number | undefined;
    try {
      const query = queryOf(req);
      chainId = priceChainOf(servedChains, auth.integrator, query === undefined ? undefined : parseQuery(query));
      // 503 HALTED when a halt covers the chain's whole book for this integrator (halted-book.ts).
      assertBookOffered(opts.halts, chainId, auth.integrator.id);
      const last = parseLastEventId(req.headers['last-event-id']);
      if (last === null) throw validationError('Last-Event-ID', 'must be the id of an event of this stream');
      lastEventId = last;
    } catch (err) {
      return next(err);
    }
    if (req.method === 'HEAD') {
      res.writeHead(200, STREAM_HEADERS).end();
      return;
    }
    slots.acquire(auth.key.keyId, streamsPerKey).then(
      (lease) => {
        if (!lease) {
          opts.onRefused?.();
          return next(
            new ApiError('RATE_LIMITED', `open streams limit of ${streamsPerKey} per API key reached`, {
              'Retry-After': retryAfter,
            }),
          );
        }
        // The client left, or the request timed out, while the slot was being taken.
        if (res.headersSent || res.destroyed || res.writableEnded) return lease.release();
        const locals = localsOf(res);
        if (locals.timer) clearTimeout(locals.timer);
        res.writeHead(200, STREAM_HEADERS);
        res.flushHeaders();
        const recheck = setInterval(() => {
          try {
            assertBookOffered(opts.halts, chainId, auth.integrator.id);
          } catch {
            // Halted (or the halts unreadable): the reconnect gets the answer.
            return void res.end();
          }
          void stillAuthorized(opts.keys, req, chainId).then((ok) => {
            if (!ok) res.end();
          });
        }, KEY_RECHECK_MS);
        recheck.unref();
        hub.attach(chainId, res, {
          requestId: locals.requestId,
          lastEventId,
          onClose: () => {
            clearInterval(recheck);
            lease.release();
          },
        });
      },
      (cause: unknown) =>
        next(new ApiError('SERVICE_UNAVAILABLE', 'stream slots unreachable, retry shortly', {}, { cause })),
    );
  };
}
