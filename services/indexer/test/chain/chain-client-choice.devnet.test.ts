/**
 * Why the indexer keeps its own WebSocket JSON-RPC transport instead of viem's `webSocket`
 * (viem 2.57): two faults an indexer must survive, on a real devnet node, where viem's transport
 * stays broken and the block source recovers. If a viem upgrade makes these expectations fail,
 * viem has fixed them: reconsider replacing ws-transport.ts (docs/decisions/0059-viem-websocket-transport.md).
 *
 * 1. A frozen node (SIGSTOP: the TCP connection stays open, nothing answers). viem's keep-alive
 *    sends `net_version` with no id and never waits for an answer, so the socket is never
 *    declared dead: no error, no reconnect, the subscription just goes quiet. Our heartbeat
 *    times out and rebuilds the connection.
 * 2. A node down for longer than viem's reconnect attempts. viem then gives up, and because
 *    socket clients are cached per URL and options until closed, even a NEW transport for the
 *    same URL gets the dead client once the node is back. Our block source retries forever,
 *    with capped backoff, on a new connection each time.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { createLogger } from '@pmm/core';
import { startSystem, until, type System } from '@pmm/testkit';
import { startBlockSource, type BlockSource } from '../../src/chain/block-source';

jest.setTimeout(120_000);

const CHAIN = 4663;
const OPEN = 1; // WebSocket.OPEN
let sys: System;
let source: BlockSource | undefined;
let probe: ViemProbe | undefined;
const logger = createLogger({ service: 'test', level: 'error' });

beforeAll(async () => {
  // The chain (its private Redis unused): the block source and viem's transport in this process.
  sys = await startSystem({ chains: [CHAIN], blockIntervalMs: 300, services: [] });
});

afterAll(async () => {
  probe?.child.kill('SIGKILL');
  await source?.close();
  await sys?.stop();
});

function followWithBlockSource(states: string[]): BlockSource {
  return startBlockSource({
    chainId: CHAIN,
    wsUrl: sys.chain(CHAIN).wsUrl,
    timeoutMs: 500,
    heartbeatMs: 300,
    pollIntervalMs: 300,
    backoff: { minMs: 100, maxMs: 400 },
    limits: { maxAnswerBytes: 1_048_576, onDropped: () => undefined },
    logger,
    admit: () => true,
    onHead: () => undefined,
    onState: (state) => states.push(state),
  });
}

interface ViemProbe {
  child: ChildProcessWithoutNullStreams;
  /** Sends a command and resolves with the next line whose event is `event`. */
  ask(command: string, event: string): Promise<Record<string, unknown>>;
}

/** viem's WebSocket transport in its own Node process, with liveness settings as tight as ours. */
async function startViemProbe(reconnect: { attempts: number; delay: number }): Promise<ViemProbe> {
  const url = sys.chain(CHAIN).wsUrl;
  const script = path.join(__dirname, '..', 'support', 'viem-ws-probe.cjs');
  const child = spawn(process.execPath, [script, url, String(reconnect.attempts), String(reconnect.delay)]);
  const waiting: { event: string; resolve: (line: Record<string, unknown>) => void }[] = [];
  readline.createInterface({ input: child.stdout }).on('line', (text) => {
    const line = JSON.parse(text) as Record<string, unknown>;
    const at = waiting.findIndex((w) => w.event === line.event || line.event === 'failed');
    if (at >= 0) waiting.splice(at, 1)[0]!.resolve(line);
  });
  const next = (event: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`viem probe: no ${event} within 15 s`)), 15_000);
      waiting.push({ event, resolve: (line) => (clearTimeout(timer), resolve(line)) });
    });
  await next('started');
  return {
    child,
    ask(command, event) {
      const answer = next(event);
      child.stdin.write(`${command}\n`);
      return answer;
    },
  };
}

it('behavior: a frozen node goes unnoticed by viem (socket open, no error) while the block source declares it down', async () => {
  const states: string[] = [];
  source = followWithBlockSource(states);
  await until(() => states.includes('up'), 10_000, 'the block source up');
  probe = await startViemProbe({ attempts: 100, delay: 100 });
  expect(await probe.ask('subscribe', 'head')).toEqual({ event: 'head' });

  sys.devnet.pauseChain(CHAIN);
  try {
    await until(() => states.includes('down'), 10_000, 'the block source to declare the node down');
    // Ten of viem's keep-alive intervals later, its socket is still "open" and nothing was reported.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await probe.ask('state', 'state')).toEqual({ event: 'state', readyState: OPEN, errors: 0 });
  } finally {
    sys.devnet.resumeChain(CHAIN);
  }
  await until(() => states.lastIndexOf('up') > states.indexOf('down'), 10_000, 'the block source up again');
  probe.child.kill('SIGKILL');
  probe = undefined;
  await source.close();
  source = undefined;
});

it('behavior: after viem runs out of reconnect attempts, a new viem transport for the same URL still fails; the block source recovers', async () => {
  const states: string[] = [];
  source = followWithBlockSource(states);
  await until(() => states.includes('up'), 10_000, 'the block source up');
  probe = await startViemProbe({ attempts: 2, delay: 100 });
  expect(await probe.ask('request', 'request')).toEqual({ event: 'request', ok: true });

  await sys.devnet.stopChain(CHAIN);
  // Well past viem's two attempts 100 ms apart.
  await new Promise((r) => setTimeout(r, 2_000));
  await sys.devnet.startChain(CHAIN);

  await until(() => states.lastIndexOf('up') > states.indexOf('down'), 20_000, 'the block source up after the restart');
  const after = await probe.ask('request', 'request');
  expect(after).toMatchObject({ event: 'request', ok: false });
  expect(after).toEqual({ event: 'request', ok: false, error: 'WebSocketRequestError', cause: 'SocketClosedError' });
});
