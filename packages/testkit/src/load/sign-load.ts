/**
 * The fault drills' load and their count: sign requests at an even pace over keep-alive
 * connections, and afterwards the one figure that matters with money behind it: every signature
 * a client received has its audit record. Used against the signer directly (its Redis drills) and
 * through the gateway (the signer's SIGTERM under integrators' load).
 */
import { Agent, request } from 'node:http';
import { decodeAbiParameters, type Hex } from 'viem';

const VD_TYPES = [{ type: 'uint256' }, { type: 'uint256' }, { type: 'address' }, { type: 'bytes' }] as const;

export interface SignLoadOptions {
  /** The sign endpoint (the signer's or the gateway's). */
  url: string;
  perSecond: number;
  /** Sent with every request besides content-type, content-length and x-request-id. */
  headers: Readonly<Record<string, string>>;
  /** The body of the `i`-th request: make each one a different quote (the fee, say). */
  body(i: number): string;
}

export interface Answered {
  /** The x-request-id this client sent. */
  requestId: string;
  signature: string;
  timestamp: number;
  /** ms since the load started. */
  at: number;
}

/** An answer other than 200, kept whole for the drill to check its envelope. */
export interface Refused {
  status: number;
  body: string;
  /** The x-request-id this client sent, and the one the answer carried. */
  requestId: string;
  answeredRequestId: string | undefined;
  at: number;
}

export interface SignLoadResult {
  sent: number;
  ok: Answered[];
  refused: Refused[];
  /** Answers by status ('error' when none came whole: refused at connect, reset, cut mid-answer); they add up to `sent`. */
  statuses: Record<string, number>;
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
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const started = Date.now();
  const result: SignLoadResult = { sent: 0, ok: [], refused: [], statuses: {} };
  const inFlight = new Set<Promise<void>>();
  const count = (status: string) => (result.statuses[status] = (result.statuses[status] ?? 0) + 1);
  const send = (i: number) => {
    const requestId = `drill-${i}`;
    const body = opts.body(i);
    const done = new Promise<void>((resolve) => {
      // Each request is counted once: by its whole answer, or as 'error' when none came whole
      // (refused, reset, or cut after its head: a drill must see that too).
      let counted = false;
      const settle = (status: string) => {
        if (counted) return;
        counted = true;
        count(status);
        resolve();
      };
      const req = request(
        opts.url,
        {
          method: 'POST',
          agent,
          timeout: 10_000,
          headers: {
            ...opts.headers,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-request-id': requestId,
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => {
            const at = Date.now() - started;
            if (res.statusCode === 200) {
              const json = JSON.parse(text) as { verificationData: Hex; timestamp: number };
              const signature = decodeAbiParameters(VD_TYPES, json.verificationData)[3];
              result.ok.push({ requestId, signature, timestamp: json.timestamp, at });
            } else {
              const answered = res.headers['x-request-id'];
              result.refused.push({
                status: res.statusCode ?? 0,
                body: text,
                requestId,
                answeredRequestId: typeof answered === 'string' ? answered : undefined,
                at,
              });
            }
            settle(String(res.statusCode));
          });
          res.on('close', () => {
            if (!res.complete) settle('error');
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => settle('error'));
      req.end(body);
    });
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };
  const timer = setInterval(() => {
    const due = Math.floor(((Date.now() - started) * opts.perSecond) / 1000);
    while (result.sent < due) send(result.sent++);
  }, 5);
  return {
    started,
    inFlight: () => inFlight.size,
    async stop() {
      clearInterval(timer);
      await Promise.all([...inFlight]);
      agent.destroy();
      return result;
    },
  };
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
