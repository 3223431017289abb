/**
 * The node calls behind one chain's firm quotes (docs/decisions/0070-firm-quotes-share-a-flight-and-a-round-trip.md):
 * a block's quotes cost the node a round trip per burst, not one per request.
 *
 * - **One flight per quote.** The same `quote()` at the same block (block hash, tokenIn,
 *   tokenOut, amountIn) is asked of the node once: every request for it shares the flight and
 *   its answer. An answer the router gave for the block (an amount, or a revert for the amount
 *   or the pair: `keep`) stays with that block and is served to later requests for it, since a
 *   block's state never changes; anything else (the node failed, stalled, answered garbage) is
 *   shared only by the requests of its flight and forgotten when the flight ends. Only the two
 *   latest blocks seen are kept, each up to MAX_KEPT_PER_BLOCK answers.
 * - **One round trip per burst.** The distinct quotes of a block that arrive in the same turn of
 *   the event loop (sent at `setImmediate`, so a lone quote waits for nothing) go to the node
 *   together, at most `maxBatch` a round trip: one `eth_call` of Multicall3 `aggregate3`
 *   (allowFailure on every call) pinned to the block's hash; without Multicall3, one
 *   `eth_call` alone, or a JSON-RPC batch of them. Each call keeps its own answer (return or
 *   revert data); an answer that is not the node's answer to THESE calls (not hex, not
 *   `aggregate3`'s shape, another count of results) fails every call of the round trip
 *   (NodeGarbage): a result is never assigned by guess.
 * - **No call that cannot end in time.** Each quote carries its deadline; a round trip is sent
 *   with what is left of the latest one among its calls, and a call with less time left than
 *   the node's fastest round trip of late (the fastest of its answers in the last
 *   ROUND_TRIP_WINDOW_MS, once there are MIN_ROUND_TRIPS of them) is not sent: it fails with
 *   NoTimeLeft at once. The fastest, not a typical one: what is refused could not have been
 *   answered in time. Recent only: a node that was slow (or a cold first connection) does not
 *   keep refusing calls once it is fast again, since no call would be sent to show it.
 */
import { decodeAggregate3, encodeAggregate3, type CallResult } from '@pmm/protocol';
import { blockHashRef, isHexBytes, revertData, RpcError, type RpcTransport } from '@pmm/core';

/** What makes two quotes the same node call (the chain is the QuoteCalls'). */
export interface QuoteCallKey {
  blockHash: string;
  tokenIn: string;
  tokenOut: string;
  amountIn: bigint;
}

/** The node's answer is not an answer to the calls sent: every call of its round trip fails. */
export class NodeGarbage extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NodeGarbage';
  }
}

/** The call was not sent: the node's fastest recent round trip would end after its deadline. */
export class NoTimeLeft extends Error {
  constructor(readonly expectedMs: number) {
    super(
      expectedMs > 0
        ? `the node's round trip (${expectedMs} ms at the fastest of late) would end after the deadline`
        : 'the deadline passed before the node was asked',
    );
    this.name = 'NoTimeLeft';
  }
}

export interface QuoteCallsOptions {
  rpc: RpcTransport;
  router: string;
  /** Multicall3 on this chain (the deployment's `contracts.multicall3`); absent: a JSON-RPC batch. */
  multicall3?: string;
  /** Most calls in one round trip; more that arrive together make more round trips. */
  maxBatch?: number;
  /** Whether an answer is the router's for the block (kept for the block), not a failure of the node. */
  keep(result: CallResult): boolean;
  /** Each round trip sent: the quotes it carries and the `eth_call`s it costs the node. */
  onRoundTrip?(quotes: number, ethCalls: number): void;
  /** The clock (ms); Date.now by default. */
  now?(): number;
  /** Runs `send` once the calls of this turn are in; setImmediate by default. */
  schedule?(send: () => void): void;
}

export interface QuoteCalls {
  /**
   * The router's answer to `quote()` of `key` (its return data, or its revert data), by
   * `deadline` (ms, the clock of `now`). `calldata` is asked only when this request starts the
   * quote's flight (a request that joins one costs nothing); its rejection is the flight's.
   *
   * @throws NoTimeLeft, NodeGarbage, or the transport's RpcError / RpcTimeoutError /
   *   RpcConnectionError (the round trip failed as a whole), or what `calldata` threw
   */
  call(key: QuoteCallKey, deadline: number, calldata: () => Promise<string> | string): Promise<CallResult>;
  /** The node's fastest recent round trip, ms: less time left refuses a call (0: none refused). */
  expectedRoundTripMs(): number;
}

export const DEFAULT_MAX_BATCH = 50;
/** Answers kept per block (a block's distinct quotes beyond it are asked again). */
export const MAX_KEPT_PER_BLOCK = 4_096;
/** Blocks whose answers are kept: the served one and the one before (requests in flight across a new block). */
const KEPT_BLOCKS = 2;
/** The round trips remembered (the latest), and how recent and how many count. */
const ROUND_TRIP_SAMPLES = 32;
const ROUND_TRIP_WINDOW_MS = 5_000;
const MIN_ROUND_TRIPS = 3;

interface Flight {
  readonly blockHash: string;
  readonly id: string;
  /** The latest deadline of its requests until it is sent. */
  deadline: number;
  data?: string;
  state: 'preparing' | 'waiting' | 'sent' | 'kept';
  readonly answer: Promise<CallResult>;
  resolve(result: CallResult): void;
  reject(err: unknown): void;
}

interface BlockFlights {
  flights: Map<string, Flight>;
  kept: number;
}

const noop = () => undefined;

export function createQuoteCalls(opts: QuoteCallsOptions): QuoteCalls {
  const now = opts.now ?? Date.now;
  const schedule = opts.schedule ?? ((send: () => void) => void setImmediate(send));
  const maxBatch = opts.maxBatch ?? DEFAULT_MAX_BATCH;
  const blocks = new Map<string, BlockFlights>();
  /** Flights with their calldata, not yet sent, by block hash. */
  const waiting = new Map<string, Flight[]>();
  let scheduled = false;
  /** The latest answered round trips: when each ended, and how long it took (ms). */
  const roundTrips: { at: number; ms: number }[] = [];
  let nextSample = 0;

  const expectedRoundTripMs = (): number => {
    const since = now() - ROUND_TRIP_WINDOW_MS;
    let count = 0;
    let fastest = Infinity;
    for (const r of roundTrips) {
      if (r.at < since) continue;
      count++;
      fastest = Math.min(fastest, r.ms);
    }
    return count >= MIN_ROUND_TRIPS ? fastest : 0;
  };

  const flightsOf = (blockHash: string): BlockFlights => {
    let block = blocks.get(blockHash);
    if (!block) {
      block = { flights: new Map(), kept: 0 };
      blocks.set(blockHash, block);
      // Insertion order: the oldest block goes first (its requests still in flight keep their promise).
      for (const old of blocks.keys()) {
        if (blocks.size <= KEPT_BLOCKS) break;
        blocks.delete(old);
      }
    }
    return block;
  };

  const forget = (f: Flight) => {
    const block = blocks.get(f.blockHash);
    if (block?.flights.get(f.id) === f) block.flights.delete(f.id);
  };

  const fail = (f: Flight, err: unknown) => {
    forget(f);
    f.reject(err);
  };

  const answered = (f: Flight, result: CallResult) => {
    const block = blocks.get(f.blockHash);
    if (block && block.flights.get(f.id) === f && opts.keep(result) && block.kept < MAX_KEPT_PER_BLOCK) {
      f.state = 'kept';
      block.kept++;
    } else forget(f);
    f.resolve(result);
  };

  /**
   * One round trip: each call's answer in order (an error for a call the node failed alone,
   * in a JSON-RPC batch); rejects as a whole.
   */
  const roundTrip = async (blockHash: string, calls: string[], timeoutMs: number): Promise<(CallResult | Error)[]> => {
    const block = blockHashRef(blockHash);
    if (opts.multicall3) {
      const data = encodeAggregate3(calls.map((c) => ({ target: opts.router, data: c })));
      const raw = await opts.rpc.request('eth_call', [{ to: opts.multicall3, data }, block], timeoutMs);
      if (!isHexBytes(raw)) throw new NodeGarbage('the node answered aggregate3 with something other than hex');
      try {
        return decodeAggregate3(raw, calls.length);
      } catch (err) {
        throw new NodeGarbage('the node answered aggregate3 with data of another shape', { cause: err });
      }
    }
    if (calls.length === 1) {
      let raw: unknown;
      try {
        raw = await opts.rpc.request('eth_call', [{ to: opts.router, data: calls[0] }, block], timeoutMs);
      } catch (err) {
        // A revert is the router's answer; any other error (no revert data) is the node's failure.
        if (err instanceof RpcError && revertData(err) !== '0x') return [{ success: false, data: revertData(err) }];
        throw err;
      }
      if (!isHexBytes(raw)) throw new NodeGarbage('the node answered eth_call with something other than hex');
      return [{ success: true, data: raw }];
    }
    const outcomes = await opts.rpc.batch(
      calls.map((data) => ({ method: 'eth_call', params: [{ to: opts.router, data }, block] })),
      timeoutMs,
    );
    if (outcomes.length !== calls.length) throw new NodeGarbage(`${outcomes.length} answers for ${calls.length} calls`);
    return outcomes.map((o) => {
      if (o.ok) {
        if (!isHexBytes(o.result)) throw new NodeGarbage('the node answered an eth_call with something other than hex');
        return { success: true, data: o.result };
      }
      const reverted = revertData(o.error);
      // The node's own failure of one call (no revert data) is not the router's answer.
      return reverted === '0x' ? o.error : { success: false, data: reverted };
    });
  };

  const send = (blockHash: string, batch: Flight[]) => {
    const at = now();
    const expected = expectedRoundTripMs();
    const sent: Flight[] = [];
    for (const f of batch) {
      if (f.deadline - at <= expected) fail(f, new NoTimeLeft(expected));
      else sent.push(f);
    }
    if (sent.length === 0) return;
    let latest = 0;
    for (const f of sent) {
      f.state = 'sent';
      latest = Math.max(latest, f.deadline);
    }
    opts.onRoundTrip?.(sent.length, opts.multicall3 || sent.length === 1 ? 1 : sent.length);
    roundTrip(
      blockHash,
      sent.map((f) => f.data!),
      latest - at,
    ).then(
      (results) => {
        const end = now();
        roundTrips[nextSample] = { at: end, ms: end - at };
        nextSample = (nextSample + 1) % ROUND_TRIP_SAMPLES;
        sent.forEach((f, i) => {
          const result = results[i]!;
          if (result instanceof Error) fail(f, result);
          else answered(f, result);
        });
      },
      (err: unknown) => {
        for (const f of sent) fail(f, err);
      },
    );
  };

  const sendWaiting = () => {
    scheduled = false;
    const all = [...waiting];
    waiting.clear();
    for (const [blockHash, batch] of all) send(blockHash, batch);
  };

  const ready = (f: Flight, data: string) => {
    f.data = data;
    f.state = 'waiting';
    const batch = waiting.get(f.blockHash) ?? [];
    batch.push(f);
    if (batch.length >= maxBatch) {
      waiting.delete(f.blockHash);
      send(f.blockHash, batch);
      return;
    }
    waiting.set(f.blockHash, batch);
    if (!scheduled) {
      scheduled = true;
      schedule(sendWaiting);
    }
  };

  return {
    expectedRoundTripMs,
    call(key, deadline, calldata) {
      const block = flightsOf(key.blockHash);
      const id = `${key.tokenIn.toLowerCase()}:${key.tokenOut.toLowerCase()}:${key.amountIn}`;
      const joined = block.flights.get(id);
      if (joined) {
        // Until it is sent, a flight waits for its latest request.
        if (joined.state === 'preparing' || joined.state === 'waiting')
          joined.deadline = Math.max(joined.deadline, deadline);
        return joined.answer;
      }
      let resolve!: (result: CallResult) => void;
      let reject!: (err: unknown) => void;
      const answer = new Promise<CallResult>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      // Every request of the flight may have given up (its own deadline): no unhandled rejection.
      answer.catch(noop);
      const f: Flight = { blockHash: key.blockHash, id, deadline, state: 'preparing', answer, resolve, reject };
      block.flights.set(id, f);
      Promise.resolve()
        .then(calldata)
        .then(
          (data) => ready(f, data),
          (err: unknown) => fail(f, err),
        );
      return answer;
    },
  };
}
