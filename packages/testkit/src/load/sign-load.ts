/**
 * The fault drills' load and their count: sign requests at an even pace over keep-alive
 * connections (raw-http-pool.ts: the load's own cost kept small), and afterwards the one figure that matters with money behind it: every signature
 * a client received has its audit record. Used against the signer directly (its Redis drills) and
 * through the gateway (the signer's SIGTERM under integrators' load, the overload drill, which
 * also measures the knee with `closedSigns`).
 */
import { decodeAbiParameters, type Hex } from 'viem';
import { RawHttpPool } from './raw-http-pool';

const VD_TYPES = [{ type: 'uint256' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes' }] as const;

export interface SignLoadOptions {
  /** The sign endpoint (the signer's or the gateway's). */
  url: string;
  perSecond: number;
  /** Sent with every request besides content-type, content-length and x-request-id. */
  headers: Readonly<Record<string, string>>;
  /** The body of the `i`-th request: make each one a different quote (the fee, say). */
  body(i: number): string;
  /** Keep-alive connections at most (default 32); past them a request waits in the client. */
  sockets?: number;
  /**
   * The connections to send on, kept by the caller across loads (then `sockets` is the pool's);
   * default a pool of the load's own, closed when it ends. A load that opens hundreds of
   * connections at once can overflow the server's accept queue, and a connection refused there
   * is retried by the kernel after 1 s, then 3 s: latency that is the client's, not the service's.
   */
  pool?: RawHttpPool;
  /**
   * The first request's index `i` (its x-request-id `drill-<i>`, its body `body(i)`); default 0.
   * Loads one after another on one audit trail start past the last one's: each id its own.
   */
  firstIndex?: number;
}

export interface Answered {
  /** The x-request-id this client sent. */
  readonly requestId: string;
  readonly signature: string;
  readonly timestamp: number;
  /** ms since the load started. */
  readonly at: number;
  /** ms from when the request was sent to its whole answer. */
  readonly ms: number;
}

/** An answer other than 200, kept whole for the drill to check its envelope. */
export interface Refused {
  status: number;
  body: string;
  /** The x-request-id this client sent, and the one the answer carried. */
  requestId: string;
  answeredRequestId: string | undefined;
  at: number;
  /** ms from when the request was sent to its whole answer. */
  ms: number;
  /** The answer's Retry-After header, if any. */
  retryAfter: string | undefined;
}

export interface SignLoadResult {
  sent: number;
  ok: Answered[];
  refused: Refused[];
  /** Answers by status ('error' when none came whole: refused at connect, reset, cut mid-answer); they add up to `sent`. */
  statuses: Record<string, number>;
  /** The 'error' ones by cause (the client's message), so that a drill that sees them says why. */
  errors: Record<string, number>;
}

export interface SignLoad {
  /** When the load started (Date.now()). */
  readonly started: number;
  /** Requests sent and not answered yet. */
  inFlight(): number;
  /** Stops sending, waits for every answer and resolves what was counted. */
  stop(): Promise<SignLoadResult>;
}

/** Sends sign requests at `perSecond`, paced by the clock (a stalled server does not slow the arrivals). */
export function pacedSigns(opts: SignLoadOptions): SignLoad {
  const pool = opts.pool ?? new RawHttpPool(opts.url, opts.sockets ?? 32);
  const started = Date.now();
  const result: SignLoadResult = { sent: 0, ok: [], refused: [], statuses: {}, errors: {} };
  const inFlight = new Set<Promise<void>>();
  const count = (status: string) => (result.statuses[status] = (result.statuses[status] ?? 0) + 1);
  const send = (i: number) => {
    const done = sendSign(pool, opts, i, started, result, count);
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };
  const timer = setInterval(() => {
    const due = Math.floor(((Date.now() - started) * opts.perSecond) / 1000);
    while (result.sent < due) send((opts.firstIndex ?? 0) + result.sent++);
  }, 5);
  return {
    started,
    inFlight: () => inFlight.size,
    async stop() {
      clearInterval(timer);
      await Promise.all([...inFlight]);
      if (!opts.pool) pool.destroy();
      return result;
    },
  };
}

/**
 * The clients of a closed loop that measures a gateway's knee (`closedSigns`): enough to keep
 * the signer busy, few enough that a sign waits well under its deadline there. At 64, the
 * gateway's SIGNER_MAX_IN_FLIGHT, a client whose sign missed its deadline sends its next while
 * the signer still holds the first's slot, and the loop measures fast refusals, not the knee.
 */
export const KNEE_CLIENTS = 40;

/**
 * `clients` clients, each sending its next sign when the last is answered, for `seconds`: the
 * signs per second a service answers at that concurrency (its knee, when no answer is refused).
 */
export async function closedSigns(
  opts: Omit<SignLoadOptions, 'perSecond' | 'sockets'> & { clients: number; seconds: number },
): Promise<SignLoadResult & { seconds: number }> {
  const pool = opts.pool ?? new RawHttpPool(opts.url, opts.clients);
  const started = Date.now();
  const result: SignLoadResult = { sent: 0, ok: [], refused: [], statuses: {}, errors: {} };
  const count = (status: string) => (result.statuses[status] = (result.statuses[status] ?? 0) + 1);
  const end = started + opts.seconds * 1000;
  let next = opts.firstIndex ?? 0;
  await Promise.all(
    Array.from({ length: opts.clients }, async () => {
      while (Date.now() < end) {
        result.sent++;
        await sendSign(pool, opts, next++, started, result, count);
      }
    }),
  );
  if (!opts.pool) pool.destroy();
  return { ...result, seconds: (Date.now() - started) / 1000 };
}

/**
 * A 200, read when the drill asks for its signature or timestamp rather than as it arrives: the
 * load's own work per answer stays small (under overload it shares the machine's cores with the
 * service it measures).
 */
class SignedAnswer implements Answered {
  private read?: { signature: string; timestamp: number };
  constructor(
    readonly requestId: string,
    private readonly text: string,
    readonly at: number,
    readonly ms: number,
  ) {}

  private answer(): { signature: string; timestamp: number } {
    if (!this.read) {
      const json = JSON.parse(this.text) as { verificationData: Hex; timestamp: number };
      this.read = { signature: decodeAbiParameters(VD_TYPES, json.verificationData)[3], timestamp: json.timestamp };
    }
    return this.read;
  }

  get signature(): string {
    return this.answer().signature;
  }

  get timestamp(): number {
    return this.answer().timestamp;
  }
}

/** Sends sign `i` and counts its answer into `result`; resolves once it is counted. */
async function sendSign(
  pool: RawHttpPool,
  opts: Pick<SignLoadOptions, 'url' | 'headers' | 'body'>,
  i: number,
  started: number,
  result: SignLoadResult,
  count: (status: string) => void,
): Promise<void> {
  const requestId = `drill-${i}`;
  const sentAt = performance.now();
  let answer;
  try {
    answer = await pool.post(
      new URL(opts.url).pathname,
      { ...opts.headers, 'content-type': 'application/json', 'x-request-id': requestId },
      opts.body(i),
    );
  } catch (err) {
    // None came whole (refused, reset, or cut after its head): a drill must see that too.
    count('error');
    const cause = (err as Error).message;
    result.errors[cause] = (result.errors[cause] ?? 0) + 1;
    return;
  }
  const at = Date.now() - started;
  const ms = performance.now() - sentAt;
  if (answer.status === 200) result.ok.push(new SignedAnswer(requestId, answer.body, at, ms));
  else
    result.refused.push({
      status: answer.status,
      body: answer.body,
      requestId,
      answeredRequestId: answer.requestId,
      at,
      ms,
      retryAfter: answer.retryAfter,
    });
  count(String(answer.status));
}

/** Where a drill's signer keeps its audit trail. */
export interface AuditTrailAt {
  /** The server of the audit trail: the records' (REDIS_RECORDS_URL). */
  redisUrl: string;
  prefix: string;
  chainId: number;
}

/**
 * The answered signatures without an audit record carrying the client's request id, read through
 * the operator package's AuditReader (a fresh connection to `trail.redisUrl`): matched on the record's
 * `requestId` when the client spoke to the signer, on its `clientRequestId` through the gateway
 * (which records its own request id beside the client's).
 */
export async function missingRecords(
  trail: AuditTrailAt,
  ok: readonly Answered[],
  idField: 'requestId' | 'clientRequestId',
): Promise<Answered[]> {
  // Loaded here, not at the top: most files that import testkit never read the audit trail.
  const { closeRedis, createRedis, redisKeys, redisReady } = await import('@pmm/core');
  const { AuditReader } = await import('@pmm/operator');
  const redis = createRedis(trail.redisUrl, { name: 'drill-reader' });
  try {
    await redisReady(redis, 15_000);
    const reader = new AuditReader(redis, redisKeys(trail.prefix));
    const missing: Answered[] = [];
    for (const a of ok) {
      const found = await reader.bySignature(trail.chainId, a.signature, a.timestamp);
      if (!found.some((e) => e.record[idField] === a.requestId)) missing.push(a);
    }
    return missing;
  } finally {
    await closeRedis(redis);
  }
}

/** The line a drill prints: what it counted. */
export function loadReport(name: string, r: SignLoadResult, missing: number, extra = ''): string {
  const found = r.ok.length - missing;
  return (
    `${name}: sent ${r.sent}, answered 200 ${r.ok.length}, records found ${found}, lost: ${missing}; ` +
    `answers ${JSON.stringify(r.statuses)}${extra ? `; ${extra}` : ''}`
  );
}
