import { backoffDelay } from '../../src/domain/backoff';

describe('backoffDelay', () => {
  const bounds = { minMs: 100, maxMs: 5_000 };

  it('behavior: doubles from minMs and is capped at maxMs (random at its extremes)', () => {
    const lo = (a: number) => backoffDelay(a, bounds, () => 0);
    const hi = (a: number) => backoffDelay(a, bounds, () => 0.999999);
    expect([0, 1, 2, 3, 4, 5, 6, 7].map(hi)).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    expect([0, 1, 2, 6, 100, 5000].map(lo)).toEqual([50, 100, 200, 2500, 2500, 2500]);
  });

  it('behavior: never below minMs/2 nor above maxMs, for any attempt and random value', () => {
    for (let attempt = 0; attempt < 2000; attempt += 37) {
      for (const r of [0, 0.3, 0.7, 0.999]) {
        const d = backoffDelay(attempt, bounds, () => r);
        expect(d).toBeGreaterThanOrEqual(50);
        expect(d).toBeLessThanOrEqual(5_000);
      }
    }
  });

  it('error: rejects a negative attempt and inverted bounds', () => {
    expect(() => backoffDelay(-1, bounds)).toThrow(RangeError);
    expect(() => backoffDelay(0, { minMs: 10, maxMs: 5 })).toThrow(RangeError);
    expect(() => backoffDelay(0, { minMs: 0, maxMs: 5 })).toThrow(RangeError);
  });
});
