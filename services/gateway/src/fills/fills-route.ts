/**
 * `GET /v2/fills` (after the key and the rate limit): the key's integrator's own signatures of a
 * period on one chain and the fate of each (executed, reverted with the router's error, unused,
 * pending), as the operator's `npm run fills` computes them (core's chainFates), a page at a time
 * (docs/api.md#get-v2fills--your-signatures-fates, docs/decisions/0074-the-integrators-view-get-v2-fills.md).
 *
 * - **Only its own**: the integrator is the API key's, never a parameter; the audit trail is
 *   filtered on it before anything else is read, and the ledger is read only for the calls its
 *   signatures can have.
 * - **Bounded**: a page reads at most {@link FILLS_PAGE}.maxScan entries of the chain's audit trail
 *   (every integrator's records are in one stream) and answers at most maxFates signatures;
 *   `next` continues. At most {@link FILLS_PAGE}.inFlight reads at once per gateway: one more is
 *   503 at once (these reads are the gateway's heaviest, and must never slow its signs).
 * - The query: protocol's fills-query.ts (400 UNSUPPORTED_FIELD, 422 VALIDATION_ERROR), then the
 *   chain served and enabled for the key (400 UNSUPPORTED_CHAIN), as on /v2/price. A halt does not
 *   hide the fills: they are read, not signed.
 * - The stores unreachable (or a record that does not read back): 503 SERVICE_UNAVAILABLE.
 */
import { parse as parseQuery } from 'node:querystring';
import {
  ApiError,
  assertServedChain,
  parseFillsQuery,
  type FillFate,
  type FillsQuery,
  type FillsResponse,
} from '@pmm/protocol';
import {
  chainFates,
  InFlightLimit,
  LedgerReads,
  queryOf,
  readAuditPage,
  sendJson,
  type RedisClient,
  type RedisKeys,
  type SignatureFate,
  type Step,
} from '@pmm/core';
import { authOf } from '../keys/auth-context';
import { assertChainEnabled } from '../price/price-route';

/** A page's bounds (docs/api.md#get-v2fills--your-signatures-fates). */
export const FILLS_PAGE = {
  /** Entries of the chain's audit trail read at most (every integrator's: the work). */
  maxScan: 5_000,
  /** Signatures answered at most (the size: about 600 bytes each). */
  maxFates: 500,
  /** Reads at once per gateway process. */
  inFlight: 2,
} as const;

export interface FillsStepOptions {
  /** The records' server: the audit trail and the ledger. */
  records: RedisClient;
  keys: RedisKeys;
  servedChains: readonly number[];
}

/** The wire's fate: the record's, without the integrator (the caller's own). */
function wireFate({ integratorId: _integrator, ...fate }: SignatureFate): FillFate {
  return fate;
}

export function fillsStep(opts: FillsStepOptions): Step {
  const ledger = new LedgerReads(opts.records, opts.keys);
  const reads = new InFlightLimit(FILLS_PAGE.inFlight);

  const read = async (integratorId: string, query: FillsQuery): Promise<FillsResponse> => {
    if (!reads.tryAcquire()) throw new ApiError('SERVICE_UNAVAILABLE', 'fills: too many reads at once; retry shortly');
    try {
      const signed = await readAuditPage(opts.records, opts.keys, {
        chainId: query.chainId,
        integratorId,
        fromMs: query.from * 1_000,
        toMs: query.to * 1_000,
        after: query.cursor,
        maxScan: FILLS_PAGE.maxScan,
        maxRecords: FILLS_PAGE.maxFates,
      });
      const records = signed.entries.map((e) => e.record);
      const { fates, cursor } = await chainFates(ledger, query.chainId, records);
      return {
        chainId: query.chainId,
        from: query.from,
        to: query.to,
        ledger: cursor ? { blockNumber: cursor.number, blockTime: cursor.time ?? null } : null,
        fates: fates.map(wireFate),
        next: signed.next ?? null,
      };
    } catch (err) {
      const message = 'fills: the ledger cannot be read right now; retry shortly';
      throw new ApiError('SERVICE_UNAVAILABLE', message, {}, { cause: err });
    } finally {
      reads.release();
    }
  };

  return (req, res, next) => {
    const { integrator } = authOf(res);
    let query: FillsQuery;
    try {
      const raw = queryOf(req);
      query = parseFillsQuery(raw === undefined ? {} : parseQuery(raw));
      assertServedChain(query.chainId, opts.servedChains);
      assertChainEnabled(integrator.chains, query.chainId);
    } catch (err) {
      return next(err);
    }
    read(integrator.id, query).then((body) => sendJson(res, 200, body, { 'Cache-Control': 'no-store' }), next);
  };
}
