/**
 * JSON-RPC over one WebSocket (the `ws` package), with subscriptions.
 *
 * The socket is created here with its `error`, `close` and `message` listeners attached
 * before anything can happen on it, so a failed handshake or a reset rejects a promise
 * instead of surfacing as an unhandled `error` event that would crash the process. A
 * transport is never reused after its socket closes: the block source builds a new one.
 *
 * Nothing the node sends is trusted: a message above `maxAnswerBytes` closes the socket
 * before it is parsed (the `ws` library's `maxPayload`), and a message of any other shape than
 * an answer to a pending request or a notification of a live subscription (null, a number, a
 * notification inside a batch, …) is dropped and counted, never thrown from the listener.
 */
import WebSocket from 'ws';
import {
  RpcConnectionError,
  RpcTimeoutError,
  isRpcObject,
  toRpcError,
  type RpcOutcome,
  type RpcRequest,
  type RpcTransport,
  type TransportLimits,
} from '@pmm/core';

export interface WsTransport extends RpcTransport {
  readonly kind: 'ws';
  /** `eth_subscribe(params)`; `onEvent` gets each notification's `result`. Resolves to the id. */
  subscribe(params: readonly unknown[], onEvent: (result: unknown) => void, timeoutMs: number): Promise<string>;
  /** Resolves (never rejects) once the socket has closed, with the reason. */
  readonly closed: Promise<Error>;
}

interface Pending {
  /** The node answered this entry (a result or a JSON-RPC error). */
  settle(outcome: RpcOutcome): void;
  /** The connection failed before the answer. */
  fail(error: Error): void;
}

/** The `ws` library's error code for a message above `maxPayload`. */
const TOO_BIG = 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';

/**
 * Opens a connection to `url`; rejects with RpcConnectionError when the handshake fails or
 * takes longer than `timeoutMs`.
 */
export function openWsTransport(url: string, timeoutMs: number, limits: TransportLimits): Promise<WsTransport> {
  return new Promise((resolveOpen, rejectOpen) => {
    const socket = new WebSocket(url, {
      handshakeTimeout: timeoutMs,
      perMessageDeflate: false,
      maxPayload: limits.maxAnswerBytes,
      // A zero masking key, which `ws` then skips applying: masking every byte of a block call
      // (2.3 MB of JSON at 100 pairs) took 8-14 ms per block in JS. Masking guards proxies
      // against payloads a hostile page chooses; ours are our own calls to our own node
      // (docs/decisions/0035-indexer-freshness.md).
      generateMask: (mask: Buffer) => mask.fill(0),
    });
    const pending = new Map<number, Pending>();
    const subscriptions = new Map<string, (result: unknown) => void>();
    let nextId = 1;
    let opened = false;
    let closeReason: Error | undefined;
    let resolveClosed!: (e: Error) => void;
    const closed = new Promise<Error>((r) => (resolveClosed = r));

    const finish = (reason: Error) => {
      if (closeReason) return;
      closeReason = reason;
      for (const p of pending.values()) p.fail(reason);
      pending.clear();
      subscriptions.clear();
      resolveClosed(reason);
      if (!opened) rejectOpen(reason);
    };

    socket.on('error', (err: Error & { code?: unknown }) => {
      // Always handled: the reason is reported through `closed` / the open promise.
      if (err.code === TOO_BIG) {
        limits.onDropped('oversized');
        finish(
          new RpcConnectionError(
            `websocket: a node message above MAX_RPC_ANSWER_BYTES (${limits.maxAnswerBytes} bytes) was refused; a block call's answer grows with pairs × ladder points`,
          ),
        );
      } else finish(new RpcConnectionError(`websocket error: ${err.message}`));
      socket.terminate();
    });
    socket.on('close', (code: number) => finish(new RpcConnectionError(`websocket closed (${code})`)));

    /** Settles the pending request an answer is for (a late answer to a timed-out request is ignored). */
    const settle = (m: Record<string, unknown>) => {
      const p = pending.get(m.id as number);
      if (!p) return;
      pending.delete(m.id as number);
      p.settle(m.error !== undefined ? { ok: false, error: toRpcError(m.error) } : { ok: true, result: m.result });
    };

    /** One parsed message: an answer, a batch of answers or a notification; anything else is dropped. */
    const handle = (msg: unknown) => {
      if (Array.isArray(msg)) {
        // A batch answer holds answers only: a node never batches notifications.
        if (msg.length === 0 || !msg.every((m) => isRpcObject(m) && typeof m.id === 'number'))
          return limits.onDropped('malformed');
        for (const m of msg as Record<string, unknown>[]) settle(m);
        return;
      }
      if (!isRpcObject(msg)) return limits.onDropped('malformed');
      if (msg.method === 'eth_subscription') {
        const params = msg.params;
        if (!isRpcObject(params) || typeof params.subscription !== 'string') return limits.onDropped('malformed');
        const onEvent = subscriptions.get(params.subscription);
        if (!onEvent) return limits.onDropped('unexpected');
        return onEvent(params.result);
      }
      if (typeof msg.id !== 'number') return limits.onDropped('malformed');
      settle(msg);
    };

    socket.on('message', (raw: WebSocket.RawData) => {
      let msg: unknown;
      try {
        msg = JSON.parse(raw.toString());
      } catch {
        return limits.onDropped('malformed');
      }
      handle(msg);
    });

    /** Sends `requests` as one message (an array when `asBatch`) and waits for every answer. */
    const send = (requests: readonly RpcRequest[], asBatch: boolean, timeoutMs: number): Promise<RpcOutcome[]> => {
      if (closeReason || socket.readyState !== WebSocket.OPEN) {
        return Promise.reject(closeReason ?? new RpcConnectionError('websocket not open'));
      }
      return new Promise((resolve, reject) => {
        const ids: number[] = [];
        const outcomes = new Array<RpcOutcome>(requests.length);
        let remaining = requests.length;
        let done = false;
        const timer = setTimeout(() => {
          if (done) return;
          done = true;
          for (const id of ids) pending.delete(id);
          reject(new RpcTimeoutError(requests[0]?.method ?? 'batch', timeoutMs));
        }, timeoutMs);
        const payload = requests.map((r, index) => {
          const id = nextId++;
          ids.push(id);
          pending.set(id, {
            fail: (error) => {
              if (done) return;
              done = true;
              clearTimeout(timer);
              for (const other of ids) pending.delete(other);
              reject(error);
            },
            settle: (outcome) => {
              if (done) return;
              outcomes[index] = outcome;
              if (--remaining === 0) {
                done = true;
                clearTimeout(timer);
                resolve(outcomes);
              }
            },
          });
          return { jsonrpc: '2.0', id, method: r.method, params: r.params };
        });
        if (remaining === 0) {
          done = true;
          clearTimeout(timer);
          resolve([]);
          return;
        }
        socket.send(JSON.stringify(asBatch ? payload : payload[0]), (err) => {
          if (err && !done) {
            done = true;
            clearTimeout(timer);
            for (const id of ids) pending.delete(id);
            reject(new RpcConnectionError(`websocket send failed: ${err.message}`));
          }
        });
      });
    };

    const request = async (method: string, params: readonly unknown[], timeoutMs: number): Promise<unknown> => {
      const [outcome] = await send([{ method, params }], false, timeoutMs);
      if (!outcome) throw new RpcConnectionError('no answer');
      if (!outcome.ok) throw outcome.error;
      return outcome.result;
    };

    const transport: WsTransport = {
      kind: 'ws',
      closed,
      request,
      batch: (requests, timeoutMs) => send(requests, true, timeoutMs),
      async subscribe(params, onEvent, timeoutMs) {
        const subscriptionId = await request('eth_subscribe', params, timeoutMs);
        if (typeof subscriptionId !== 'string') throw new RpcConnectionError('eth_subscribe: no subscription id');
        subscriptions.set(subscriptionId, onEvent);
        return subscriptionId;
      },
      close() {
        finish(new RpcConnectionError('closed by the indexer'));
        socket.removeAllListeners('message');
        // terminate(): no closing handshake to wait for on a socket that may be half dead.
        socket.terminate();
      },
    };

    socket.on('open', () => {
      opened = true;
      resolveOpen(transport);
    });
  });
}
