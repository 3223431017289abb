/**
 * The settlement's tracer against a node that answers what no EVM produces: a local HTTP JSON-RPC
 * server plays the node (the reader's real fetch path), answering `debug_traceTransaction` and
 * `trace_transaction` with a call tree deeper than the EVM allows, struct-log lengths near 2^29
 * and 2^256, and answers larger than the reader's bound. Each is refused or clamped: never a
 * RangeError, a runaway allocation or a hang.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeRedirectError } from '@pmm/core';
import { SWAP_SELECTOR } from '@pmm/protocol';
import { startRedirectTarget } from '@pmm/testkit';
import { createChainReader, type ChainReader } from '../src';
import { ImpossibleTrace, MAX_CALL_DEPTH, traceSwapCalls } from '../src/chain/call-trace';

const ROUTER = '0x00000000000000000000000000000000000000f0';
const EXECUTOR = '0x00000000000000000000000000000000000000ee';
const TX = { hash: `0x${'ab'.repeat(32)}`, from: EXECUTOR, to: EXECUTOR };
const SWAP_INPUT = `${SWAP_SELECTOR}${'11'.repeat(64)}`;

/** What the fake node answers next: a JSON result, or a raw body writer. */
let answer: (res: import('node:http').ServerResponse, id: unknown) => void;
let server: Server;
let reader: ChainReader;
const MAX_ANSWER = 1024 * 1024;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      try {
        answer(res, (JSON.parse(body) as { id: unknown }).id);
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  reader = createChainReader(8453, url, { maxAnswerBytes: MAX_ANSWER });
});
afterAll(async () => {
  reader.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const result = (value: unknown) => (res: import('node:http').ServerResponse, id: unknown) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ jsonrpc: '2.0', id, result: value }));
};

/**
 * The JSON of a callTracer tree `levels` deep whose deepest frame calls the router's swap
 * (written as text: JSON.stringify itself recurses, and overflows on such a tree).
 */
function deepTree(levels: number): string {
  const open = '{"type":"CALL","calls":[';
  const leaf = JSON.stringify({ type: 'CALL', from: EXECUTOR, to: ROUTER, input: SWAP_INPUT, output: '0x' });
  return `${open.repeat(levels)}${leaf}${']}'.repeat(levels)}`;
}

const rawResult = (json: string) => (res: import('node:http').ServerResponse, id: unknown) => {
  res.setHeader('content-type', 'application/json');
  res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${json}}`);
};

describe('the tracer against a hostile node', () => {
  it('error: a 12,000-level callTracer tree is refused as impossible, not a stack overflow', async () => {
    answer = rawResult(deepTree(12_000));
    const err = await traceSwapCalls(reader, 'callTracer', TX, ROUTER).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImpossibleTrace);
    expect(String(err)).toContain(`deeper than the EVM's limit (${MAX_CALL_DEPTH})`);
  });

  it('edge: a swap at the EVM depth limit is still found', async () => {
    answer = rawResult(deepTree(MAX_CALL_DEPTH));
    const calls = await traceSwapCalls(reader, 'callTracer', TX, ROUTER);
    expect(calls).toEqual([
      { from: EXECUTOR, input: SWAP_INPUT, output: '0x', depth: MAX_CALL_DEPTH, reverted: false },
    ]);
  });

  it('error: trace_transaction entries with a traceAddress past the depth limit are refused', async () => {
    const deep = Array.from({ length: 12_000 }, () => 0);
    answer = result([
      { type: 'call', action: { callType: 'call', from: EXECUTOR, to: ROUTER, input: SWAP_INPUT }, traceAddress: deep },
    ]);
    await expect(traceSwapCalls(reader, 'parity', TX, ROUTER)).rejects.toBeInstanceOf(ImpossibleTrace);
    answer = result([null]);
    await expect(traceSwapCalls(reader, 'parity', TX, ROUTER)).rejects.toBeInstanceOf(ImpossibleTrace);
  });

  it('edge: struct-log lengths near 2^29 and 2^256 are clamped to the memory the step carries', async () => {
    const memory = [SWAP_INPUT.slice(2, 66), SWAP_INPUT.slice(66, 130), `${SWAP_INPUT.slice(130)}`.padEnd(64, '0')];
    const held = memory.join('').length / 2;
    const word = (n: bigint) => n.toString(16).padStart(64, '0');
    const callStep = (argsLength: bigint) => ({
      op: 'CALL',
      depth: 1,
      memory,
      // CALL's stack, top last: gas, to, value, argsOffset, argsLength, retOffset, retLength.
      stack: [word(0n), word(0n), word(argsLength), word(0n), word(0n), word(BigInt(ROUTER)), word(100000n)],
    });
    for (const length of [2n ** 29n - 1n, 2n ** 256n - 1n]) {
      answer = result({
        failed: false,
        structLogs: [
          callStep(length),
          { op: 'RETURN', depth: 2, memory, stack: [word(2n ** 29n), word(0n)] },
          { op: 'STOP', depth: 1, stack: [word(1n)] },
        ],
      });
      const calls = await traceSwapCalls(reader, 'structLogs', TX, ROUTER);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.input).toBe(`0x${memory.join('')}`);
      expect((calls[0]!.input.length - 2) / 2).toBe(held);
      expect((calls[0]!.output.length - 2) / 2).toBeLessThanOrEqual(held);
    }
  });

  it('error: a struct log deeper than the EVM allows is refused', async () => {
    answer = result({ failed: false, structLogs: [{ op: 'STOP', depth: MAX_CALL_DEPTH + 2, stack: [] }] });
    await expect(traceSwapCalls(reader, 'structLogs', TX, ROUTER)).rejects.toBeInstanceOf(ImpossibleTrace);
  });

  it('error: an answer past the bound is refused, streamed or announced, and not retried', async () => {
    const filler = 'x'.repeat(64 * 1024);
    const sent: string[] = [];
    // Streamed without a length: refused once the bound is passed.
    answer = (res, id) => {
      sent.push('streamed');
      res.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"failed":false,"structLogs":[],"pad":"`);
      for (let i = 0; i < 40; i++) res.write(filler);
      res.end('"}}');
    };
    await expect(traceSwapCalls(reader, 'structLogs', TX, ROUTER)).rejects.toThrow(/exceeds 1048576 bytes/);
    // Announced by Content-Length: refused before reading.
    answer = (res, id) => {
      sent.push('announced');
      const body = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"failed":false,"structLogs":[],"pad":"${'y'.repeat(2 * MAX_ANSWER)}"}}`;
      res.setHeader('content-length', Buffer.byteLength(body));
      res.end(body);
    };
    await expect(traceSwapCalls(reader, 'structLogs', TX, ROUTER)).rejects.toThrow(/exceeds 1048576 bytes/);
    expect(sent).toEqual(['streamed', 'announced']);
  });

  it("security: a node answering a redirect is not followed, on either of the reader's paths, and not retried", async () => {
    // An internal service the node points at: it must never see the reader's requests.
    const internal = await startRedirectTarget();
    let asked = 0;
    try {
      for (const status of [301, 302, 307, 308]) {
        answer = (res) => {
          asked += 1;
          res.writeHead(status, { location: internal.url }).end();
        };
        // The raw path (fetch: the traces) and the ethers provider's (every other call; a block
        // of its own per status: ethers keeps a request's outcome for 250 ms).
        await expect(reader.send('debug_traceTransaction', [TX.hash])).rejects.toBeInstanceOf(NodeRedirectError);
        await expect(reader.blockTime(status)).rejects.toBeInstanceOf(NodeRedirectError);
      }
    } finally {
      await internal.close();
    }
    expect(internal.reached()).toBe(0);
    // Final, as an answer too large is: once per request, never retried.
    expect(asked).toBe(8);
  });
});
