/**
 * The overload kit (src/overload/; docs/decisions/0071-past-capacity-a-fast-no.md): a deadline
 * and what a step needs of it, the bound on work in flight, the event loop's delay, and the
 * refusals' counters.
 */
import {
  Deadline,
  InFlightLimit,
  LoopLag,
  StepTime,
  createMetrics,
  deadlineRefusal,
  overloadRefusal,
  refusalMetrics,
} from '../../src';

describe('Deadline and StepTime', () => {
  it('behavior: a step starts only while what is left covers what it has been taking', () => {
    const step = new StepTime(20);
    const d = new Deadline(1_000, 400);
    expect(d.left(900)).toBe(100);
    expect(d.allows(step, 979)).toBe(true);
    expect(d.allows(step, 981)).toBe(false);
    expect(d.allows(step, 1_000)).toBe(false);
    expect(d.passed(999)).toBe(false);
    expect(d.passed(1_000)).toBe(true);
  });

  it('behavior: an estimate grown in a stall asks for at most a quarter of the budget, so the stall cannot refuse for ever', () => {
    const step = new StepTime(5);
    for (let i = 0; i < 200; i++) step.observe(2_000);
    expect(step.ms).toBeGreaterThan(1_900);
    const d = new Deadline(1_000, 400);
    expect(d.allows(step, 600)).toBe(true);
    expect(d.allows(step, 901)).toBe(false);
  });

  it('behavior: the estimate moves a twentieth of the way to each observation, and times a promise however it ends', async () => {
    const step = new StepTime(10);
    step.observe(30);
    expect(step.ms).toBeCloseTo(11, 10);
    // The clock is the test's: a worker descheduled between the start and the rejection (seen on a
    // loaded machine: 27 ms) would move the estimate up instead.
    const now = jest.spyOn(Date, 'now').mockReturnValueOnce(5_000).mockReturnValueOnce(5_031);
    try {
      await expect(step.time(Promise.reject(new Error('no')))).rejects.toThrow('no');
    } finally {
      now.mockRestore();
    }
    expect(step.ms).toBeCloseTo(11 + 0.05 * (31 - 11), 10);
  });
});

describe('InFlightLimit', () => {
  it('behavior: a slot at once or none; each release once', () => {
    const limit = new InFlightLimit(2);
    const a = limit.releaser();
    expect([limit.tryAcquire(), limit.tryAcquire(), limit.tryAcquire()]).toEqual([true, true, false]);
    expect(limit.inFlight).toBe(2);
    a();
    a();
    expect(limit.inFlight).toBe(1);
    expect(limit.tryAcquire()).toBe(true);
    expect(() => new InFlightLimit(0)).toThrow(RangeError);
  });
});

describe('LoopLag', () => {
  it('behavior: a loop kept busy reads as late, at once, before its timer could fire', () => {
    const lag = new LoopLag(10);
    try {
      const until = Date.now() + 120;
      while (Date.now() < until) {
        // busy: nothing else runs
      }
      expect(lag.ms).toBeGreaterThan(90);
    } finally {
      lag.stop();
    }
  });
});

describe('refusalMetrics', () => {
  it('behavior: every reason from 0, each refusal counted by kind and reason; the bound and the load exposed', async () => {
    const metrics = createMetrics('overload-test', { defaultMetrics: false });
    const limit = new InFlightLimit(3);
    const counted = refusalMetrics(metrics, {
      service: 'gateway',
      reasons: { overload: ['in_flight'], deadline: ['key', 'signer'] },
      limit,
    });
    limit.tryAcquire();
    counted.refused(overloadRefusal('in_flight'));
    counted.refused(deadlineRefusal('signer'));
    counted.refused(deadlineRefusal('signer'));
    const text = await metrics.registry.metrics();
    const value = (series: string) => Number(new RegExp(`^${series}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('gateway_overload_refusals_total')).toBe(1);
    expect(text).toMatch(/^gateway_deadline_refusals_total\{reason="key"[^}]*\} 0$/m);
    expect(text).toMatch(/^gateway_deadline_refusals_total\{reason="signer"[^}]*\} 2$/m);
    expect(value('gateway_sign_in_flight_limit')).toBe(3);
    expect(value('gateway_sign_in_flight')).toBe(1);
  });

  it('behavior: both refusals are 503 SERVICE_UNAVAILABLE with Retry-After', () => {
    for (const err of [overloadRefusal('in_flight'), deadlineRefusal('record')]) {
      expect([err.status, err.code, err.headers['Retry-After']]).toEqual([503, 'SERVICE_UNAVAILABLE', '1']);
    }
  });
});
