/**
 * Follows a chain's new blocks and owns the node connection the rest of the indexer uses.
 *
 * WebSocket (when the deployment has `wsUrl`):
 * - `eth_subscribe newHeads`; every header carries number, hash and timestamp, so a new
 *   block costs no extra round trip;
 * - a heartbeat (`eth_blockNumber` every `heartbeatMs`, `timeoutMs` to answer) detects a
 *   half-dead socket, which ethers' provider never would; it also notices a subscription that
 *   went silent while blocks still advance, and fetches the newest header itself;
 * - on any failure the connection is closed (`terminate`) and a NEW one is built after a
 *   capped exponential backoff; the old one is never reused;
 * - the node's chain id is checked on every connection.
 * HTTP (only `rpcUrl`): `eth_getBlockByNumber("latest")` every `pollIntervalMs`.
 *
 * Every header is validated (number, timestamp, a 32-byte hash) and offered to `admit`
 * (domain/head-guard.ts) before it counts as the newest head: a refused head is neither
 * reported nor used as the block the registry is read at.
 *
 * Only heads are reported, never a backlog: a consumer that is busy simply sees the newest
 * head when it is ready (see the block queue). `close()` stops everything.
 */
import {
  type Logger,
  createHttpTransport,
  hexToNumber,
  isBlockHash,
  isRpcObject,
  RpcConnectionError,
  type RpcTransport,
  type TransportLimits,
} from '@pmm/core';
import { backoffDelay, type BackoffBounds } from '../domain/backoff';
import { outageLog } from '../outage-log';
import { openWsTransport, type WsTransport } from './ws-transport';

export interface BlockHead {
  number: number;
  /** Unix seconds. */
  timestamp: number;
  hash: string;
  /** Date.now() when this process first saw the head (block-to-book latency starts here). */
  seenAt: number;
}

export interface BlockSourceOptions {
  chainId: number;
  wsUrl?: string;
  rpcUrl?: string;
  timeoutMs: number;
  heartbeatMs: number;
  pollIntervalMs: number;
  backoff: BackoffBounds;
  /** Bounds on what the node may send (answer size; dropped messages are reported here). */
  limits: TransportLimits;
  logger: Logger;
  /** Whether a valid head may become the newest (freshness, plausible jump); false drops it. */
  admit(head: BlockHead): boolean;
  onHead(head: BlockHead): void;
  /** Node connection state changes (also the first `up`). */
  onState(state: 'up' | 'down', reason?: string): void;
  /** Each reconnect attempt (metrics). */
  onReconnect?(): void;
}

/** The settings of a chain's node connection, read the same way by the indexer and the ledger. */
export interface NodeConnectionSettings {
  chainId: number;
  deployment: { wsUrl?: string; rpcUrl?: string };
  rpcTimeoutMs: number;
  heartbeatMs: number;
  pollIntervalMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  maxRpcAnswerBytes: number;
}

/**
 * The connection part of a block source's options from a process's settings; `onDropped` counts
 * what the transport throws away (oversized, malformed, redirects) in the process's own metric.
 */
export function nodeConnectionOptions(
  c: NodeConnectionSettings,
  onDropped: TransportLimits['onDropped'],
): Pick<
  BlockSourceOptions,
  'chainId' | 'wsUrl' | 'rpcUrl' | 'timeoutMs' | 'heartbeatMs' | 'pollIntervalMs' | 'backoff' | 'limits'
> {
  return {
    chainId: c.chainId,
    wsUrl: c.deployment.wsUrl,
    rpcUrl: c.deployment.rpcUrl,
    timeoutMs: c.rpcTimeoutMs,
    heartbeatMs: c.heartbeatMs,
    pollIntervalMs: c.pollIntervalMs,
    backoff: { minMs: c.reconnectMinMs, maxMs: c.reconnectMaxMs },
    limits: { maxAnswerBytes: c.maxRpcAnswerBytes, onDropped },
  };
}

export interface BlockSource {
  /** The current node connection; rejects with RpcConnectionError while the node is down. */
  readonly rpc: RpcTransport;
  readonly isUp: () => boolean;
  /** The newest head seen on the current connection, if any. */
  readonly latest: () => BlockHead | undefined;
  /** Stops following and closes the connection. Idempotent. */
  close(): Promise<void>;
}

/** Parses a `newHeads` notification or an `eth_getBlockByNumber` result. */
function parseHeader(raw: unknown, seenAt: number): BlockHead {
  if (!isRpcObject(raw)) throw new RpcConnectionError('block header is not an object');
  if (!isBlockHash(raw.hash)) throw new RpcConnectionError('block header without a 32-byte hash');
  return {
    number: hexToNumber(raw.number, 'block number'),
    timestamp: hexToNumber(raw.timestamp, 'block timestamp'),
    hash: raw.hash.toLowerCase(),
    seenAt,
  };
}

export function startBlockSource(opts: BlockSourceOptions): BlockSource {
  const log = opts.logger;
  const badHeads = outageLog(log, 'bad newHeads notification');
  let stopped = false;
  let current: RpcTransport | undefined;
  let up = false;
  let latest: BlockHead | undefined;
  let lastHeadAt = 0;
  let wakeStop!: () => void;
  const stopSignal = new Promise<void>((r) => (wakeStop = r));
  /** Sleepers to wake on close (a Set, not reactions on stopSignal: those would pile up forever). */
  const sleepers = new Set<() => void>();

  /** Sleeps `ms`, or less if the source is closed meanwhile. */
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(t);
        sleepers.delete(wake);
        resolve();
      };
      const t = setTimeout(wake, ms);
      sleepers.add(wake);
    });

  const setState = (next: boolean, reason?: string) => {
    if (next === up) return;
    up = next;
    opts.onState(next ? 'up' : 'down', reason);
  };

  const closeCurrent = () => {
    current?.close();
    current = undefined;
  };

  const emit = (head: BlockHead) => {
    // Same block twice (subscription + heartbeat race): report it once. A LOWER number is
    // reported: after a node restart or a reorg the chain really is there now.
    if (latest && latest.number === head.number && latest.hash === head.hash) return;
    if (!opts.admit(head)) return;
    latest = head;
    lastHeadAt = Date.now();
    opts.onHead(head);
  };

  const fetchLatest = async (transport: RpcTransport) => {
    const raw = await transport.request('eth_getBlockByNumber', ['latest', false], opts.timeoutMs);
    if (raw !== null) emit(parseHeader(raw, Date.now()));
  };

  const checkChainId = async (transport: RpcTransport) => {
    const id = hexToNumber(await transport.request('eth_chainId', [], opts.timeoutMs), 'eth_chainId');
    if (id !== opts.chainId) throw new RpcConnectionError(`node serves chain ${id}, expected ${opts.chainId}`);
  };

  /** Heartbeat of one WebSocket connection; returns (closing it) at the first failure. */
  const heartbeat = async (transport: WsTransport) => {
    let open = true;
    void transport.closed.then(() => (open = false));
    while (open && !stopped) {
      await sleep(opts.heartbeatMs);
      if (!open || stopped) return;
      try {
        const n = hexToNumber(await transport.request('eth_blockNumber', [], opts.timeoutMs), 'eth_blockNumber');
        // The subscription went quiet although the chain moved: fetch the head ourselves.
        if ((!latest || n > latest.number) && Date.now() - lastHeadAt > opts.heartbeatMs) await fetchLatest(transport);
      } catch (err) {
        log.warn('node heartbeat failed', { error: err instanceof Error ? err.message : String(err) });
        transport.close();
        return;
      }
    }
  };

  const runWs = async (url: string) => {
    let attempt = 0;
    while (!stopped) {
      let transport: WsTransport | undefined;
      let reason: string;
      try {
        transport = await openWsTransport(url, opts.timeoutMs, opts.limits);
        if (stopped) break;
        await checkChainId(transport);
        latest = undefined;
        await transport.subscribe(
          ['newHeads'],
          (raw) => {
            try {
              emit(parseHeader(raw, Date.now()));
              badHeads.ok();
            } catch (err) {
              opts.limits.onDropped('malformed');
              badHeads.failed(err);
            }
          },
          opts.timeoutMs,
        );
        current = transport;
        attempt = 0;
        setState(true);
        void fetchLatest(transport).catch(() => undefined);
        void heartbeat(transport);
        reason = (await Promise.race([transport.closed, stopSignal.then(() => new Error('stopped'))])).message;
      } catch (err) {
        reason = err instanceof Error ? err.message : String(err);
      }
      current = undefined;
      transport?.close();
      if (stopped) break;
      setState(false, reason);
      const delay = backoffDelay(attempt++, opts.backoff);
      log.debug('node reconnect scheduled', { inMs: delay, reason });
      await sleep(delay);
      if (!stopped) opts.onReconnect?.();
    }
    closeCurrent();
  };

  const runHttp = async (url: string) => {
    const transport = createHttpTransport(url, opts.limits);
    let failures = 0;
    let verified = false;
    while (!stopped) {
      try {
        if (!verified) {
          await checkChainId(transport);
          verified = true;
          latest = undefined;
        }
        await fetchLatest(transport);
        current = transport;
        failures = 0;
        setState(true);
        await sleep(opts.pollIntervalMs);
      } catch (err) {
        if (stopped) break;
        current = undefined;
        // The node may come back as a different one (restart, failover): check it again.
        verified = false;
        setState(false, err instanceof Error ? err.message : String(err));
        await sleep(backoffDelay(failures++, opts.backoff));
        if (!stopped) opts.onReconnect?.();
      }
    }
    transport.close();
  };

  const notConnected = () => new RpcConnectionError('node connection is down');
  const rpc: RpcTransport = {
    get kind() {
      return current?.kind ?? (opts.wsUrl ? 'ws' : 'http');
    },
    request: (method, params, timeoutMs) =>
      current ? current.request(method, params, timeoutMs) : Promise.reject(notConnected()),
    batch: (requests, timeoutMs) => (current ? current.batch(requests, timeoutMs) : Promise.reject(notConnected())),
    close: () => undefined,
  };

  let running: Promise<void>;
  if (opts.wsUrl) running = runWs(opts.wsUrl);
  else if (opts.rpcUrl) running = runHttp(opts.rpcUrl);
  else throw new Error('block source: the deployment has neither wsUrl nor rpcUrl');

  return {
    rpc,
    isUp: () => up,
    latest: () => latest,
    async close() {
      if (stopped) return running;
      stopped = true;
      wakeStop();
      for (const wake of [...sleepers]) wake();
      closeCurrent();
      await running;
    },
  };
}
