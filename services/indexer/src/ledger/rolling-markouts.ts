/**
 * Each integrator's rolling 60 s markout (core's ledger-rolling-markout.ts): its last swaps'
 * markouts in memory, against its own mid and against the reference, their means as the metrics
 * `ledger_markout_60s_bps` and `ledger_markout_60s_swaps`, `ledger_reference_markout_60s_bps` and
 * `ledger_reference_markout_60s_swaps`, and the values in Redis (one hash field per integrator), so that a
 * restarted ledger goes on from them and the operator console reads the same figure.
 */
import {
  LEDGER_ROLLING_SWAPS,
  parseRollingMarkout,
  rollingMarkoutJson,
  rollingMean,
  type Logger,
  type RedisClient,
  type RollingMarkout,
} from '@pmm/core';
import type { LedgerMetrics } from './ledger-metrics';

/** One markout of an integrator's swap: against its own mid, against the reference (each when known). */
export interface IntegratorMarkout {
  integratorId: string;
  bps?: number;
  referenceBps?: number;
}

const LISTS = ['bps', 'referenceBps'] as const;
const keep = (list: number[], more: readonly number[]) => [...list, ...more].slice(-LEDGER_ROLLING_SWAPS);

export class RollingMarkouts {
  private readonly values = new Map<string, RollingMarkout>();
  private loading: Promise<void> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
    private readonly metrics: Pick<
      LedgerMetrics,
      'markout60s' | 'markout60sSwaps' | 'referenceMarkout60s' | 'referenceMarkout60sSwaps'
    >,
    private readonly log: Logger,
  ) {}

  /**
   * Reads the values a previous run kept, once. Those recorded since this run started come after
   * them (its HGETALL goes first on the one connection: it is answered before any HSET of this
   * run), and nothing is written back before it is done, so loading late loses nothing. An
   * unreadable entry is left out (and logged).
   */
  load(): Promise<void> {
    return (this.loading ??= this.redis.hgetall(this.key).then((stored) => {
      for (const [integratorId, json] of Object.entries(stored)) {
        let before: RollingMarkout;
        try {
          before = parseRollingMarkout(json);
        } catch (err) {
          this.log.warn('rolling markout not read', {
            integratorId,
            error: err instanceof Error ? err.message : String(err),
          });
          continue;
        }
        const since = this.values.get(integratorId) ?? { bps: [], referenceBps: [] };
        this.values.set(integratorId, {
          bps: keep(before.bps, since.bps),
          referenceBps: keep(before.referenceBps, since.referenceBps),
        });
        this.export(integratorId);
      }
    }));
  }

  /** The integrator's series exist from its first swap: no mean yet (NaN), none behind it. */
  track(integratorId: string): void {
    if (this.values.has(integratorId)) return;
    this.values.set(integratorId, { bps: [], referenceBps: [] });
    this.export(integratorId);
  }

  /**
   * Adds markouts (basis points) whose horizon has passed; keeps the changed integrators' values in
   * Redis. A value that is not a finite number is left out: it would make the mean one too.
   */
  async add(all: readonly IntegratorMarkout[]): Promise<void> {
    const changed = new Set<string>();
    for (const m of all) {
      const values = this.values.get(m.integratorId) ?? { bps: [], referenceBps: [] };
      for (const list of LISTS) {
        const bps = m[list];
        if (bps === undefined || !Number.isFinite(bps)) continue;
        values[list] = keep(values[list], [bps]);
        changed.add(m.integratorId);
      }
      this.values.set(m.integratorId, values);
    }
    if (changed.size === 0) return;
    for (const integratorId of changed) this.export(integratorId);
    // After the last run's values are in (a failed load was logged: this run's values stand alone).
    await this.loading?.catch(() => undefined);
    const fields = [...changed].flatMap((id) => [id, rollingMarkoutJson(this.values.get(id)!)]);
    await this.redis.hset(this.key, ...fields);
  }

  private export(integratorId: string): void {
    const { bps, referenceBps } = this.values.get(integratorId)!;
    const labels = { integrator: integratorId };
    this.metrics.markout60s.set(labels, rollingMean(bps) ?? NaN);
    this.metrics.markout60sSwaps.set(labels, bps.length);
    this.metrics.referenceMarkout60s.set(labels, rollingMean(referenceBps) ?? NaN);
    this.metrics.referenceMarkout60sSwaps.set(labels, referenceBps.length);
  }
}
