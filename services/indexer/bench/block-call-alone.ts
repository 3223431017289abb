/**
 * The node's part of a block's book, measured apart from the indexer (indexer.bench.ts): the
 * very `aggregate3` calldata the indexer sends for a block, sent again and again at one block
 * over the indexer's own WebSocket transport, nothing else running in the indexer; then the
 * same number of calls doing only what every `quote()` does first, the signature check
 * (`recoverQuoter`: the EIP-712 hash and `ecrecover`); and the gas of the whole call (one
 * `debug_traceCall` with the call tracer's top frame).
 */
import { Interface } from 'ethers';
import { planBlockCalls, type QuoteContext, type TrackedPairs } from '../src/chain/block-quotes';
import { encodeAggregate3 } from '../src/chain/call-codec';
import { openWsTransport } from '../src/chain/ws-transport';

export interface BlockCallAlone {
  /** Calls in the multicall (quote()s and the reserves). */
  calls: number;
  /** Bytes of the aggregate3 calldata (the JSON request is about twice as long: hex). */
  calldataBytes: number;
  /** Bytes of the answer's return data. */
  answerBytes: number;
  /** Round trip of the whole call, ms, sorted. */
  callMs: number[];
  /** Round trip of as many signature checks alone, ms, sorted. */
  signaturesMs: number[];
  gasUsed: bigint;
}

const VERIFIER = new Interface([
  'function recoverQuoter(address tokenIn, address tokenOut, uint256 timestampInMilisec, bytes sig) view returns (address)',
]);
const QUOTE = new Interface([
  'function quote(address tokenIn, uint256 amountIn, address tokenOut, uint256 timestampInMilisec, bytes sig) view returns (uint256)',
]);

export async function measureBlockCallAlone(opts: {
  wsUrl: string;
  multicall3: string;
  ctx: QuoteContext;
  tracked: TrackedPairs;
  gas: number;
  rounds: number;
}): Promise<BlockCallAlone> {
  const ws = await openWsTransport(opts.wsUrl, 60_000, { maxAnswerBytes: 256 * 1024 * 1024, onDropped: () => {} });
  try {
    const head = (await ws.request('eth_getBlockByNumber', ['latest', false], 10_000)) as {
      hash: string;
      timestamp: string;
    };
    const calls = await planBlockCalls(opts.tracked, opts.ctx, BigInt(head.timestamp) * 1000n);
    const data = encodeAggregate3(calls);
    const gas = '0x' + opts.gas.toString(16);
    const at = { blockHash: head.hash };
    const time = async (calldata: string) => {
      const out: number[] = [];
      let answer = '';
      for (let i = 0; i < opts.rounds; i++) {
        const started = performance.now();
        answer = (await ws.request('eth_call', [{ to: opts.multicall3, data: calldata, gas }, at], 60_000)) as string;
        out.push(performance.now() - started);
      }
      return { sorted: out.sort((a, b) => a - b), answer };
    };
    const whole = await time(data);
    const checks = calls.slice(1).map((c) => {
      const [tokenIn, , tokenOut, timestamp, sig] = QUOTE.decodeFunctionData('quote', c.data);
      return {
        target: opts.ctx.verifier,
        data: VERIFIER.encodeFunctionData('recoverQuoter', [tokenIn, tokenOut, timestamp, sig]),
      };
    });
    const signatures = await time(encodeAggregate3(checks));
    const trace = (await ws.request(
      'debug_traceCall',
      [{ to: opts.multicall3, data, gas }, at, { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } }],
      60_000,
    )) as { gasUsed: string };
    return {
      calls: calls.length,
      calldataBytes: (data.length - 2) / 2,
      answerBytes: (whole.answer.length - 2) / 2,
      callMs: whole.sorted,
      signaturesMs: signatures.sorted,
      gasUsed: BigInt(trace.gasUsed),
    };
  } finally {
    ws.close();
  }
}
