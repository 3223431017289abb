/**
 * Which heads from the node may become books (docs/decisions/0034-a-node-that-lags-lies-or-floods.md).
 *
 * - A head older than `maxLagMs` by this machine's clock is refused (`lagging`): a node behind
 *   a load balancer can serve an old state for minutes, and a book of it would be served as
 *   live. (The book's expiry is bounded by the same limit: store/book-store.ts.)
 * - A head stamped more than `maxLeadMs` AHEAD of the clock is refused (`ahead`): its book would
 *   carry quoter signatures for a time that has not come and a future `blockTime`. An honest
 *   head is ahead only by clock errors (timestamps are whole seconds, taken when the block is
 *   made), so the bound is a few seconds.
 * - A head more than `maxJump` blocks above the last accepted one is held (`jump`) until a
 *   later head confirms it (a higher number, within `maxJump` of the held one). Written at
 *   once, a made-up far block would make the never-backwards rule refuse the honest chain.
 *   A real catch-up (after an outage) costs one block: the next head confirms it.
 * - Lower numbers are accepted: after a reorg or a node restart the chain really is there.
 *
 * Pure: the caller passes the clock. The ledger holds the headers it reads behind the admitted
 * head to the same `ahead` rule ({@link aheadOfClock}, ledger-follower.ts).
 */
import type { HeadRefusal } from '../metrics';

export interface HeadGuardLimits {
  maxLagMs: number;
  maxLeadMs: number;
  maxJump: number;
}

export type HeadVerdict = 'accept' | HeadRefusal;

export interface HeadGuard {
  check(head: { number: number; timestamp: number }, nowMs: number): HeadVerdict;
}

/** True when a block stamped `timestamp` (Unix s) is more than `maxLeadMs` ahead of the clock `nowMs`. */
export function aheadOfClock(timestamp: number, nowMs: number, maxLeadMs: number): boolean {
  return timestamp * 1000 - nowMs > maxLeadMs;
}

export function createHeadGuard(limits: HeadGuardLimits): HeadGuard {
  let accepted: number | undefined;
  let held: number | undefined;
  return {
    check(head, nowMs) {
      if (nowMs - head.timestamp * 1000 > limits.maxLagMs) return 'lagging';
      if (aheadOfClock(head.timestamp, nowMs, limits.maxLeadMs)) return 'ahead';
      if (accepted !== undefined && head.number > accepted + limits.maxJump) {
        const confirmsHeld = held !== undefined && head.number > held && head.number <= held + limits.maxJump;
        if (!confirmsHeld) {
          held = head.number;
          return 'jump';
        }
      }
      accepted = head.number;
      if (held !== undefined && head.number >= held) held = undefined;
      return 'accept';
    },
  };
}
