/**
 * The devnet's moving market: a seeded random walk of each pair's mid, one step per block, sent
 * to a real anvil node; off by default.
 */
import { PmmRouterArtifact } from '@pmm/contracts';
import { chainClients } from '@pmm/testkit';
import { parseEventLogs, type Abi, type Address } from 'viem';
import { marketFromEnv, midWalk, seedPlan, startDevnet, type Devnet } from '../src';

const abi = PmmRouterArtifact.abi as Abi;
const take = (walk: Generator<bigint>, n: number): bigint[] => Array.from({ length: n }, () => walk.next().value);

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

describe('marketFromEnv', () => {
  const defaults = { volatilityBps: 5, seed: 1 };

  it('behavior: on by default with the defaults; off, or settings over the defaults', () => {
    expect(marketFromEnv({}, defaults)).toEqual(defaults);
    expect(marketFromEnv({ DEVNET_MARKET: 'off' }, defaults)).toBeUndefined();
    expect(marketFromEnv({ DEVNET_MARKET_VOLATILITY_BPS: '2.5', DEVNET_MARKET_SEED: '42' }, defaults)).toEqual({
      volatilityBps: 2.5,
      seed: 42,
    });
  });

  it('error: a bad setting names itself', () => {
    expect(() => marketFromEnv({ DEVNET_MARKET: 'yes' }, defaults)).toThrow(/DEVNET_MARKET must be on or off/);
    expect(() => marketFromEnv({ DEVNET_MARKET_VOLATILITY_BPS: 'x' }, defaults)).toThrow(
      /DEVNET_MARKET_VOLATILITY_BPS/,
    );
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
    const from = await publicClient.getBlockNumber();
    while ((await publicClient.getBlockNumber()) < from + 8n) await new Promise((r) => setTimeout(r, 100));
    const to = await publicClient.getBlockNumber();
    const raw = await publicClient.getLogs({ address: chain.contracts.router as Address, fromBlock: 0n, toBlock: to });
    const curveSets = parseEventLogs({ abi, logs: raw, eventName: 'CurveSet' }) as unknown as {
      blockNumber: bigint;
      args: { base: string; midPriceX18: bigint };
    }[];
    const plan = seedPlan(8453);
    for (const [i, token] of chain.baseTokens.entries()) {
      const mine = curveSets.filter((l) => l.args.base.toLowerCase() === token.address.toLowerCase());
      // The first is the seed's; every later one is the next step of the pair's walk.
      expect(mine[0]!.args.midPriceX18).toBe(plan.baseTokens[i]!.curve.midPriceX18);
      const steps = mine.slice(1);
      // A loaded machine can miss a block now and then; the walk itself must not skip a step.
      expect(steps.length).toBeGreaterThanOrEqual(3);
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
