/**
 * scanSwaps over a scripted chain (pure logic; the real chain, its tracer and the executor are the
 * devnet test's): which transactions are candidates, direct swaps' figures, the bounded and halved
 * log windows, the order of the result, what is listed apart without a tracer; and the three
 * tracers' shapes (callTracer, trace_transaction) as geth and erigon document them.
 */
import { encodeSwapCalldata, encodeVerificationData } from '@pmm/protocol';
import type { ChainReader, ChainTransaction, TransferLog } from '../src';
import { scanSwaps } from '../src';
import {
  TracerChoice,
  TracerUnsupported,
  swapCallsFromCallTracer,
  swapCallsFromParity,
  traceSwapCalls,
} from '../src/chain/call-trace';

const ROUTER = '0x00000000000000000000000000000000000000f0';
const USER = '0x00000000000000000000000000000000000000aa';
const USDC = '0x00000000000000000000000000000000000000c1';
const WETH = '0x00000000000000000000000000000000000000e1';
const EXECUTOR = '0x00000000000000000000000000000000000000ee';
const SIG = new Uint8Array(65).fill(7);

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const vd = encodeVerificationData(30n, 0n, USER, SIG);
const swapInput = encodeSwapCalldata({
  tokenIn: USDC,
  amountIn: 100n,
  tokenOut: WETH,
  minAmountOut: 1n,
  quoteTimestamp: 1_790_000_000n,
  verificationData: vd,
});

function chain(opts: { maxSpan?: number; calls?: [number, number][] }) {
  const logs: TransferLog[] = [];
  const txs = new Map<string, ChainTransaction>();
  const log = (n: number, block: number, index: number, token: string, from: string, to: string, value: bigint) =>
    logs.push({ txHash: hash(n), blockNumber: block, logIndex: index, token, from, to, value });
  // tx 1 (block 5): a swap, paid in two transfers; tx 2 (block 3): a swap; tx 3: a reserve top-up
  // (a plain transfer to the router); tx 4: a swap-shaped call to another contract.
  log(1, 5, 2, USDC, USER, ROUTER, 60n);
  log(1, 5, 3, USDC, USER, ROUTER, 40n);
  log(1, 5, 4, WETH, ROUTER, USER, 9n);
  log(2, 3, 0, USDC, USER, ROUTER, 100n);
  log(2, 3, 1, WETH, ROUTER, USER, 10n);
  log(3, 4, 0, USDC, USER, ROUTER, 1_000n);
  log(4, 6, 0, USDC, USER, ROUTER, 5n);
  // tx 5: an executor's transaction (both directions, not a call of the router).
  log(5, 7, 0, USDC, EXECUTOR, ROUTER, 7n);
  log(5, 7, 1, WETH, ROUTER, EXECUTOR, 1n);
  txs.set(hash(1), { hash: hash(1), blockNumber: 5, from: USER, to: ROUTER, input: swapInput });
  txs.set(hash(2), { hash: hash(2), blockNumber: 3, from: USER, to: ROUTER, input: swapInput });
  txs.set(hash(3), { hash: hash(3), blockNumber: 4, from: USER, to: USDC, input: '0xa9059cbb' });
  txs.set(hash(4), { hash: hash(4), blockNumber: 6, from: USER, to: WETH, input: swapInput });
  txs.set(hash(5), { hash: hash(5), blockNumber: 7, from: USER, to: EXECUTOR, input: '0x12345678' });
  const reader: ChainReader = {
    chainId: 8453,
    latestBlock: async () => 10,
    blockTime: async (n) => 1_790_000_000 + n,
    async transfers(address, side, from, to) {
      opts.calls?.push([from, to]);
      if (opts.maxSpan !== undefined && to - from + 1 > opts.maxSpan)
        throw new Error('query returned more than 10000 results');
      return logs.filter(
        (l) => l.blockNumber >= from && l.blockNumber <= to && (side === 'from' ? l.from : l.to) === address,
      );
    },
    transaction: async (h) => txs.get(h),
    receiptStatus: async () => 1,
    quoteToken: async () => USDC,
    token: async () => ({ symbol: 'X', decimals: 0 }),
    send: async (method) => {
      throw new Error(`${method}: not scripted`);
    },
    calls: new Map(),
    close: () => undefined,
  };
  return reader;
}

describe('scanSwaps', () => {
  it('behavior: direct swap calls to the router are swaps, with the amounts the logs moved, in block order', async () => {
    const progress: number[] = [];
    const { swaps, unexamined, transactions, traced } = await scanSwaps({
      reader: chain({}),
      router: ROUTER.toUpperCase().replace('0X', '0x'),
      fromBlock: 0,
      toBlock: 10,
      span: 4,
      tracer: new TracerChoice('none'),
      onProgress: (done) => progress.push(done),
    });
    expect(swaps.map((s) => [s.txHash, s.blockNumber, s.blockTime, s.amountIn, s.amountOut])).toEqual([
      [hash(2), 3, 1_790_000_003, 100n, 10n],
      [hash(1), 5, 1_790_000_005, 100n, 9n],
    ]);
    expect(swaps[0]).toMatchObject({
      via: 'direct',
      user: USER,
      txFrom: USER,
      tokenIn: USDC,
      tokenOut: WETH,
      amountIn: 100n,
      minAmountOut: 1n,
      quoteTimestamp: 1_790_000_000,
      verification: { fee: 30n, originRate: 0n, userAddress: USER },
    });
    // The top-up (tx 3) and the one-way transfer (tx 4) are not read; the executor's is listed apart.
    expect(transactions).toBe(3);
    expect(traced).toBe(0);
    expect(unexamined).toEqual([
      {
        chainId: 8453,
        txHash: hash(5),
        blockNumber: 7,
        blockTime: 1_790_000_007,
        logIndex: 0,
        reason:
          'needs a node with debug_traceTransaction (callTracer or the default struct logger) or trace_transaction',
      },
    ]);
    expect(progress).toEqual([3, 7, 10]);
  });

  it('behavior: a node that refuses a window is asked for half of it until it answers', async () => {
    const calls: [number, number][] = [];
    const { swaps } = await scanSwaps({
      reader: chain({ maxSpan: 2, calls }),
      router: ROUTER,
      fromBlock: 0,
      toBlock: 10,
      span: 8,
      tracer: new TracerChoice('none'),
    });
    expect(swaps).toHaveLength(2);
    expect(Math.max(...calls.map(([a, b]) => b - a + 1))).toBe(8);
    // Refused once, the window stays at the accepted size: 2 requests (to, from) per refusal.
    expect(calls.filter(([a, b]) => b - a + 1 > 2)).toHaveLength(4);
    const answered = calls.filter(([a, b]) => b - a + 1 <= 2);
    // Every block was covered by an answered window.
    for (let b = 0; b <= 10; b++) expect(answered.some(([x, y]) => x <= b && b <= y)).toBe(true);
  });
});

describe('tracer shapes', () => {
  const OUT = `0x${123n.toString(16).padStart(64, '0')}`;
  it('behavior: callTracer: every CALL of swap on the router, any depth, in order; under a reverted frame it is reverted', () => {
    const root = {
      type: 'CALL',
      from: USER,
      to: EXECUTOR,
      input: '0x12345678',
      calls: [
        { type: 'CALL', from: EXECUTOR, to: USDC, input: '0x23b872dd' },
        { type: 'CALL', from: EXECUTOR, to: ROUTER.toUpperCase().replace('0X', '0x'), input: swapInput, output: OUT },
        {
          type: 'CALL',
          from: EXECUTOR,
          to: EXECUTOR,
          input: '0xabcdef01',
          error: 'execution reverted',
          calls: [{ type: 'CALL', from: EXECUTOR, to: ROUTER, input: swapInput, output: OUT }],
        },
        { type: 'DELEGATECALL', from: EXECUTOR, to: ROUTER, input: swapInput },
        { type: 'CALL', from: EXECUTOR, to: ROUTER, input: swapInput, error: 'execution reverted' },
      ],
    };
    expect(swapCallsFromCallTracer(root, ROUTER)).toEqual([
      { from: EXECUTOR, input: swapInput, output: OUT, depth: 1, reverted: false },
      { from: EXECUTOR, input: swapInput, output: OUT, depth: 2, reverted: true },
      // Its own failure: the ledger reads its reason from it (a frame only undone by its caller has none).
      { from: EXECUTOR, input: swapInput, output: '0x', depth: 1, reverted: true, error: 'execution reverted' },
    ]);
  });

  it('behavior: trace_transaction: the same from the flat list, a reverted ancestor found by traceAddress', () => {
    const call = (traceAddress: number[], to: string, input: string, error?: string) => ({
      type: 'call',
      action: { callType: 'call', from: EXECUTOR, to, input },
      result: error ? null : { output: OUT },
      ...(error ? { error } : {}),
      traceAddress,
    });
    const traces = [
      call([], EXECUTOR, '0x12345678'),
      call([0], ROUTER, swapInput),
      call([1], EXECUTOR, '0xabcdef01', 'Reverted'),
      call([1, 0], ROUTER, swapInput),
      call([2], ROUTER, swapInput),
    ];
    expect(swapCallsFromParity(traces, ROUTER).map((c) => [c.depth, c.reverted, c.output])).toEqual([
      [1, false, OUT],
      [2, true, OUT],
      [1, false, OUT],
    ]);
  });

  it('error: struct logs without a single step (a node that did not record them) are no tracer, not "no swap"', async () => {
    const reader = {
      ...chain({}),
      send: async () => ({ failed: false, gas: 90_000, returnValue: '', structLogs: [] }),
    };
    const tx = { hash: hash(5), from: USER, to: EXECUTOR };
    await expect(traceSwapCalls(reader, 'structLogs', tx, ROUTER)).rejects.toThrow(TracerUnsupported);
    const choice = new TracerChoice('structLogs');
    expect(await choice.swapCalls(reader, tx, ROUTER)).toBeUndefined();
    expect(choice.refusals).toEqual(['structLogs: debug_traceTransaction recorded no steps']);
  });
});
