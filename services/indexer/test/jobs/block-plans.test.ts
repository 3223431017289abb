/**
 * Plans made ahead (jobs/block-plans.ts): a plan is the very call list and aggregate3 calldata
 * the block would otherwise make on the spot; the next block's timestamp is foreseen from the
 * chain's usual step; a plan serves only the tracked pairs it was made for; a plan that failed
 * ahead is made again by its block. "Made ahead" is read from the signatures the key made.
 */
import { createDigestSigner } from '@pmm/core';
import type { KeySigner } from '@pmm/protocol';
import { planBlockCalls, type QuoteContext, type TrackedPairs } from '../../src/chain/block-quotes';
import { encodeAggregate3 } from '../../src/chain/call-codec';
import { createBlockPlans } from '../../src/jobs/block-plans';

const KEY = '0x' + '11'.repeat(32);
const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** A real in-memory key that counts its signatures (and can be told to fail). */
function countingSigner() {
  const inner = createDigestSigner(KEY);
  const state = { signed: 0, failNext: 0 };
  const signer: KeySigner = {
    address: inner.address,
    backend: inner.backend,
    sign(digest) {
      if (state.failNext > 0) {
        state.failNext--;
        return Promise.reject(new Error('module unplugged'));
      }
      state.signed++;
      return inner.sign(digest);
    },
  };
  return { signer, state };
}

const token = (n: number, decimals: number) => ({
  address: '0x' + n.toString(16).padStart(40, '0'),
  symbol: `T${n}`,
  decimals,
});

function tracked(pairs: number): TrackedPairs {
  return {
    quote: token(1, 6),
    pairs: Array.from({ length: pairs }, (_, i) => ({
      base: token(100 + i, 18),
      ladder: { asks: [10n ** 6n, 5n * 10n ** 6n], bids: [10n ** 17n, 10n ** 18n] },
    })),
  };
}

/** Lets the background work queued so far run (it starts on setImmediate). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup({ multicall3 }: { multicall3?: string } = { multicall3: MULTICALL3 }) {
  const { signer, state } = countingSigner();
  const ctx: QuoteContext = {
    chainId: 8453,
    router: '0x' + 'aa'.repeat(20),
    helper: '0x' + 'bb'.repeat(20),
    verifier: '0x' + 'cc'.repeat(20),
    signer,
  };
  const errors: unknown[] = [];
  const plans = createBlockPlans({ ctx, multicall3, onError: (err) => errors.push(err) });
  return { plans, ctx, state, errors };
}

/** Signatures of one block: one per side. */
const SIDES = 2 * 3;

describe('block plans', () => {
  it('a plan is the call list and aggregate3 calldata of the block, made on the spot without a forecast', async () => {
    const { plans, ctx, state } = setup();
    const pairs = tracked(3);
    const { plan, ahead } = await plans.get(pairs, 1_700_000_000);
    expect(ahead).toBe(false);
    expect(state.signed).toBe(SIDES);
    const expected = await planBlockCalls(pairs, ctx, 1_700_000_000_000n);
    expect(plan.calls).toEqual(expected);
    expect(plan.aggregate3).toBe(encodeAggregate3(expected));
  });

  it('without Multicall3 a plan has no aggregate3 calldata', async () => {
    const { plans } = setup({});
    expect((await plans.get(tracked(1), 100)).plan.aggregate3).toBeUndefined();
  });

  it('once a block is sent, the next second is planned in the background: its block signs nothing', async () => {
    const { plans, ctx, state } = setup();
    const pairs = tracked(3);
    await plans.get(pairs, 100);
    plans.prepareNext(pairs, { number: 1, timestamp: 100 });
    // Nothing is made before the caller has returned.
    expect(state.signed).toBe(SIDES);
    await settle();
    expect(state.signed).toBe(2 * SIDES);
    const { plan, ahead } = await plans.get(pairs, 101);
    expect(ahead).toBe(true);
    expect(state.signed).toBe(2 * SIDES);
    expect(plan.calls).toEqual(await planBlockCalls(pairs, ctx, 101_000n));
  });

  it('a block that shares the last timestamp (blocks faster than a second) reuses its plan', async () => {
    const { plans, state } = setup();
    const pairs = tracked(2);
    await plans.get(pairs, 100);
    plans.prepareNext(pairs, { number: 1, timestamp: 100 });
    await settle();
    const signed = state.signed;
    expect((await plans.get(pairs, 100)).ahead).toBe(true);
    expect(state.signed).toBe(signed);
  });

  it("the step is the chain's usual one: every 2 s, the block two seconds on is planned; a pause does not move it", async () => {
    const { plans } = setup();
    const pairs = tracked(1);
    // 2 s blocks, one pause of a minute between blocks 3 and 4.
    const heads = [
      [1, 100],
      [2, 102],
      [3, 104],
      [4, 164],
      [5, 166],
    ] as const;
    for (const [number, timestamp] of heads) plans.prepareNext(pairs, { number, timestamp });
    await settle();
    expect((await plans.get(pairs, 168)).ahead).toBe(true);
    expect((await plans.get(pairs, 167)).ahead).toBe(false);
  });

  it('at 750 ms blocks (steps of 0 and 1 s) the next second is planned', async () => {
    const { plans } = setup();
    const pairs = tracked(1);
    const heads = [
      [1, 100],
      [2, 100],
      [3, 101],
      [4, 102],
      [5, 103],
      [6, 103],
    ] as const;
    for (const [number, timestamp] of heads) plans.prepareNext(pairs, { number, timestamp });
    await settle();
    expect((await plans.get(pairs, 104)).ahead).toBe(true);
  });

  it('when calls take longer than a block, the step is between the blocks computed: every other 2 s block, 4 s', async () => {
    const { plans } = setup();
    const pairs = tracked(1);
    for (const [number, timestamp] of [
      [1, 100],
      [3, 104],
      [5, 108],
    ] as const)
      plans.prepareNext(pairs, { number, timestamp });
    await settle();
    expect((await plans.get(pairs, 112)).ahead).toBe(true);
  });

  it('a plan serves only the tracked pairs it was made for (a registry change makes new ones)', async () => {
    const { plans, ctx } = setup();
    const before = tracked(2);
    const after = tracked(3);
    plans.prepareNext(before, { number: 1, timestamp: 100 });
    await settle();
    const { plan, ahead } = await plans.get(after, 101);
    expect(ahead).toBe(false);
    expect(plan.calls).toEqual(await planBlockCalls(after, ctx, 101_000n));
  });

  it('a plan that failed ahead is made again by its block, and the failure is reported', async () => {
    const { plans, ctx, state, errors } = setup();
    const pairs = tracked(1);
    state.failNext = 1;
    plans.prepareNext(pairs, { number: 1, timestamp: 100 });
    await settle();
    await settle();
    expect(errors).toHaveLength(1);
    const { plan, ahead } = await plans.get(pairs, 101);
    expect(ahead).toBe(false);
    expect(plan.calls).toEqual(await planBlockCalls(pairs, ctx, 101_000n));
  });
});
