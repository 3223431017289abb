/**
 * JSON-RPC over HTTP (core's postToNode: node:http, keep-alive), with a timeout per request.
 * Used for polling when the chain has no WebSocket URL, and for the second node that confirms
 * registry changes; stateless, so it never needs rebuilding.
 *
 * The answer is read as a stream and abandoned as soon as it passes `maxAnswerBytes` (a
 * declared Content-Length above the cap is refused before reading): a node cannot make the
 * indexer buffer or parse more than that. A redirect is never followed. An answer that is a
 * redirect, too large, not JSON, or not of JSON-RPC's shape fails its request
 * (RpcConnectionError) and is counted (`indexer_node_messages_dropped_total{reason}`).
 */
import { NodeAnswerTooLarge, NodeRedirectError, postToNode } from './node-http';
import {
  type DroppedReason,
  RpcConnectionError,
  RpcTimeoutError,
  isRpcObject,
  toRpcError,
  type RpcOutcome,
  type RpcRequest,
  type RpcTransport,
  type TransportLimits,
} from './json-rpc';

type RpcMessage = Record<string, unknown>;

export function createHttpTransport(url: string, limits: TransportLimits): RpcTransport {
  /** A failure of the node's answer: counted, and its request failed. */
  const dropped = (reason: DroppedReason, message: string) => {
    limits.onDropped(reason);
    return new RpcConnectionError(message);
  };

  /** Parses an answer; a non-JSON body is the node's failure, not ours. */
  const parse = (text: string, label: string): unknown => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw dropped('malformed', `${label}: answer is not JSON`);
    }
  };

  /** A single answer must be an object; anything else (null, a number, an array) fails the request. */
  const single = (answer: unknown, label: string): RpcMessage => {
    if (isRpcObject(answer)) return answer;
    throw dropped('malformed', `${label}: answer is not a JSON-RPC object`);
  };

  let nextId = 1;
  const controllers = new Set<AbortController>();

  async function post(body: unknown, label: string, timeoutMs: number): Promise<unknown> {
    const controller = new AbortController();
    controllers.add(controller);
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const answer = await postToNode(url, JSON.stringify(body), {
        signal: controller.signal,
        maxBytes: limits.maxAnswerBytes,
      });
      if (answer.status < 200 || answer.status >= 300) throw new RpcConnectionError(`${label}: HTTP ${answer.status}`);
      return parse(answer.text, label);
    } catch (err) {
      if (controller.signal.aborted) throw new RpcTimeoutError(label, timeoutMs);
      if (err instanceof RpcConnectionError) throw err;
      if (err instanceof NodeRedirectError) throw dropped('redirect', `${label}: ${err.message}`);
      if (err instanceof NodeAnswerTooLarge)
        throw dropped('oversized', `${label}: answer larger than MAX_RPC_ANSWER_BYTES (${err.maxBytes} bytes)`);
      throw new RpcConnectionError(`${label}: ${err instanceof Error ? err.message : 'request failed'}`);
    } finally {
      clearTimeout(timer);
      controllers.delete(controller);
    }
  }

  const toOutcome = (m: RpcMessage | undefined): RpcOutcome =>
    m === undefined
      ? { ok: false, error: toRpcError({ message: 'no answer for this entry' }) }
      : m.error !== undefined
        ? { ok: false, error: toRpcError(m.error) }
        : { ok: true, result: m.result };

  return {
    kind: 'http',
    async request(method, params, timeoutMs) {
      const outcome = toOutcome(
        single(await post({ jsonrpc: '2.0', id: nextId++, method, params }, method, timeoutMs), method),
      );
      if (!outcome.ok) throw outcome.error;
      return outcome.result;
    },
    async batch(requests: readonly RpcRequest[], timeoutMs) {
      if (requests.length === 0) return [];
      const first = nextId;
      nextId += requests.length;
      const payload = requests.map((r, i) => ({ jsonrpc: '2.0', id: first + i, method: r.method, params: r.params }));
      const answer = await post(payload, `batch of ${requests.length}`, timeoutMs);
      if (!Array.isArray(answer)) {
        // Some nodes answer a rejected batch with one error object.
        const one = single(answer, 'batch');
        throw one.error !== undefined ? toRpcError(one.error) : new RpcConnectionError('batch: not an array');
      }
      const byId = new Map<number, RpcMessage>();
      for (const m of answer) if (isRpcObject(m) && typeof m.id === 'number') byId.set(m.id, m);
      return payload.map((p) => toOutcome(byId.get(p.id)));
    },
    close() {
      for (const c of controllers) c.abort();
      controllers.clear();
    },
  };
}
