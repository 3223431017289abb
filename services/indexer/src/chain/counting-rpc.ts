/**
 * Wraps a transport to count what it sends (metrics): `eth_call`s, including those inside a
 * JSON-RPC batch, and failed round trips.
 */
import type { RpcTransport } from '@pmm/core';

export function countingRpc(rpc: RpcTransport, on: { ethCalls(n: number): void; error(): void }): RpcTransport {
  const track = <T>(p: Promise<T>): Promise<T> =>
    p.catch((err: unknown) => {
      on.error();
      throw err;
    });
  return {
    get kind() {
      return rpc.kind;
    },
    request(method, params, timeoutMs) {
      if (method === 'eth_call') on.ethCalls(1);
      return track(rpc.request(method, params, timeoutMs));
    },
    batch(requests, timeoutMs) {
      const n = requests.filter((r) => r.method === 'eth_call').length;
      if (n > 0) on.ethCalls(n);
      return track(rpc.batch(requests, timeoutMs));
    },
    close: () => rpc.close(),
  };
}
