/**
 * JSON-RPC over HTTP (Node's fetch, keep-alive), with a timeout per request. Used for
 * polling when the chain has no WebSocket URL; stateless, so it never needs rebuilding.
 */
import {
  RpcConnectionError,
  RpcTimeoutError,
  toRpcError,
  type RpcOutcome,
  type RpcRequest,
  type RpcTransport,
} from './json-rpc';

interface RpcMessage {
  id?: unknown;
  result?: unknown;
  error?: unknown;
}

export function createHttpTransport(url: string): RpcTransport {
  let nextId = 1;
  const controllers = new Set<AbortController>();

  async function post(body: unknown, label: string, timeoutMs: number): Promise<unknown> {
    const controller = new AbortController();
    controllers.add(controller);
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      if (!res.ok) throw new RpcConnectionError(`${label}: HTTP ${res.status}`);
      return (await res.json()) as unknown;
    } catch (err) {
      if (controller.signal.aborted) throw new RpcTimeoutError(label, timeoutMs);
      if (err instanceof RpcConnectionError) throw err;
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
        (await post({ jsonrpc: '2.0', id: nextId++, method, params }, method, timeoutMs)) as RpcMessage,
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
        const single = answer as RpcMessage;
        throw single?.error !== undefined ? toRpcError(single.error) : new RpcConnectionError('batch: not an array');
      }
      const byId = new Map<number, RpcMessage>();
      for (const m of answer as RpcMessage[]) if (typeof m?.id === 'number') byId.set(m.id, m);
      return payload.map((p) => toOutcome(byId.get(p.id)));
    },
    close() {
      for (const c of controllers) c.abort();
      controllers.clear();
    },
  };
}
