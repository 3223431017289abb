/**
 * The limits that trip on what executes (and what reverts), run by each chain's ledger
 * (docs/decisions/0068-limits-on-executed-swaps-in-each-chains-ledger-after-each-block.md):
 * after each committed block, the window (limit-window.ts) takes the block's
 * swaps, its reverted calls, the firm signatures whose window has passed (judged by the ledger, deadline-fates.ts) and
 * the markouts whose horizon has passed (pending-markouts.ts), and each limit broken in
 * a scope not halted yet halts exactly that scope: a trip in the ledger's own trips hash (core's
 * halt-store.ts HaltStore.trip), under the durable-write rule, with the trip (limit, value,
 * threshold) in the record: `risk status` and `risk history` show it, every gateway and signer
 * obeys it within a second. Only an operator resumes.
 *
 * The window restarts at a scope's resume: the resumes come from the halts' log (read whole at the
 * first evaluation, then only what is new), so a ledger restarted after a resume does not trip
 * again on the swaps before it. At the first evaluation the window is also filled from the ledger
 * in Redis (the swaps of the last window), so a restart forgets nothing either.
 *
 * A trip that cannot be written (Redis refuses, the write is not confirmed durable) is counted,
 * logged, and tried again at the next block for as long as the limit stays broken.
 *
 * The log also says which resumes lifted a trip, and of which limit: the revert limit holds a
 * scope to its lower re-arm level for a window after such a resume (limit-window.ts).
 */
import {
  DurableWrites,
  HaltStore,
  haltScopeName,
  ledgerAuthor,
  parseLedgerEntry,
  parseLedgerRevert,
  type HaltScope,
  type LedgerEntry,
  type LedgerRevert,
  type Logger,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';
import { outageLog } from '../outage-log';
import type { LimitConfig } from './limit-settings';
import { recordsSince, type DeadlineFate } from './deadline-fates';
import { LimitWindow, type Breach, type LimitName } from './limit-window';
import type { LedgerMetrics } from './ledger-metrics';
import { PendingMarkouts, type MidHistory } from './pending-markouts';

export interface LimitsDeps {
  chainId: number;
  config: LimitConfig;
  redis: RedisClient;
  keys: RedisKeys;
  durability: DurableWrites;
  history: MidHistory;
  metrics: LedgerMetrics;
  logger: Logger;
  /** Wall clock, ms (the window loaded at a restart ends now). */
  now?: () => number;
}

export interface Limits {
  /**
   * After each committed block: its number, swaps, time (Unix s), reverted calls and the signatures
   * judged at it (deadline-fates.ts). Evaluates in the background.
   */
  onCommit(
    block: number,
    entries: readonly LedgerEntry[],
    blockTime: number,
    reverts?: readonly LedgerRevert[],
    fates?: readonly DeadlineFate[],
  ): void;
  /** After a reorg: what blocks above `to` held is forgotten. */
  onReorg(to: number): void;
  /** Resolves once no evaluation is under way (tests; the ledger's stop). */
  idle(): Promise<void>;
}

/** True when at least one limit is set. */
export function anyLimit(config: LimitConfig): boolean {
  return Boolean(
    config.integratorNotional ||
    config.pairNotional ||
    config.markout ||
    config.referenceMarkout ||
    config.belowQuote ||
    config.reverts ||
    config.unused,
  );
}

export function startLimits(deps: LimitsDeps): Limits {
  const { config, redis, keys, chainId, metrics, logger: log } = deps;
  const now = deps.now ?? Date.now;
  const window = new LimitWindow(config, chainId);
  const store = new HaltStore(redis, keys);
  // Both floors share their horizon: one wait per swap gives both markouts.
  const floor = config.markout ?? config.referenceMarkout;
  const markouts = floor
    ? new PendingMarkouts(floor.horizon, deps.history, (e, m) => window.addMarkout(e, m), config.windowSeconds)
    : undefined;
  /** Last resume of each scope (ms), by scope name; the log's last entry read. */
  const resumes = new Map<string, number>();
  /** By scope name: the limit of its trip the log holds with no resume after it yet, and the last resume that lifted one. */
  const trippedBy = new Map<string, string>();
  const lifted = new Map<string, { limit: string; at: number }>();
  let logCursor: string | undefined;
  let loaded = false;
  let latest = { block: 0, time: 0 };
  const failures = outageLog(log, 'limits not evaluated (tried again at the next block)');
  let running: Promise<void> | undefined;
  let again = false;

  const add = (entries: readonly LedgerEntry[]) => {
    window.add(entries);
    for (const e of entries) if (e.integratorId) markouts?.add(e);
  };

  /**
   * The swaps (and, for the revert limit, the reverted calls) of the last window. The unused
   * limit's firm signatures of the window come from the ledger's judging, which reads the trail
   * from before the window at its start (ledger.ts).
   */
  const load = async () => {
    const cutoff = now() / 1000 - config.windowSeconds;
    const swaps = await recordsSince(redis, keys.ledger(chainId), parseLedgerEntry, cutoff);
    const reverts = config.reverts
      ? await recordsSince(redis, keys.ledgerReverts(chainId), parseLedgerRevert, cutoff)
      : [];
    add(swaps);
    window.addReverts(reverts);
    loaded = true;
    log.info('limits: window loaded from the ledger', {
      swaps: swaps.length,
      reverts: reverts.length,
      windowSeconds: config.windowSeconds,
    });
  };

  const readResumes = async () => {
    const { events, malformed, lastId } = await store.history(logCursor);
    logCursor = lastId ?? logCursor;
    if (malformed > 0) {
      metrics.haltLogMalformed.inc(malformed);
      log.error("entries of the halts' log do not parse: skipped", { malformed });
    }
    for (const event of events) {
      const name = haltScopeName(event.scope);
      // A resume logs the trips it lifts (as halts with their trip) just before itself.
      if (event.action === 'halt') {
        if (event.trip) trippedBy.set(name, event.trip.limit);
        continue;
      }
      resumes.set(name, Math.max(resumes.get(name) ?? -Infinity, event.at));
      const limit = trippedBy.get(name);
      if (limit !== undefined) lifted.set(name, { limit, at: event.at });
      trippedBy.delete(name);
    }
  };
  const liftedTrip = (scope: HaltScope, limit: LimitName) => {
    const last = lifted.get(haltScopeName(scope));
    return last?.limit === limit ? last.at : -Infinity;
  };

  const trip = async (breach: Breach, at: number) => {
    // The halt goes on the connection the durability confirms (its WAIT counts that connection's
    // writes), which is not the ledger's own.
    const outcome = await deps.durability.run((lane) =>
      new HaltStore(lane, keys).trip(chainId, {
        scope: breach.scope,
        reason: breach.reason,
        by: ledgerAuthor(chainId),
        at,
        trip: { limit: breach.limit, value: breach.value, threshold: breach.threshold },
      }),
    );
    if (!outcome.made) return;
    metrics.limitTrips.inc({ limit: breach.limit });
    log.warn('limit tripped: scope halted', {
      limit: breach.limit,
      scope: haltScopeName(breach.scope),
      value: breach.value,
      threshold: breach.threshold,
      reason: breach.reason,
    });
  };

  const evaluate = async () => {
    const at = latest;
    await evaluateAt(at);
    metrics.limitsBlock.set(at.block);
  };

  const evaluateAt = async ({ time }: { time: number }) => {
    if (!loaded) await load();
    await readResumes();
    await markouts?.settle();
    const breaches = window.breaches(
      time,
      (scope: HaltScope) => resumes.get(haltScopeName(scope)) ?? -Infinity,
      liftedTrip,
    );
    if (breaches.length === 0) return;
    let active;
    try {
      active = await store.active();
    } catch (err) {
      // Evaluated again at the next block, whether or not a swap comes.
      for (const b of breaches) window.touch(b.scope);
      throw err;
    }
    const halted = new Set(active.map((h) => haltScopeName(h.scope)));
    // One trip per scope: the first limit found broken names it (several may be).
    const tripped = new Set<string>();
    for (const breach of breaches) {
      const name = haltScopeName(breach.scope);
      if (halted.has(name) || tripped.has(name)) continue;
      tripped.add(name);
      try {
        await trip(breach, now());
      } catch (err) {
        window.touch(breach.scope);
        metrics.limitTripFailures.inc();
        log.error('limit broken but its halt not written: tried again at the next block', {
          limit: breach.limit,
          scope: name,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  };

  const schedule = () => {
    if (running) {
      again = true;
      return;
    }
    running = evaluate()
      .then(
        () => failures.ok(),
        (err: unknown) => failures.failed(err),
      )
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          schedule();
        }
      });
  };

  return {
    onCommit(block, entries, blockTime, reverts = [], fates = []) {
      add(entries);
      window.addReverts(reverts);
      window.addFirm(fates);
      latest = { block, time: Math.max(latest.time, blockTime) };
      schedule();
    },
    onReorg(to) {
      window.rollback(to);
      markouts?.rollback(to);
    },
    async idle() {
      while (running) await running;
    },
  };
}
