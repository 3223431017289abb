/**
 * `npm run bench chain-client`: the indexer's own JSON-RPC transports (ws-transport.ts,
 * @pmm/core's json-rpc-http-transport.ts) against viem's `webSocket` and `http` transports, on one devnet node, for
 * the calls the indexer makes: a light one (`eth_blockNumber`, the heartbeat) and the block
 * header (`eth_getBlockByNumber`), one at a time and 32 in flight. Prints requests per second
 * and the ratio ours / viem.
 *
 * Speed is one half of the choice; the other is what each does when the node misbehaves, which
 * chain-client-choice.devnet.test.ts pins (docs/decisions/0059-viem-websocket-transport.md).
 */
import { http, webSocket } from 'viem';
import { startSystem } from '@pmm/testkit';
import { createHttpTransport } from '@pmm/core';
import { openWsTransport } from '../src/chain/ws-transport';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const IN_FLIGHT = 32;

type Call = (method: string, params: unknown[]) => Promise<unknown>;

async function rate(call: Call, method: string, params: unknown[], inFlight: number): Promise<number> {
  for (let i = 0; i < 100; i++) await call(method, params); // warm-up
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < REQUESTS) await call(method, params);
    }),
  );
  return (REQUESTS / (performance.now() - started)) * 1000;
}

async function main(): Promise<void> {
  // The chain (startSystem adds a private Redis, unused here): both clients run in this process.
  const sys = await startSystem({ chains: [4663], blockIntervalMs: 1000, services: [] });
  const chain = sys.chain(4663);
  const limits = { maxAnswerBytes: 2_097_152, onDropped: () => undefined };
  const ours = {
    ws: await openWsTransport(chain.wsUrl, 5000, limits),
    http: createHttpTransport(chain.rpcUrl, limits),
  };
  const viem = {
    ws: webSocket(chain.wsUrl, { retryCount: 0, timeout: 5000 })({}),
    http: http(chain.rpcUrl, { retryCount: 0, timeout: 5000 })({}),
  };
  const calls: Record<string, Call> = {
    'ours ws': (method, params) => ours.ws.request(method, params, 5000),
    'viem ws': (method, params) => viem.ws.request({ method, params } as never),
    'ours http': (method, params) => ours.http.request(method, params, 5000),
    'viem http': (method, params) => viem.http.request({ method, params } as never),
  };
  const workloads: [string, string, unknown[]][] = [
    ['eth_blockNumber', 'eth_blockNumber', []],
    ['eth_getBlockByNumber', 'eth_getBlockByNumber', ['latest', false]],
  ];
  console.log(`${REQUESTS} requests per cell, devnet node (anvil) on 127.0.0.1`);
  for (const [label, method, params] of workloads) {
    for (const inFlight of [1, IN_FLIGHT]) {
      const figures: Record<string, number> = {};
      for (const [name, call] of Object.entries(calls)) figures[name] = await rate(call, method, params, inFlight);
      const cells = Object.entries(figures).map(([name, r]) => `${name} ${r.toFixed(0)}/s`);
      console.log(
        `${label}, ${inFlight} in flight: ${cells.join(', ')}; ` +
          `ws ours/viem ${(figures['ours ws']! / figures['viem ws']!).toFixed(2)}, ` +
          `http ours/viem ${(figures['ours http']! / figures['viem http']!).toFixed(2)}`,
      );
    }
  }
  ours.ws.close();
  ours.http.close();
  (await viem.ws.value!.getRpcClient()).close();
  await sys.stop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
