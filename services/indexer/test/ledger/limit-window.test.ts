/**
 * The limits' arithmetic (limit-window.ts), on ledger entries made here: which limit each scope
 * breaks, with what value against what threshold; the window, a resume restarting it, a reorg;
 * the revert and unused shares' hysteresis (a trip level, and a lower re-arm level for a window
 * after the resume of its trip).
 */
import type { HaltScope, LedgerEntry, LedgerRevert } from '@pmm/core';
import { sampleLedgerRevert } from '@pmm/testkit';
import type { DeadlineFate } from '../../src/ledger/deadline-fates';
import { LimitWindow } from '../../src/ledger/limit-window';
import type { LimitConfig } from '../../src/ledger/limit-settings';

const WETH = '0x' + '42'.repeat(20);
const WBTC = '0x' + '0b'.repeat(20);
let tx = 0;

function entry(o: Partial<LedgerEntry> & { integratorId: string; blockNumber: number }): LedgerEntry {
  tx++;
  return {
    chainId: 8453,
    blockHash: '0x' + o.blockNumber.toString(16).padStart(64, '0'),
    blockTime: 1_000 + o.blockNumber,
    txHash: '0x' + tx.toString(16).padStart(64, '0'),
    callIndex: 0,
    via: 'direct',
    keyId: 'k',
    requestId: 'r',
    base: WETH,
    quote: '0x' + '11'.repeat(20),
    pair: 'WETH/USDC',
    side: 'ask',
    baseAmount: '1',
    quoteAmount: '1000',
    executionPrice: '1000',
    amountOut: '1000000000000000000',
    ...o,
  };
}

const never = () => -Infinity;
const config = (c: Partial<LimitConfig>): LimitConfig => ({ windowSeconds: 3_600, ...c });

describe('the notional caps', () => {
  it('behavior: an integrator above its cap over the window, exactly summed; at the cap it is not', () => {
    const w = new LimitWindow(config({ integratorNotional: '3000.5' }), 8453);
    w.add([entry({ integratorId: 'acme', blockNumber: 1, quoteAmount: '1500.25' })]);
    w.add([entry({ integratorId: 'acme', blockNumber: 2, quoteAmount: '1500.25' })]);
    expect(w.breaches(1_002, never)).toEqual([]);
    w.add([entry({ integratorId: 'acme', blockNumber: 3, quoteAmount: '0.000001' })]);
    expect(w.breaches(1_003, never)).toEqual([
      {
        limit: 'integrator-notional',
        scope: { integratorId: 'acme' },
        value: '3000.500001',
        threshold: '3000.5',
        reason:
          'limit integrator-notional: acme executed 3000.500001 USDC on chain 8453 in the last 3600 s (3 swaps), above the cap of 3000.5',
      },
    ]);
  });

  it("behavior: a pair's cap counts every integrator's swaps and unattributed ones; its scope is the pair on its chain", () => {
    const w = new LimitWindow(config({ pairNotional: '2500', integratorNotional: '2000' }), 8453);
    w.add([
      entry({ integratorId: 'a', blockNumber: 1, base: WBTC, pair: 'WBTC/USDC', quoteAmount: '1000' }),
      entry({ integratorId: '', blockNumber: 1, base: WBTC, pair: 'WBTC/USDC', quoteAmount: '1000' }),
      entry({ integratorId: 'b', blockNumber: 2, base: WBTC, pair: 'WBTC/USDC', quoteAmount: '600' }),
      entry({ integratorId: 'c', blockNumber: 2, quoteAmount: '1900' }),
    ]);
    const found = w.breaches(1_002, never);
    expect(found.map((b) => [b.limit, b.scope, b.value])).toEqual([
      ['pair-notional', { chainId: 8453, pair: WBTC }, '2600'],
    ]);
    expect(found[0]!.reason).toMatch(/^limit pair-notional: WBTC\/USDC executed 2600 USDC on chain 8453/);
  });

  it('behavior: swaps older than the window fall out of it', () => {
    const w = new LimitWindow(config({ windowSeconds: 60, integratorNotional: '1500' }), 8453);
    w.add([entry({ integratorId: 'acme', blockNumber: 1 })]);
    w.add([entry({ integratorId: 'acme', blockNumber: 70 })]);
    // Block 1 (time 1001) is more than 60 s before block 70 (time 1070).
    expect(w.breaches(1_070, never)).toEqual([]);
    w.add([entry({ integratorId: 'acme', blockNumber: 71 })]);
    expect(w.breaches(1_071, never).map((b) => b.value)).toEqual(['2000']);
  });

  it('behavior: a resume restarts the window: the swaps before it never count again, the ones after do', () => {
    const w = new LimitWindow(config({ integratorNotional: '1500' }), 8453);
    w.add([entry({ integratorId: 'acme', blockNumber: 1 }), entry({ integratorId: 'acme', blockNumber: 2 })]);
    expect(w.breaches(1_002, never)).toHaveLength(1);
    // Resumed at 1002.5 s: blocks 1 and 2 (times 1001, 1002) are before it.
    const resumed = (scope: HaltScope) => (scope.integratorId === 'acme' ? 1_002_500 : -Infinity);
    w.add([entry({ integratorId: 'acme', blockNumber: 3 })]);
    expect(w.breaches(1_003, resumed)).toEqual([]);
    w.add([entry({ integratorId: 'acme', blockNumber: 4 })]);
    const [again] = w.breaches(1_004, resumed);
    expect([again!.value, again!.reason]).toEqual([
      '2000',
      expect.stringContaining('since its resume at 1970-01-01T00:16:42.500Z (2 swaps)'),
    ]);
  });

  it('behavior: swaps given out of block order (a restart reloading its ledger after new blocks) are summed in order after a resume', () => {
    const w = new LimitWindow(config({ integratorNotional: '2500' }), 8453);
    // Blocks 5 and 6 come first, then the reload of 1 to 4: the sums are rebuilt in block order.
    w.add([entry({ integratorId: 'acme', blockNumber: 5 }), entry({ integratorId: 'acme', blockNumber: 6 })]);
    w.add([1, 2, 3, 4].map((blockNumber) => entry({ integratorId: 'acme', blockNumber, quoteAmount: '0.5' })));
    // Resumed at 1002.5 s: blocks 3 to 6 count, 0.5 + 0.5 + 1000 + 1000.
    const resumed = () => 1_002_500;
    expect(w.breaches(1_006, resumed)).toEqual([]);
    w.add([entry({ integratorId: 'acme', blockNumber: 7, quoteAmount: '499.5' })]);
    const [breach] = w.breaches(1_007, resumed);
    expect([breach!.value, breach!.reason]).toEqual(['2500.5', expect.stringContaining('(5 swaps)')]);
  });

  it('behavior: only scopes touched since the last evaluation are evaluated; touch() asks for one again', () => {
    const w = new LimitWindow(config({ integratorNotional: '500' }), 8453);
    w.add([entry({ integratorId: 'acme', blockNumber: 1 })]);
    expect(w.breaches(1_001, never)).toHaveLength(1);
    expect(w.breaches(1_002, never)).toEqual([]);
    w.touch({ integratorId: 'acme' });
    expect(w.breaches(1_002, never)).toHaveLength(1);
  });

  it('behavior: a swap given twice (the ledger reloaded at a restart) counts once', () => {
    const w = new LimitWindow(config({ integratorNotional: '1500' }), 8453);
    const e = entry({ integratorId: 'acme', blockNumber: 5 });
    w.add([e]);
    w.add([{ ...e }, entry({ integratorId: 'acme', blockNumber: 3, quoteAmount: '100' })]);
    expect(w.breaches(1_005, never)).toEqual([]);
  });

  it('behavior: a reorg forgets what the orphaned blocks held', () => {
    const w = new LimitWindow(config({ integratorNotional: '1500' }), 8453);
    w.add([entry({ integratorId: 'acme', blockNumber: 1 })]);
    w.add([entry({ integratorId: 'acme', blockNumber: 2 })]);
    w.rollback(1);
    expect(w.breaches(1_002, never)).toEqual([]);
    w.add([entry({ integratorId: 'acme', blockNumber: 2, quoteAmount: '400' })]);
    expect(w.breaches(1_002, never)).toEqual([]);
  });
});

describe('the markout floor', () => {
  const markoutConfig = config({ markout: { floorBps: -20, horizon: '5b', minSwaps: 3 } });

  it('behavior: a mean markout below the floor over at least the minimum of swaps trips; fewer swaps do not', () => {
    const w = new LimitWindow(markoutConfig, 8453);
    const swaps = [1, 2, 3].map((n) => entry({ integratorId: 'informed', blockNumber: n }));
    w.add(swaps);
    w.addMarkout(swaps[0]!, { bps: -90 });
    w.addMarkout(swaps[1]!, { bps: -100 });
    expect(w.breaches(1_010, never)).toEqual([]);
    w.addMarkout(swaps[2]!, { bps: -95.5 });
    expect(w.breaches(1_010, never)).toEqual([
      {
        limit: 'integrator-markout',
        scope: { integratorId: 'informed' },
        value: '-95.17',
        threshold: '-20',
        reason:
          "limit integrator-markout: informed's mean 5b markout on chain 8453 in the last 3600 s is -95.17 bps over 3 swaps, below the floor of -20 bps",
      },
    ]);
  });

  it('behavior: a mean at or above the floor does not trip; a markout given twice counts once', () => {
    const w = new LimitWindow(markoutConfig, 8453);
    const swaps = [1, 2, 3].map((n) => entry({ integratorId: 'random', blockNumber: n }));
    w.add(swaps);
    for (const s of swaps) w.addMarkout(s, { bps: -20 });
    expect(w.breaches(1_010, never)).toEqual([]);
    w.addMarkout(swaps[0]!, { bps: -500 });
    expect(w.breaches(1_010, never)).toEqual([]);
  });
});

describe('the markout floor against the reference', () => {
  const floors = config({
    markout: { floorBps: -20, horizon: '5b', minSwaps: 2 },
    referenceMarkout: { floorBps: -20, horizon: '5b', minSwaps: 2 },
  });

  it("behavior: a frozen curve's swaps, at 0 against its own mid and -80 against the reference: only the reference's floor trips", () => {
    const w = new LimitWindow(floors, 8453);
    const swaps = [1, 2].map((n) => entry({ integratorId: 'picker', blockNumber: n }));
    w.add(swaps);
    w.addMarkout(swaps[0]!, { bps: 0, referenceBps: -80 });
    // A swap of a pair without a reference counts in the mid's mean only.
    w.addMarkout(swaps[1]!, { bps: 0 });
    expect(w.breaches(1_010, never)).toEqual([]);
    const third = entry({ integratorId: 'picker', blockNumber: 3 });
    w.add([third]);
    w.addMarkout(third, { bps: 1, referenceBps: -60 });
    expect(w.breaches(1_010, never)).toEqual([
      {
        limit: 'integrator-reference-markout',
        scope: { integratorId: 'picker' },
        value: '-70.00',
        threshold: '-20',
        reason:
          "limit integrator-reference-markout: picker's mean 5b markout against the reference on chain 8453 in the last 3600 s is -70.00 bps over 2 swaps, below the floor of -20 bps",
      },
    ]);
  });

  it('behavior: each basis counts a swap once, and a reorg takes both back', () => {
    const w = new LimitWindow(floors, 8453);
    const swaps = [1, 2].map((n) => entry({ integratorId: 'picker', blockNumber: n }));
    w.add(swaps);
    w.addMarkout(swaps[0]!, { referenceBps: -80 });
    w.addMarkout(swaps[0]!, { referenceBps: -80 });
    expect(w.breaches(1_010, never)).toEqual([]);
    w.addMarkout(swaps[1]!, { referenceBps: -80 });
    w.rollback(1);
    expect(w.breaches(1_010, never)).toEqual([]);
  });
});

describe('the share below the quote', () => {
  const quoted = (n: number, amountOut: string, integratorId = 'slipped') =>
    entry({ integratorId, blockNumber: n, amountOut, quotedAmountOut: '1000000' });

  it('behavior: the share of swaps with a firm quote executed below it, above the cap over the minimum, trips', () => {
    const w = new LimitWindow(config({ belowQuote: { shareBps: 5000, minSwaps: 3 } }), 8453);
    // A swap without a firm quote is not in the share.
    w.add([quoted(1, '999999'), quoted(2, '1000000'), entry({ integratorId: 'slipped', blockNumber: 2 })]);
    expect(w.breaches(1_002, never)).toEqual([]);
    w.add([quoted(3, '990000')]);
    expect(w.breaches(1_003, never)).toEqual([
      {
        limit: 'integrator-below-quote',
        scope: { integratorId: 'slipped' },
        value: '6666.67',
        threshold: '5000',
        reason:
          "limit integrator-below-quote: 2 of slipped's 3 swaps with a firm quote on chain 8453 in the last 3600 s executed below it (6666.67 bps), above the cap of 5000 bps",
      },
    ]);
  });

  it('behavior: executed at or above the quote is not below it; a share at the cap does not trip', () => {
    const w = new LimitWindow(config({ belowQuote: { shareBps: 5000, minSwaps: 2 } }), 8453);
    w.add([quoted(1, '1000001'), quoted(2, '999000')]);
    expect(w.breaches(1_002, never)).toEqual([]);
  });
});

describe('the revert share, with hysteresis', () => {
  const revertConfig = config({ windowSeconds: 600, reverts: { shareBps: 2000, rearmBps: 1000, minCalls: 5 } });
  let calls = 0;
  const reverted = (integratorId: string, blockNumber: number): LedgerRevert =>
    sampleLedgerRevert(blockNumber, 1_000 + blockNumber, { integratorId, callIndex: ++calls, reason: 'QuoteExpired' });
  /** `executed` swaps and `failed` reverted calls of acme in block `block`. */
  const block = (w: LimitWindow, n: number, executed: number, failed: number) => {
    w.add(Array.from({ length: executed }, () => entry({ integratorId: 'acme', blockNumber: n })));
    w.addReverts(Array.from({ length: failed }, () => reverted('acme', n)));
  };

  it("behavior: an integrator's reverted calls over its calls (swaps and reverts) above the trip level, over the minimum, trip", () => {
    const w = new LimitWindow(revertConfig, 8453);
    // 1 of 4 calls: under the minimum of 5. Unattributed reverts count for no one.
    block(w, 1, 3, 1);
    w.addReverts([reverted('', 1), reverted('', 1)]);
    expect(w.breaches(1_001, never)).toEqual([]);
    // 1 of 5: 2000 bps, at the level, not above it.
    block(w, 2, 1, 0);
    expect(w.breaches(1_002, never)).toEqual([]);
    block(w, 3, 0, 1);
    expect(w.breaches(1_003, never)).toEqual([
      {
        limit: 'integrator-reverts',
        scope: { integratorId: 'acme' },
        value: '3333.33',
        threshold: '2000',
        reason:
          "limit integrator-reverts: 2 of acme's 6 router calls on chain 8453 in the last 600 s reverted (3333.33 bps), above the trip level of 2000 bps",
      },
    ]);
  });

  it('behavior: after a resume that lifted its trip, the re-arm level for a window (probation), then the trip level again', () => {
    const w = new LimitWindow(revertConfig, 8453);
    // Resumed at 1010 s after a trip of this limit: the window restarts there too.
    const resumed = () => 1_010_000;
    const lifted = (_scope: HaltScope, limit: string) => (limit === 'integrator-reverts' ? 1_010_000 : -Infinity);
    block(w, 1, 0, 5);
    // 1 of 6 after the resume: 1666.67 bps, under the trip level, above the re-arm level.
    block(w, 20, 5, 1);
    const [probation] = w.breaches(1_020, resumed, lifted);
    expect(probation).toMatchObject({ limit: 'integrator-reverts', value: '1666.67', threshold: '1000' });
    expect(probation!.reason).toMatch(
      /since its resume at .* reverted \(1666\.67 bps\), above the re-arm level of 1000 bps \(on probation after its last trip, until 1970-01-01T00:26:50\.000Z\)$/,
    );
    // The same share without a lifted trip of this limit (another limit's, or an operator's halt): the trip level.
    w.touch({ integratorId: 'acme' });
    expect(w.breaches(1_020, resumed, () => -Infinity)).toEqual([]);
    // A window after the resume (1010 + 600): the trip level again.
    block(w, 611, 0, 0);
    w.touch({ integratorId: 'acme' });
    expect(w.breaches(1_611, resumed, lifted)).toEqual([]);
  });

  it('behavior: a reorg forgets the reverted calls of the orphaned blocks; a call given twice counts once; off, nothing counts', () => {
    const w = new LimitWindow(revertConfig, 8453);
    block(w, 1, 4, 0);
    const late = reverted('acme', 2);
    w.addReverts([late, late, { ...late }]);
    block(w, 3, 0, 1);
    expect(w.breaches(1_003, never)).toHaveLength(1);
    w.rollback(2);
    expect(w.breaches(1_003, never)).toEqual([]);
    const off = new LimitWindow(config({}), 8453);
    block(off, 1, 0, 50);
    expect(off.breaches(1_001, never)).toEqual([]);
  });
});

describe('the unused share of firm signatures', () => {
  const unusedConfig = config({ unused: { shareBps: 5000, rearmBps: 2500, minFirm: 4 } });
  let signatures = 0;
  const judged = (
    integratorId: string,
    unused: boolean,
    deadline: number,
    blockNumber = deadline - 1_000,
  ): DeadlineFate => ({
    integratorId,
    requestId: `req-${++signatures}`,
    firm: true,
    fate: unused ? 'unused' : 'executed',
    blockNumber,
    blockTime: deadline + 1,
    deadline,
  });

  it('behavior: the share of firm signatures judged unused in the window above the trip level, over the minimum, trips', () => {
    const w = new LimitWindow(unusedConfig, 8453);
    w.addFirm([judged('taker', true, 1_001), judged('taker', true, 1_002), judged('taker', false, 1_003)]);
    expect(w.breaches(1_003, never)).toEqual([]);
    w.addFirm([judged('taker', true, 1_004), judged('other', true, 1_004)]);
    expect(w.breaches(1_004, never)).toEqual([
      {
        limit: 'integrator-unused',
        scope: { integratorId: 'taker' },
        value: '7500',
        threshold: '5000',
        reason:
          "limit integrator-unused: 3 of taker's 4 firm signatures on chain 8453 whose window passed in the last 3600 s were never used (7500 bps), above the trip level of 5000 bps",
      },
    ]);
  });

  it('behavior: on probation after the resume of its trip, the re-arm level; a reorg undoes the judgements of its blocks', () => {
    const w = new LimitWindow(unusedConfig, 8453);
    const lifted = (_scope: HaltScope, limit: string) => (limit === 'integrator-unused' ? 1_000_000 : -Infinity);
    // 1 of 3 unused, then 2 of 4 (5000 bps: at the trip level, above the re-arm level).
    w.addFirm([judged('taker', true, 1_001), judged('taker', false, 1_002), judged('taker', false, 1_003)]);
    expect(w.breaches(1_003, never, lifted)).toEqual([]);
    w.addFirm([judged('taker', true, 1_004, 50)]);
    expect(w.breaches(1_004, never, lifted).map((b) => [b.value, b.threshold])).toEqual([['5000', '2500']]);
    expect(w.breaches(1_004, never, () => -Infinity)).toEqual([]);
    w.rollback(49);
    w.touch({ integratorId: 'taker' });
    expect(w.breaches(1_004, never, lifted)).toEqual([]);
  });
});

it('behavior: limits that are off never trip, whatever executes', () => {
  const w = new LimitWindow(config({}), 8453);
  const e = entry({ integratorId: 'acme', blockNumber: 1, quoteAmount: '1000000000', quotedAmountOut: '2' });
  w.add([e]);
  w.addMarkout(e, { bps: -10_000 });
  expect(w.breaches(1_001, never)).toEqual([]);
});
