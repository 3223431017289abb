/**
 * Each integrator's rolling 60 s markout (core's ledger-rolling-markout.ts): its last swaps'
 * markouts in memory, their mean as the metrics `ledger_markout_60s_bps` and
 * `ledger_markout_60s_swaps`, and the values in Redis (one hash field per integrator), so that a
 * restarted ledger goes on from them and the operator console reads the same figure.
 */
import {
  LEDGER_ROLLING_SWAPS,
  parseRollingMarkout,
  rollingMarkoutJson,
  rollingMean,
  type Logger,
  type RedisClient,
} from '@pmm/core';
import type { LedgerMetrics } from './ledger-metrics';

export class RollingMarkouts {
  private readonly values = new Map<string, number[]>();
  private loading: Promise<void> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
    private readonly metrics: Pick<LedgerMetrics, 'markout60s' | 'markout60sSwaps'>,
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
        let before: number[];
        try {
          before = parseRollingMarkout(json);
        } catch (err) {
          this.log.warn('rolling markout not read', {
            integratorId,
            error: err instanceof Error ? err.message : String(err),
          });
          continue;
        }
        const since = this.values.get(integratorId) ?? [];
        this.values.set(integratorId, [...before, ...since].slice(-LEDGER_ROLLING_SWAPS));
        this.export(integratorId);
      }
    }));
  }

  /** The integrator's series exist from its first swap: no mean yet (NaN), none behind it. */
  track(integratorId: string): void {
    if (this.values.has(integratorId)) return;
    this.values.set(integratorId, []);
    this.export(integratorId);
  }

  /**
   * Adds markouts (basis points) whose horizon has passed; keeps the changed integrators' values in
   * Redis. A value that is not a finite number is left out: it would make the mean one too.
   */
  async add(all: readonly { integratorId: string; bps: number }[]): Promise<void> {
    const markouts = all.filter((m) => Number.isFinite(m.bps));
    if (markouts.length === 0) return;
    const changed = new Set<string>();
    for (const { integratorId, bps } of markouts) {
      const list = this.values.get(integratorId) ?? [];
      list.push(bps);
      if (list.length > LEDGER_ROLLING_SWAPS) list.shift();
      this.values.set(integratorId, list);
      changed.add(integratorId);
    }
    for (const integratorId of changed) this.export(integratorId);
    // After the last run's values are in (a failed load was logged: this run's values stand alone).
    await this.loading?.catch(() => undefined);
    const fields = [...changed].flatMap((id) => [id, rollingMarkoutJson(this.values.get(id)!)]);
    await this.redis.hset(this.key, ...fields);
  }

  private export(integratorId: string): void {
    const list = this.values.get(integratorId)!;
    this.metrics.markout60s.set({ integrator: integratorId }, rollingMean(list) ?? NaN);
    this.metrics.markout60sSwaps.set({ integrator: integratorId }, list.length);
  }
}
