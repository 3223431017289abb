/**
 * The devnet's market: a seeded random walk of each pair's true market, one step per block; the
 * maker's curve follows it and the pair's reference feed publishes it under a deviation threshold
 * and a heartbeat, on a real anvil node; the drills' faults; off by default.
 */
import { MockV3AggregatorArtifact, PmmRouterArtifact } from '@pmm/contracts';
import { feedAnswerFromMidX18 } from '@pmm/protocol';
import { chainClients, until } from '@pmm/testkit';
import { parseEventLogs, type Abi, type Address } from 'viem';
import {
  DEFAULT_FEED_PUBLICATION,
  feedPublishes,
  marketFromEnv,
  midWalk,
  REFERENCE_FEED_DECIMALS,
  seedPlan,
  skewedMid,
  startDevnet,
  type ChainStack,
  type Devnet,
} from '../src';

const abi = PmmRouterArtifact.abi as Abi;
const feedAbi = MockV3AggregatorArtifact.abi as Abi;
const take = (walk: Generator<bigint>, n: number): bigint[] => Array.from({ length: n }, () => walk.next().value);

async function waitBlocks(chain: ChainStack, n: number): Promise<void> {
  const { publicClient } = chainClients(chain);
  const from = await publicClient.getBlockNumber();
  while ((await publicClient.getBlockNumber()) < from + BigInt(n)) await new Promise((r) => setTimeout(r, 50));
}

interface Round {
  roundId: bigint;
  answer: bigint;
  updatedAt: bigint;
}

async function latestRound(chain: ChainStack, base: string, blockNumber?: bigint): Promise<Round> {
  const { publicClient } = chainClients(chain);
  const [roundId, answer, , updatedAt] = (await publicClient.readContract({
    address: chain.references[base]!.feed as Address,
    abi: feedAbi,
    functionName: 'latestRoundData',
    blockNumber,
  })) as [bigint, bigint, bigint, bigint, bigint];
  return { roundId, answer, updatedAt };
}

/** Every round the pair's feed published, oldest first (read block by block). */
async function feedRounds(chain: ChainStack, base: string): Promise<Round[]> {
  const { publicClient } = chainClients(chain);
  const to = await publicClient.getBlockNumber();
  const rounds: Round[] = [];
  for (let b = 1n; b <= to; b++) {
    const round = await latestRound(chain, base, b).catch(() => undefined); // before the feed's deployment
    if (round && round.roundId !== rounds.at(-1)?.roundId) rounds.push(round);
  }
  return rounds;
}

async function curveMid(chain: ChainStack, base: string): Promise<bigint> {
  const { publicClient } = chainClients(chain);
  const curve = (await publicClient.readContract({
    address: chain.contracts.router as Address,
    abi,
    functionName: 'getCurve',
    args: [base as Address],
  })) as { midPriceX18: bigint };
  return curve.midPriceX18;
}

describe('midWalk', () => {
  const start = 3000n * 10n ** 18n;

  it('behavior: the same seed gives the same mids; another seed or another pair, others', () => {
    const a = take(midWalk(start, { volatilityBps: 10, seed: 7 }, 0), 50);
    expect(take(midWalk(start, { volatilityBps: 10, seed: 7 }, 0), 50)).toEqual(a);
    expect(take(midWalk(start, { volatilityBps: 10, seed: 8 }, 0), 50)).not.toEqual(a);
    expect(take(midWalk(start, { volatilityBps: 10, seed: 7 }, 1), 50)).not.toEqual(a);
  });

  it('behavior: steps have the volatility asked for (standard deviation of relative moves)', () => {
    const mids = [start, ...take(midWalk(start, { volatilityBps: 20, seed: 3 }, 0), 4000)];
    const moves = mids.slice(1).map((m, i) => Number(m - mids[i]!) / Number(mids[i]!));
    const mean = moves.reduce((a, b) => a + b, 0) / moves.length;
    const sd = Math.sqrt(moves.reduce((a, b) => a + (b - mean) ** 2, 0) / (moves.length - 1));
    // 4000 draws: the sample deviation is within a few percent of 20 bps.
    expect(sd * 10_000).toBeGreaterThan(19);
    expect(sd * 10_000).toBeLessThan(21);
    expect(mids.every((m) => m > 0n)).toBe(true);
  });

  it('error: a volatility out of range or a fractional seed is refused with its name', () => {
    expect(() => midWalk(start, { volatilityBps: 0, seed: 1 }, 0).next()).toThrow(/volatility/);
    expect(() => midWalk(start, { volatilityBps: 5, seed: 1.5 }, 0).next()).toThrow(/seed/);
  });
});

describe('feedPublishes', () => {
  const rules = { deviationBps: 15, heartbeatSeconds: 60 };
  const last = { answer: 3000_00000000n, at: 1000 };

  it('behavior: a move of the threshold or more publishes, a smaller one waits for the heartbeat', () => {
    expect(feedPublishes(last, 3004_50000000n, 1001, rules)).toBe(true); // +15 bps
    expect(feedPublishes(last, 2995_50000000n, 1001, rules)).toBe(true); // −15 bps
    expect(feedPublishes(last, 3004_49999999n, 1001, rules)).toBe(false);
    expect(feedPublishes(last, 3004_49999999n, 1059, rules)).toBe(false);
    expect(feedPublishes(last, last.answer, 1060, rules)).toBe(true); // the heartbeat, even unchanged
  });
});

describe('skewedMid', () => {
  const mid = 3000n * 10n ** 18n;

  it('behavior: by bps either way, or by a factor such as 10¹² (the decimals class of error)', () => {
    expect(skewedMid(mid, undefined)).toBe(mid);
    expect(skewedMid(mid, { bps: 100 })).toBe(3030n * 10n ** 18n);
    expect(skewedMid(mid, { bps: -100 })).toBe(2970n * 10n ** 18n);
    expect(skewedMid(mid, { times: 10n ** 12n })).toBe(mid * 10n ** 12n);
    expect(skewedMid(mid, { dividedBy: 10n ** 12n })).toBe(mid / 10n ** 12n);
  });

  it('error: a skew that would make the mid zero or negative is refused', () => {
    expect(() => skewedMid(mid, { bps: -10_000 })).toThrow(/skew/);
    expect(() => skewedMid(mid, { times: 0n })).toThrow(/factor/);
  });
});

describe('marketFromEnv', () => {
  const defaults = { volatilityBps: 5, seed: 1 };

  it('behavior: on by default with the defaults; off, or settings over the defaults', () => {
    expect(marketFromEnv({}, defaults)).toEqual({ ...defaults, feed: DEFAULT_FEED_PUBLICATION });
    expect(marketFromEnv({ DEVNET_MARKET: 'off' }, defaults)).toBeUndefined();
    expect(
      marketFromEnv(
        {
          DEVNET_MARKET_VOLATILITY_BPS: '2.5',
          DEVNET_MARKET_SEED: '42',
          DEVNET_FEED_DEVIATION_BPS: '50',
          DEVNET_FEED_HEARTBEAT_SECONDS: '3600',
        },
        defaults,
      ),
    ).toEqual({ volatilityBps: 2.5, seed: 42, feed: { deviationBps: 50, heartbeatSeconds: 3600 } });
  });

  it('error: a bad setting names itself', () => {
    expect(() => marketFromEnv({ DEVNET_MARKET: 'yes' }, defaults)).toThrow(/DEVNET_MARKET must be on or off/);
    expect(() => marketFromEnv({ DEVNET_MARKET_VOLATILITY_BPS: 'x' }, defaults)).toThrow(
      /DEVNET_MARKET_VOLATILITY_BPS/,
    );
    expect(() => marketFromEnv({ DEVNET_FEED_HEARTBEAT_SECONDS: '0' }, defaults)).toThrow(/heartbeat/);
  });
});

describe('a devnet with a moving market', () => {
  let devnet: Devnet | undefined;
  afterEach(async () => devnet?.stop());

  it('behavior: each pair takes the seeded walk on chain, one setCurve step per new block', async () => {
    const market = { volatilityBps: 10, seed: 11 };
    devnet = await startDevnet({ chains: [8453], blockIntervalMs: 200, market });
    const chain = devnet.stack.chains['8453']!;
    const { publicClient } = chainClients(chain);
    type CurveSet = { blockNumber: bigint; args: { base: string; midPriceX18: bigint } };
    const curveSetsOf = (sets: CurveSet[], token: { address: string }) =>
      sets.filter((l) => l.args.base.toLowerCase() === token.address.toLowerCase());
    // Until every pair has taken three steps or more (at 200 ms blocks, about a second; on a
    // loaded machine, eight blocks once gave a pair only two).
    const curveSets = await until(
      async () => {
        const raw = await publicClient.getLogs({ address: chain.contracts.router as Address, fromBlock: 0n });
        const sets = parseEventLogs({ abi, logs: raw, eventName: 'CurveSet' }) as unknown as CurveSet[];
        return chain.baseTokens.every((token) => curveSetsOf(sets, token).length >= 4) && sets;
      },
      30_000,
      'three steps of every pair',
      200,
    );
    const plan = seedPlan(8453);
    for (const [i, token] of chain.baseTokens.entries()) {
      const mine = curveSetsOf(curveSets, token);
      // The first is the seed's; every later one is the next step of the pair's walk.
      expect(mine[0]!.args.midPriceX18).toBe(plan.baseTokens[i]!.curve.midPriceX18);
      const steps = mine.slice(1);
      // A loaded machine can miss a block now and then; the walk itself must not skip a step.
      expect(steps.map((l) => l.args.midPriceX18)).toEqual(
        take(midWalk(plan.baseTokens[i]!.curve.midPriceX18, market, i), steps.length),
      );
      // The walk follows blocks, it does not run ahead of them: one step is sent per new head, so
      // the k-th step lands k blocks or more after the seed's. (Two can share a block: a step sent
      // late for one block's mining lands in the next, beside that block's own; seen under load.)
      const seedBlock = mine[0]!.blockNumber;
      steps.forEach((l, k) => expect(l.blockNumber).toBeGreaterThanOrEqual(seedBlock + BigInt(k + 1)));
    }
  }, 60_000);

  it('behavior: each feed publishes the walk under its threshold: every answer a step of the market, each one past the threshold', async () => {
    const market = { volatilityBps: 10, seed: 5, feed: { deviationBps: 15, heartbeatSeconds: 3600 } };
    devnet = await startDevnet({ chains: [56], blockIntervalMs: 200, market });
    const chain = devnet.stack.chains['56']!;
    await waitBlocks(chain, 20);
    const plan = seedPlan(56);
    for (const [i, token] of chain.baseTokens.entries()) {
      const scale = {
        feedDecimals: REFERENCE_FEED_DECIMALS,
        baseDecimals: token.decimals,
        quoteDecimals: chain.quoteToken.decimals,
      };
      const walk = midWalk(plan.baseTokens[i]!.curve.midPriceX18, market, i);
      const answers = take(walk, 40).map((mid) => feedAnswerFromMidX18(mid, scale));
      const rounds = await feedRounds(chain, token.address);
      expect(rounds[0]!.answer).toBe(plan.baseTokens[i]!.referenceAnswer);
      const published = rounds.slice(1);
      // 20 blocks of 10 bps moves cross a 15 bps threshold a few times.
      expect(published.length).toBeGreaterThanOrEqual(1);
      let previous = rounds[0]!.answer;
      let from = 0;
      for (const round of published) {
        const at = answers.indexOf(round.answer, from);
        expect(at).toBeGreaterThanOrEqual(from); // a later step of the walk, in order
        from = at + 1;
        const moved = round.answer > previous ? round.answer - previous : previous - round.answer;
        expect(moved * 10_000n).toBeGreaterThanOrEqual(previous * 15n); // no heartbeat in an hour
        previous = round.answer;
      }
    }
  }, 60_000);

  it('behavior: the drills: a stopped engine freezes one curve while the market walks, a skew by ×10¹² lands, a stopped feed ages', async () => {
    const market = { volatilityBps: 10, seed: 9, feed: { deviationBps: 10_000, heartbeatSeconds: 1 } };
    devnet = await startDevnet({ chains: [8453], blockIntervalMs: 250, market });
    const chain = devnet.stack.chains['8453']!;
    const controls = devnet.market(8453);
    const [weth, wbtc] = chain.baseTokens.map((t) => t.address);
    await waitBlocks(chain, 2);

    controls.stopEngine(weth!);
    await waitBlocks(chain, 2); // a step already sent lands
    const frozen = await curveMid(chain, weth!);
    const otherBefore = await curveMid(chain, wbtc!);
    const marketBefore = controls.state(weth!).marketMidX18;
    await waitBlocks(chain, 4);
    expect(await curveMid(chain, weth!)).toBe(frozen);
    expect(controls.state(weth!).marketMidX18).not.toBe(marketBefore);
    expect(await curveMid(chain, wbtc!)).not.toBe(otherBefore);

    controls.startEngine(weth!);
    controls.skewCurve(weth!, { times: 10n ** 12n });
    await waitBlocks(chain, 3);
    // The engine sets the curve a moment after the market steps: read between the two, the state
    // holds the new market beside the last curve (seen at a load average of 10). Until they agree.
    await until(
      () => {
        const state = controls.state(weth!);
        return state.curveMidX18 === skewedMid(state.marketMidX18, { times: 10n ** 12n });
      },
      10_000,
      'the curve the skewed market',
      20,
    );
    const skewed = await curveMid(chain, weth!);
    expect(skewed).toBeGreaterThan(frozen * 10n ** 11n);

    // A heartbeat of a second: a running feed publishes about every second.
    controls.stopFeed(wbtc!);
    await waitBlocks(chain, 2);
    const roundStopped = (await latestRound(chain, wbtc!)).roundId;
    const wethRound = (await latestRound(chain, weth!)).roundId;
    await waitBlocks(chain, 12); // three seconds
    expect((await latestRound(chain, wbtc!)).roundId).toBe(roundStopped);
    expect((await latestRound(chain, weth!)).roundId).toBeGreaterThan(wethRound);
    controls.startFeed(wbtc!);
    await waitBlocks(chain, 3);
    expect((await latestRound(chain, wbtc!)).roundId).toBeGreaterThan(roundStopped);
  }, 60_000);

  it('behavior: without market settings the curves stay as seeded', async () => {
    devnet = await startDevnet({ chains: [8453], blockIntervalMs: 200 });
    const chain = devnet.stack.chains['8453']!;
    const { publicClient } = chainClients(chain);
    const from = await publicClient.getBlockNumber();
    while ((await publicClient.getBlockNumber()) < from + 4n) await new Promise((r) => setTimeout(r, 100));
    const raw = await publicClient.getLogs({ address: chain.contracts.router as Address, fromBlock: 0n });
    expect(parseEventLogs({ abi, logs: raw, eventName: 'CurveSet' })).toHaveLength(chain.baseTokens.length);
  }, 60_000);

  it('error: a moving market on automine is refused (each step would mine a block of its own)', async () => {
    await expect(
      startDevnet({ chains: [8453], blockIntervalMs: 0, market: { volatilityBps: 5, seed: 1 } }),
    ).rejects.toThrow(/interval mining/);
    devnet = undefined;
  }, 60_000);
});
