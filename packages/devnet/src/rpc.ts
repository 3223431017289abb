/** Minimal JSON-RPC over HTTP for process supervision (no provider, no retries, no polling). */

/** Sends one JSON-RPC request; rejects on a transport error, a timeout or a JSON-RPC error. */
export async function rpcCall(url: string, method: string, params: unknown[] = [], timeoutMs = 2000): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message?: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message ?? 'JSON-RPC error'}`);
  return body.result;
}
