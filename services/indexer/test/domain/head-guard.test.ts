/**
 * Which heads may become books (domain/head-guard.ts): old heads and heads from the future are
 * refused by the clock, a far jump waits for the next head to confirm it, lower numbers (reorg, restart) are accepted.
 */
import { createHeadGuard } from '../../src/domain/head-guard';

const NOW = 1_800_000_000_000;
const head = (number: number, ageMs = 0) => ({ number, timestamp: Math.floor((NOW - ageMs) / 1000) });

it('behavior: a head older than maxLagMs by the clock is refused, a fresh one accepted', () => {
  const guard = createHeadGuard({ maxLagMs: 10_000, maxLeadMs: 5_000, maxJump: 100 });
  expect(guard.check(head(10, 3_600_000), NOW)).toBe('lagging');
  expect(guard.check(head(10, 11_000), NOW)).toBe('lagging');
  expect(guard.check(head(10, 9_000), NOW)).toBe('accept');
});

it('behavior: a head stamped more than maxLeadMs ahead of the clock is refused; clock errors of a few seconds are not', () => {
  const guard = createHeadGuard({ maxLagMs: 10_000, maxLeadMs: 5_000, maxJump: 100 });
  expect(guard.check(head(10, -300_000), NOW)).toBe('ahead');
  expect(guard.check(head(10, -6_000), NOW)).toBe('ahead');
  expect(guard.check(head(10, -4_000), NOW)).toBe('accept');
  // A refused head is not the last accepted one: the next honest head is no jump above it.
  expect(guard.check(head(1_000_000, -300_000), NOW)).toBe('ahead');
  expect(guard.check(head(11), NOW)).toBe('accept');
});

it('behavior: a jump above maxJump is held until a later head confirms it; the honest chain goes on meanwhile', () => {
  const guard = createHeadGuard({ maxLagMs: 10_000, maxLeadMs: 5_000, maxJump: 100 });
  expect(guard.check(head(1_000), NOW)).toBe('accept');
  expect(guard.check(head(1_100), NOW)).toBe('accept');
  expect(guard.check(head(1_000_000), NOW)).toBe('jump');
  expect(guard.check(head(1_000_000), NOW)).toBe('jump');
  // The honest chain continues below the made-up head.
  expect(guard.check(head(1_101), NOW)).toBe('accept');
  // A real catch-up: the next head above the held one confirms it.
  expect(guard.check(head(5_000), NOW)).toBe('jump');
  expect(guard.check(head(5_001), NOW)).toBe('accept');
});

it('edge: the first head, and lower numbers (reorg, restarted chain), are accepted', () => {
  const guard = createHeadGuard({ maxLagMs: 10_000, maxLeadMs: 5_000, maxJump: 100 });
  expect(guard.check(head(50_000_000), NOW)).toBe('accept');
  expect(guard.check(head(49_999_990), NOW)).toBe('accept');
  expect(guard.check(head(0), NOW)).toBe('accept');
});
