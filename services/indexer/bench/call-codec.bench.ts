/**
 * `npm run bench call-codec`: the ABI work of one block's call (the per-block hot path, see
 * src/chain/block-quotes.ts), done by ethers' `Interface` and by the indexer's hand-written
 * codec (src/chain/call-codec.ts), for 1, 10 and 50 pairs with the default ladder (12 points
 * per side): encoding `getReserveBalances` plus every `quote()` into one `aggregate3`, and
 * decoding the `aggregate3` answer into the reserves and every quoted amount.
 *
 * Prints CPU µs per block (process.cpuUsage, less sensitive to the other engineers' load than
 * wall time) as the median of ROUNDS rounds with the min–max spread, and the ratio
 * ethers / ours. No node is needed: the answer is encoded once by ethers and decoded by both.
 * The choice this measures is written in docs/decisions/0060-abi-codecs.md.
 */
import { randomBytes } from 'node:crypto';
import { Interface, getAddress } from 'ethers';
import { Multicall3Artifact, PmmHelperArtifact, PmmRouterArtifact } from '@pmm/contracts';
import {
  decodeAggregate3,
  decodeUint256Array,
  decodeUintResult,
  encodeAggregate3,
  reserveBalancesCalldata,
  type Call,
} from '../src/chain/call-codec';
import { quoteCalldataBuilder } from '@pmm/protocol';

const PAIR_COUNTS = [1, 10, 50];
const POINTS_PER_SIDE = 12;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
/** CPU time per round: far above cpuUsage's resolution. */
const ROUND_CPU_US = 100_000;

const router = new Interface(PmmRouterArtifact.abi);
const helper = new Interface(PmmHelperArtifact.abi);
const multicall = new Interface(Multicall3Artifact.abi);

const address = () => getAddress('0x' + randomBytes(20).toString('hex'));
const amount = (i: number) => 10n ** 15n * BigInt(i + 1);

interface Block {
  routerAddress: string;
  helperAddress: string;
  quote: string;
  bases: string[];
  signature: string;
  timestamp: bigint;
  /** The node's answer to the block's aggregate3 (ethers-encoded). */
  answer: string;
}

function blockOf(pairs: number): Block {
  const quote = address();
  const bases = Array.from({ length: pairs }, address);
  const answers: [boolean, string][] = [
    [true, helper.encodeFunctionResult('getReserveBalances', [[quote, ...bases].map((_, i) => amount(i))])],
  ];
  for (let i = 0; i < pairs * 2 * POINTS_PER_SIDE; i++) {
    // Past the reserves a quote reverts: a realistic share of failures.
    answers.push(i % 12 === 11 ? [false, '0x'] : [true, router.encodeFunctionResult('quote', [amount(i)])]);
  }
  return {
    routerAddress: address(),
    helperAddress: address(),
    quote,
    bases,
    signature: '0x' + randomBytes(65).toString('hex'),
    timestamp: 1_700_000_000_000n,
    answer: multicall.encodeFunctionResult('aggregate3', [answers]),
  };
}

/** One block with ethers' Interface: returns something derived from every value (no dead code). */
function withEthers(b: Block): bigint {
  const calls: [string, boolean, string][] = [
    [b.helperAddress, true, helper.encodeFunctionData('getReserveBalances', [[b.quote, ...b.bases]])],
  ];
  for (const base of b.bases) {
    for (const [tokenIn, tokenOut] of [
      [b.quote, base],
      [base, b.quote],
    ] as const) {
      for (let i = 0; i < POINTS_PER_SIDE; i++) {
        calls.push([
          b.routerAddress,
          true,
          router.encodeFunctionData('quote', [tokenIn, amount(i), tokenOut, b.timestamp, b.signature]),
        ]);
      }
    }
  }
  const data = multicall.encodeFunctionData('aggregate3', [calls]);
  const [results] = multicall.decodeFunctionResult('aggregate3', b.answer) as unknown as [[boolean, string][]];
  const [reserves] = helper.decodeFunctionResult('getReserveBalances', results[0]![1]) as unknown as [bigint[]];
  let sum = BigInt(data.length) + reserves[0]!;
  for (let i = 1; i < results.length; i++) {
    const [success, out] = results[i]!;
    if (success) sum += router.decodeFunctionResult('quote', out)[0] as bigint;
  }
  return sum;
}

/** The same block with the hand-written codec. */
function withOurs(b: Block): bigint {
  const calls: Call[] = [{ target: b.helperAddress, data: reserveBalancesCalldata([b.quote, ...b.bases]) }];
  for (const base of b.bases) {
    for (const [tokenIn, tokenOut] of [
      [b.quote, base],
      [base, b.quote],
    ] as const) {
      const calldata = quoteCalldataBuilder({
        tokenIn,
        tokenOut,
        timestampInMilisec: b.timestamp,
        signature: b.signature,
      });
      for (let i = 0; i < POINTS_PER_SIDE; i++) calls.push({ target: b.routerAddress, data: calldata(amount(i)) });
    }
  }
  const data = encodeAggregate3(calls);
  const results = decodeAggregate3(b.answer, calls.length);
  const reserves = decodeUint256Array(results[0]!.data);
  let sum = BigInt(data.length) + reserves[0]!;
  for (let i = 1; i < results.length; i++) sum += decodeUintResult(results[i]!) ?? 0n;
  return sum;
}

/** CPU µs per block of `fn`: median and spread over ROUNDS rounds. */
function measure(fn: (b: Block) => bigint, b: Block): { median: number; min: number; max: number } {
  for (let i = 0; i < 3; i++) fn(b); // warm-up (JIT)
  const once = process.cpuUsage();
  fn(b);
  const onceUs = process.cpuUsage(once);
  const blocks = Math.max(1, Math.ceil(ROUND_CPU_US / (onceUs.user + onceUs.system)));
  const perBlock: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const before = process.cpuUsage();
    for (let i = 0; i < blocks; i++) fn(b);
    const used = process.cpuUsage(before);
    perBlock.push((used.user + used.system) / blocks);
  }
  perBlock.sort((x, y) => x - y);
  return { median: perBlock[Math.floor(perBlock.length / 2)]!, min: perBlock[0]!, max: perBlock[perBlock.length - 1]! };
}

function main(): void {
  const fmt = (m: { median: number; min: number; max: number }) =>
    `${m.median.toFixed(0)} µs (${m.min.toFixed(0)}–${m.max.toFixed(0)})`;
  console.log(`ABI work of one block's call, CPU µs per block, median of ${ROUNDS} rounds (min–max)`);
  for (const pairs of PAIR_COUNTS) {
    const b = blockOf(pairs);
    if (withEthers(b) !== withOurs(b)) throw new Error('the two codecs disagree on the block');
    const ethers = measure(withEthers, b);
    const ours = measure(withOurs, b);
    console.log(
      `${String(pairs).padStart(2)} pairs (${1 + pairs * 2 * POINTS_PER_SIDE} calls): ethers Interface ${fmt(ethers)}, ` +
        `hand-written ${fmt(ours)}, ratio ethers/ours ${(ethers.median / ours.median).toFixed(1)}`,
    );
  }
}

main();
