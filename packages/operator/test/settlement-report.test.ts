/**
 * buildSettlement (pure: swaps, token metadata and the trail lookup are given): the volume and
 * fee formulas, attribution rules, what is listed apart and why, ordering; the CSV shapes
 * (settlement-output.ts); the metrics textfile (settlement-metrics.ts: prom-client's text format,
 * checked by promtool).
 */
import { spawnSync } from 'node:child_process';
import type { AuditRecord } from '@pmm/core';
import { buildSettlement, csvLine, type OnChainSwap } from '../src';
import type { AuditEntry } from '../src';
import type { ChainScope } from '../src/settle/settlement-report';
import { settlementMetrics } from '../src/settle/settlement-metrics';
import { settlementCsv, settlementJson, settlementSwapsCsv } from '../src/settle/settlement-output';

const USDC = '0x00000000000000000000000000000000000000c1';
const WETH = '0x00000000000000000000000000000000000000e1';
const WBTC = '0x00000000000000000000000000000000000000b1';
const USER = '0x00000000000000000000000000000000000000aa';
const ROUTER = '0x00000000000000000000000000000000000000f0';
const META: Record<string, { symbol: string; decimals: number }> = {
  [USDC]: { symbol: 'USDC', decimals: 6 },
  [WETH]: { symbol: 'WETH', decimals: 18 },
  [WBTC]: { symbol: 'WBTC', decimals: 8 },
};
const scope: ChainScope = {
  chainId: 8453,
  router: ROUTER,
  fromBlock: 1,
  toBlock: 100,
  ended: true,
  quoteToken: USDC,
  quote: META[USDC]!,
};

let n = 0;
const sig = (k: number) => `0x${k.toString(16).padStart(2, '0').repeat(65)}`;

function swap(over: Partial<OnChainSwap> & { fee?: bigint; signature?: string } = {}): OnChainSwap {
  n++;
  const { fee = 30n, signature = sig(n), ...rest } = over;
  return {
    chainId: 8453,
    txHash: `0x${n.toString(16).padStart(64, '0')}`,
    blockNumber: 10 + n,
    blockTime: 1_790_000_000 + n,
    logIndex: 0,
    callIndex: 0,
    via: 'direct',
    user: USER,
    txFrom: USER,
    tokenIn: USDC,
    tokenOut: WETH,
    amountIn: 100_000_000n,
    amountOut: 30_000_000_000_000_000n,
    minAmountOut: 0n,
    quoteTimestamp: 1_790_000_000,
    verification: { fee, originRate: 0n, userAddress: USER, signature },
    ...rest,
  };
}

function record(s: OnChainSwap, integratorId: string, over: Partial<AuditRecord> = {}): AuditEntry {
  return {
    id: `${s.blockNumber}-0`,
    record: {
      time: s.quoteTimestamp * 1000,
      chainId: s.chainId,
      integratorId,
      keyId: `pmm_${integratorId}`,
      requestId: `req-${integratorId}`,
      userAddress: USER,
      tokenIn: s.tokenIn,
      tokenOut: s.tokenOut,
      fee: s.verification!.fee.toString(),
      originRate: '0',
      amountIn: s.amountIn.toString(),
      minAmountOut: s.minAmountOut.toString(),
      timestamp: s.quoteTimestamp,
      digest: `0x${'00'.repeat(32)}`,
      signature: s.verification!.signature,
      signer: '0x0000000000000000000000000000000000000001',
      ...over,
    },
  };
}

async function report(swaps: OnChainSwap[], entries: AuditEntry[]) {
  return buildSettlement({
    fromSeconds: 1_790_000_000,
    toSeconds: 1_790_100_000,
    chains: [scope],
    swaps,
    unexamined: [],
    lateAfterSeconds: 60,
    token: (_c, a) => META[a]!,
    lookup: {
      oldest: async () => undefined,
      bySignature: async (chainId, signature, timestamp) =>
        entries.filter(
          (e) => e.record.chainId === chainId && e.record.signature === signature && e.record.timestamp === timestamp,
        ),
    },
  });
}

describe('buildSettlement', () => {
  it('behavior: a buy (quote in): volume is amountIn, fees amountIn × fee / 100000', async () => {
    const s = swap({ fee: 30n });
    const r = await report([s], [record(s, 'acme')]);
    expect(r.swaps[0]).toMatchObject({
      integratorId: 'acme',
      pair: 'WETH/USDC',
      side: 'buy',
      amountIn: '100',
      amountOut: '0.03',
      volume: '100',
      fees: '0.03',
      keyId: 'pmm_acme',
      requestId: 'req-acme',
      reason: '',
    });
  });

  it('behavior: a sell (quote out): fees = amountOut × fee / (100000 − fee), volume = amountOut + fees (rounded down)', async () => {
    const s = swap({ tokenIn: WETH, tokenOut: USDC, amountIn: 10n ** 16n, amountOut: 29_910_000n, fee: 300n });
    const r = await report([s], [record(s, 'acme')]);
    // 29.91 × 300 / 99700 = 0.0900000 (rounded down at 6 decimals: 90000 units)
    expect(r.swaps[0]).toMatchObject({
      side: 'sell',
      amountIn: '0.01',
      amountOut: '29.91',
      fees: '0.09',
      volume: '30',
    });
  });

  it('behavior: the summary sums per integrator, chain and pair, with the transactions, sorted', async () => {
    const a1 = swap();
    const b1 = swap({ tokenIn: WBTC, tokenOut: USDC, amountIn: 10n ** 6n, amountOut: 600_000_000n, fee: 0n });
    const a2 = swap({ amountIn: 50_000_000n });
    const r = await report([a2, b1, a1], [record(a1, 'zeta'), record(b1, 'acme'), record(a2, 'zeta')]);
    expect(r.summary).toEqual([
      {
        integratorId: 'acme',
        chainId: 8453,
        pair: 'WBTC/USDC',
        quoteToken: 'USDC',
        swaps: 1,
        volume: '600',
        fees: '0',
        transactions: [b1.txHash],
      },
      {
        integratorId: 'zeta',
        chainId: 8453,
        pair: 'WETH/USDC',
        quoteToken: 'USDC',
        swaps: 2,
        volume: '150',
        fees: '0.045',
        transactions: [a1.txHash, a2.txHash],
      },
    ]);
    expect(r.swaps.map((l) => l.txHash)).toEqual([b1.txHash, a1.txHash, a2.txHash]);
  });

  it('behavior: requests sharing one signature: the one with the swap’s amounts decides; two integrators with the same amounts are listed apart', async () => {
    const s = swap({ amountIn: 7n });
    const other = record(s, 'beta', { amountIn: '8' });
    expect((await report([s], [record(s, 'acme'), other])).swaps[0]!.integratorId).toBe('acme');
    const r = await report([s], [record(s, 'acme'), record(s, 'beta')]);
    expect(r.swaps).toEqual([]);
    expect(r.unattributed[0]!.reason).toBe('signature recorded for several integrators: acme, beta');
  });

  it('behavior: listed apart, with the reason: no record, a record for other signed fields, undecodable data, no quote leg', async () => {
    const none = swap();
    const wrong = swap();
    const broken = swap({ verification: undefined, problem: 'verificationData: unexpected bytes offset' });
    const noQuote = swap({ tokenIn: WETH, tokenOut: WBTC });
    const r = await report([none, wrong, broken, noQuote], [record(wrong, 'acme', { fee: '31' })]);
    expect(r.swaps).toEqual([]);
    expect(r.summary).toEqual([]);
    expect(r.unattributed.map((l) => l.reason)).toEqual([
      'no audit record of its signature',
      'the audit record of its signature does not match the swap',
      'verificationData: unexpected bytes offset',
      "neither token is the chain's quote token USDC",
    ]);
  });

  it('behavior: the same input gives the same bytes whatever the order of the swaps; CSV shapes', async () => {
    const a = swap();
    const b = swap({ tokenIn: WETH, tokenOut: USDC, amountIn: 10n ** 16n, amountOut: 30_000_000n });
    const c = swap();
    const entries = [record(a, 'acme'), record(b, 'acme')];
    const r1 = await report([a, b, c], entries);
    const r2 = await report([c, b, a], entries);
    expect(settlementJson(r2)).toBe(settlementJson(r1));
    expect(settlementCsv(r1)).toBe(
      'integratorId,chainId,pair,quoteToken,swaps,volume,fees,transactions\n' +
        `acme,8453,WETH/USDC,USDC,2,${r1.summary[0]!.volume},${r1.summary[0]!.fees},${a.txHash} ${b.txHash}\n`,
    );
    const detail = settlementSwapsCsv(r1).trimEnd().split('\n');
    expect(detail).toHaveLength(4);
    expect(detail[3]).toMatch(/^,8453,.*,no audit record of its signature$/);
  });
});

describe('settlementMetrics', () => {
  it("behavior: the textfile's series, names and labels as settle has always written them, in a format promtool accepts", async () => {
    const early = swap();
    const late = swap({ blockTime: 1_790_000_000 + 500 });
    const apart = swap();
    // A label value that needs escaping (an integrator id is the operator's choice).
    const r = await report([early, late, apart], [record(early, 'acme'), record(late, 'a"b\\c')]);
    const text = await settlementMetrics(r);
    const series = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    expect(series).toEqual([
      'pmm_settlement_period_end_timestamp_seconds 1790100000',
      'pmm_settlement_swaps{chain="8453",integrator="a\\"b\\\\c"} 1',
      'pmm_settlement_swaps{chain="8453",integrator="acme"} 1',
      'pmm_settlement_swaps{chain="8453",integrator=""} 1',
      'pmm_settlement_unexamined_transactions{chain="8453"} 0',
      'pmm_settlement_period_ended{chain="8453"} 1',
      'pmm_settlement_signature_excess_swaps{chain="8453",integrator="a\\"b\\\\c"} 0',
      'pmm_settlement_signature_excess_swaps{chain="8453",integrator="acme"} 0',
      'pmm_settlement_late_swaps{chain="8453",integrator="a\\"b\\\\c"} 1',
      'pmm_settlement_late_swaps{chain="8453",integrator="acme"} 0',
      `pmm_settlement_max_delay_seconds{chain="8453",integrator="a\\"b\\\\c"} ${late.blockTime - late.quoteTimestamp}`,
      `pmm_settlement_max_delay_seconds{chain="8453",integrator="acme"} ${early.blockTime - early.quoteTimestamp}`,
    ]);
    for (const name of ['pmm_settlement_swaps', 'pmm_settlement_period_ended'])
      expect(text).toContain(`# TYPE ${name} gauge\n`);
    // promtool parses it as Prometheus does and lints it (help text, names).
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    if (check.error) throw new Error(`promtool could not run (apt-get install prometheus): ${check.error.message}`);
    expect(`${check.stdout}${check.stderr}`).toBe('');
    expect(check.status).toBe(0);
    // And it fails on a file that does not parse.
    const broken = spawnSync('promtool', ['check', 'metrics'], {
      input: `${text}pmm_settlement_swaps{chain=8453} 1\n`,
    });
    expect(broken.status).not.toBe(0);
  });
});

describe('csvLine', () => {
  it('behavior: quotes commas, quotes and newlines; neutralises formula-like text; empty for undefined', () => {
    expect(csvLine(['a', 1, undefined, 'x,y', 'say "hi"', 'l1\nl2'])).toBe('a,1,,"x,y","say ""hi""","l1\nl2"');
    expect(csvLine(['=cmd()', '+1', '-x', '@a'])).toBe("'=cmd(),'+1,'-x,'@a");
    expect(csvLine([-1])).toBe('-1');
  });
});
