/**
 * The price probe behind the default bid ladder (see domain/ladder.ts): at each registry
 * refresh, one batched call quotes, for every pair that needs it,
 * - the ask side at the first ask notional (quote in → base out), and
 * - as a fallback, the bid side for one whole base token (base in → quote out).
 * The ask probe gives the price a taker pays near the top of the book; the bid ladder is the
 * ask notionals converted at that price, so both sides reach about the same quote depth.
 */
import type { TokenInfo } from '@pmm/protocol';
import { executeCalls } from './call-batch';
import { decodeUintResult, type CallResult } from './call-codec';
import { sideCalls, type QuoteContext } from './block-quotes';
import { blockHashRef, type RpcTransport } from '@pmm/core';
import type { ProbePrice } from '../domain/ladder';

const FAILED: CallResult = { success: false, data: '0x' };

export interface ProbeRequest {
  base: TokenInfo;
  /** Raw quote amount of the ask probe (the first ask notional); absent: bid probe only. */
  askNotional?: bigint;
}

/**
 * Probe prices by base address. Pairs whose probes both fail are absent (their bids fall
 * back to the fixed base ladder).
 */
export async function probePrices(
  rpc: RpcTransport,
  ctx: QuoteContext,
  quote: TokenInfo,
  requests: readonly ProbeRequest[],
  block: { hash: string; timestamp: number },
  opts: { multicall3?: string; timeoutMs: number },
): Promise<Map<string, ProbePrice>> {
  const ts = BigInt(block.timestamp) * 1000n;
  const sides = requests.flatMap((r) => {
    const oneBase = 10n ** BigInt(r.base.decimals);
    const ask = sideCalls(ctx, quote.address, r.base.address, r.askNotional ? [r.askNotional] : [1n], ts);
    const bid = sideCalls(ctx, r.base.address, quote.address, [oneBase], ts);
    return [ask, bid];
  });
  const calls = (await Promise.all(sides)).flat();
  const { results } = await executeCalls(rpc, calls, {
    block: blockHashRef(block.hash),
    multicall3: opts.multicall3,
    timeoutMs: opts.timeoutMs,
  });
  const out = new Map<string, ProbePrice>();
  requests.forEach((r, i) => {
    const askOut = r.askNotional ? decodeUintResult(results[2 * i] ?? FAILED) : undefined;
    const bidOut = decodeUintResult(results[2 * i + 1] ?? FAILED);
    if (r.askNotional && askOut && askOut > 0n) out.set(r.base.address, { quoteIn: r.askNotional, baseOut: askOut });
    else if (bidOut && bidOut > 0n)
      out.set(r.base.address, { quoteIn: bidOut, baseOut: 10n ** BigInt(r.base.decimals) });
  });
  return out;
}
