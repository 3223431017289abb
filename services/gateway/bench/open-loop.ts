/**
 * Two load shapes that show what one integrator feels, where autocannon shows saturation:
 *
 * - `closedLoop`: one keep-alive client sending one request at a time (the next when the last
 *   answer is in): the latency of a request that arrives alone, on an otherwise idle service.
 * - `openLoop`: requests sent on an even schedule (`rate` per second) over a few keep-alive
 *   sockets, each at its time whatever earlier answers do. Latency is counted from the moment
 *   the request was DUE, so a stall that delays the schedule shows in the figures instead of
 *   hiding in a slower send rate (the "coordinated omission" of closed-loop generators; and
 *   autocannon's rate mode sends its requests in bursts, which hides the tail we look for).
 *
 * Both use node:http's client with a keep-alive Agent, as an integrator's backend would.
 */
import { Agent, request } from 'node:http';

export interface LoadRequest {
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export interface LatencyFigures {
  /** Requests answered. */
  count: number;
  /** Answers that were not 2xx, and transport errors. */
  failures: number;
  p50: number;
  p99: number;
  max: number;
  /** The rate actually achieved, per second. */
  rate: number;
}

/** Sends one request on `agent`; resolves with its status (0 on a transport error). */
function send(agent: Agent, r: LoadRequest): Promise<number> {
  const url = new URL(r.url);
  const body = r.body === undefined ? undefined : Buffer.from(r.body);
  return new Promise((resolve) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: r.method,
        agent,
        headers: { ...r.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

function figures(latenciesMs: number[], failures: number, seconds: number): LatencyFigures {
  const sorted = Float64Array.from(latenciesMs).sort();
  const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN);
  return {
    count: sorted.length,
    failures,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted.length ? sorted[sorted.length - 1]! : NaN,
    rate: sorted.length / seconds,
  };
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/** One client, one request at a time, for `seconds`. */
export async function closedLoop(r: LoadRequest, seconds: number): Promise<LatencyFigures> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let failures = 0;
  const start = nowMs();
  const end = start + seconds * 1000;
  while (nowMs() < end) {
    const t = nowMs();
    const status = await send(agent, r);
    latencies.push(nowMs() - t);
    if (status < 200 || status >= 300) failures++;
  }
  agent.destroy();
  return figures(latencies, failures, (nowMs() - start) / 1000);
}

/** `rate` requests per second, evenly spaced, over `sockets` keep-alive sockets, for `seconds`. */
export async function openLoop(r: LoadRequest, rate: number, seconds: number, sockets = 10): Promise<LatencyFigures> {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const total = Math.round(rate * seconds);
  const intervalMs = 1000 / rate;
  const latencies: number[] = [];
  let failures = 0;
  const pending: Promise<void>[] = [];
  const start = nowMs();
  let sent = 0;
  await new Promise<void>((done) => {
    const tick = () => {
      // Every request whose time has come is sent now, each timed from when it was due.
      const now = nowMs();
      while (sent < total && start + sent * intervalMs <= now) {
        const due = start + sent * intervalMs;
        sent++;
        pending.push(
          send(agent, r).then((status) => {
            latencies.push(nowMs() - due);
            if (status < 200 || status >= 300) failures++;
          }),
        );
      }
      if (sent >= total) return done();
      setTimeout(tick, Math.max(0, start + sent * intervalMs - nowMs()));
    };
    tick();
  });
  await Promise.all(pending);
  agent.destroy();
  return figures(latencies, failures, (nowMs() - start) / 1000);
}
