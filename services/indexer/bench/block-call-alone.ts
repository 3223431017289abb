/**
 * The node's part of a block's book, measured apart from the indexer (indexer.bench.ts): the
 * very `aggregate3` calldata the indexer sends for a block, sent again and again at one block
 * over the indexer's own WebSocket transport, nothing else running in the indexer; then the
 * same number of calls doing only what every `quote()` does first, the signature check
 * (`recoverQuoter`: the EIP-712 hash and `ecrecover`); then as many bare `ecrecover`s, the
 * precompile and nothing else, the floor no router that checks a signature per `quote()` can go
 * under on this node; and the gas of the whole call (one `debug_traceCall` with the call
 * tracer's top frame).
 */
import { Interface, Wallet, concat, keccak256, toBeHex, toUtf8Bytes, zeroPadValue } from 'ethers';
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
  /** Round trip of as many bare ecrecover precompile calls, ms, sorted. */
  ecrecoverMs: number[];
  gasUsed: bigint;
}

const VERIFIER = new Interface([
  'function recoverQuoter(address tokenIn, address tokenOut, uint256 timestampInMilisec, bytes sig) view returns (address)',
]);
/**
 * A contract that exists only inside one eth_call (a state override, which geth, reth and anvil
 * take): it copies a 128-byte ecrecover input (digest, v, r, s) from its calldata and calls the
 * precompile at 0x01 with it as many times as the next calldata word says, then returns the
 * last recovered address. Hand-assembled, so that nothing but the loop runs around the
 * precompile (about a dozen cheap opcodes per round):
 *
 *   0x00 PUSH1 0x80 PUSH1 0 PUSH1 0 CALLDATACOPY          memory[0..128) = the input
 *   0x07 PUSH1 0x80 CALLDATALOAD                          n
 *   0x0a JUMPDEST DUP1 ISZERO PUSH1 0x24 JUMPI            while (n != 0) {
 *   0x10 PUSH1 0x20 PUSH1 0x80 PUSH1 0x80 PUSH1 0
 *        PUSH1 1 GAS STATICCALL POP                         ecrecover(memory[0..128)) -> memory[128..160)
 *   0x1d PUSH1 1 SWAP1 SUB PUSH1 0x0a JUMP                  n -= 1 }
 *   0x24 JUMPDEST PUSH1 0x20 PUSH1 0x80 RETURN            return memory[128..160)
 */
const ECRECOVER_LOOP = '0x608060006000376080355b8015602457602060806080600060015afa5060019003600a565b60206080f3';
/** Where the loop is placed for the call: an address no chain uses. */
const ECRECOVER_LOOP_AT = '0x00000000000000000000000000000000ec7ec0de';

/** The loop's calldata: a valid signature of a digest (a real recovery, not an early refusal), and n. */
function ecrecoverLoopInput(rounds: number): { data: string; signer: string } {
  const wallet = Wallet.createRandom();
  const digest = keccak256(toUtf8Bytes('ecrecover floor'));
  const sig = wallet.signingKey.sign(digest);
  const word = (n: number) => zeroPadValue(toBeHex(n), 32);
  return { data: concat([digest, word(sig.v), sig.r, sig.s, word(rounds)]), signer: wallet.address };
}

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
    const time = async (calldata: string, to = opts.multicall3, overrides?: object) => {
      const out: number[] = [];
      let answer = '';
      const params = [{ to, data: calldata, gas }, at, ...(overrides ? [overrides] : [])];
      for (let i = 0; i < opts.rounds; i++) {
        const started = performance.now();
        answer = (await ws.request('eth_call', params, 60_000)) as string;
        out.push(performance.now() - started);
      }
      return { sorted: out.sort((a, b) => a - b), answer };
    };
    const whole = await time(data);
    // The quote() calls only: the reserves' call goes first, the pairs' feeds (when they have references) last.
    const checks = calls
      .slice(1)
      .filter((c) => c.target === opts.ctx.router)
      .map((c) => {
        const [tokenIn, , tokenOut, timestamp, sig] = QUOTE.decodeFunctionData('quote', c.data);
        return {
          target: opts.ctx.verifier,
          data: VERIFIER.encodeFunctionData('recoverQuoter', [tokenIn, tokenOut, timestamp, sig]),
        };
      });
    const signatures = await time(encodeAggregate3(checks));
    const loop = ecrecoverLoopInput(checks.length);
    const ecrecovers = await time(loop.data, ECRECOVER_LOOP_AT, { [ECRECOVER_LOOP_AT]: { code: ECRECOVER_LOOP } });
    // A loop that recovered nothing would time only its own opcodes.
    if (ecrecovers.answer.toLowerCase() !== zeroPadValue(loop.signer, 32).toLowerCase()) {
      throw new Error(`the ecrecover loop answered ${ecrecovers.answer}, not ${loop.signer}`);
    }
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
      ecrecoverMs: ecrecovers.sorted,
      gasUsed: BigInt(trace.gasUsed),
    };
  } finally {
    ws.close();
  }
}
