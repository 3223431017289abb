/**
 * Which heads may become books (domain/head-guard.ts): old heads are refused by the clock, a
 * far jump waits for the next head to confirm it, lower numbers (reorg, restart) are accepted.
 */
import { createHeadGuard } from '../src/domain/head-guard';

const NOW = 1_800_000_000_000;
const head = (number: number, ageMs = 0) => ({ number, timestamp: Math.floor((NOW - ageMs) / 1000) });

it('behavior: a head older than maxLagMs by the clock is refused, a fresh one accepted', () => {
  const guard = createHeadGuard({ maxLagMs: 10_000, maxJump: 100 });
  expect(guard.check(head(10, 3_600_000), NOW)).toBe('lagging');
  expect(guard.check(head(10, 11_000), NOW)).toBe('lagging');
  expect(guard.check(head(10, 9_000), NOW)).toBe('accept');
});

it('behavior: a jump above maxJump is held until a later head confirms it; the honest chain goes on meanwhile', () => {
  const guard = createHeadGuard({ maxLagMs: 10_000, maxJump: 100 });
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
  const guard = createHeadGuard({ maxLagMs: 10_000, maxJump: 100 });
  expect(guard.check(head(50_000_000), NOW)).toBe('accept');
  expect(guard.check(head(49_999_990), NOW)).toBe('accept');
  expect(guard.check(head(0), NOW)).toBe('accept');
});
