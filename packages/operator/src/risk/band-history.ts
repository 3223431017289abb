/**
 * `risk history`'s transitions in and out of band: each chain's log of them (core's
 * band-transition.ts, `pmm:{<id>}:book:band:log`, on the books' server), as the indexers added
 * them with the books that showed them. The pair was withheld, or served again, at a block, and
 * why: its status and the values at that block.
 */
import { BAND_LOG_FIELD, bookBandLogKey, decodeBandTransition, type BandTransition, type RedisKeys } from '@pmm/core';
import { KNOWN_CHAIN_IDS } from '@pmm/protocol';
import type { RiskContext } from './risk-command';

/** A transition of one chain, with its chain. */
export interface ChainBandTransition extends BandTransition {
  chainId: number;
}

/** What a transition did: withheld or restored (enforce), out of band or in band again (watch: only reported). */
export function bandAction(t: BandTransition): 'withheld' | 'restored' | 'out-of-band' | 'in-band' {
  if (t.to === 'out') return t.withheld ? 'withheld' : 'out-of-band';
  return t.mode === 'enforce' ? 'restored' : 'in-band';
}

/**
 * Every known chain's transitions, oldest first (by block time, then chain); `malformed`: entries
 * that do not parse, skipped; 'unreadable' when the books' server cannot be read.
 */
export async function bandHistory(
  ctx: Pick<RiskContext, 'registries'> & { keys: RedisKeys },
): Promise<{ transitions: ChainBandTransition[]; malformed: number } | 'unreadable'> {
  let malformed = 0;
  try {
    const redis = await ctx.registries();
    const logs = await Promise.all(
      KNOWN_CHAIN_IDS.map((id) => redis.xrange(bookBandLogKey(ctx.keys.book(id)), '-', '+')),
    );
    const transitions = KNOWN_CHAIN_IDS.flatMap((chainId, i) =>
      logs[i]!.flatMap(([, fields]) => {
        const t = decodeBandTransition(fields[1]);
        if (fields[0] !== BAND_LOG_FIELD || !t) {
          malformed++;
          return [];
        }
        return [{ chainId, ...t }];
      }),
    );
    transitions.sort((a, b) => a.time - b.time || a.chainId - b.chainId || a.block - b.block);
    return { transitions, malformed };
  } catch {
    return 'unreadable';
  }
}

/** One line of `risk history`: when, what, which pair, at which block, why. */
export function describeBandTransition(t: ChainBandTransition): string {
  const figures = [
    t.deviationBps === undefined ? undefined : `deviation ${t.deviationBps.toFixed(1)} bps`,
    t.ageSeconds === undefined ? undefined : `reference age ${t.ageSeconds} s`,
    t.referencePrice === undefined ? undefined : `reference ${t.referencePrice}`,
    t.curvePrice === undefined ? undefined : `curve ${t.curvePrice}`,
  ].filter(Boolean);
  const when = new Date(t.time * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return (
    `${when}  ${bandAction(t)}  chain=${t.chainId} pair=${t.base} (${t.symbol}) at block ${t.block}: ` +
    `${t.status}${figures.length ? `, ${figures.join(', ')}` : ''}`
  );
}

/** A transition in `risk history --format json`: its action and time beside the transition's own fields. */
export function bandTransitionJson(t: ChainBandTransition) {
  const { time, base, to: _to, ...rest } = t;
  return {
    action: bandAction(t),
    pair: base,
    at: new Date(time * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...rest,
  };
}
