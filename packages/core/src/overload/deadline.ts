/**
 * A request's deadline, and what each step of it has been taking lately
 * (docs/decisions/0071-past-capacity-a-fast-no.md): a step is not started when what is left of
 * the deadline is less than that step usually takes. Times are `Date.now()` milliseconds, the
 * clock of the process that holds the deadline (a budget crosses a hop, never a time of day).
 */

/** What a step of a request has been taking lately: a moving average of its observed durations. */
export class StepTime {
  private average: number;
  /**
   * `initialMs`: the estimate before the first observation; `weight`: the share of each new
   * observation (0.05: about the last twenty count).
   */
  constructor(
    initialMs: number,
    private readonly weight = 0.05,
  ) {
    this.average = initialMs;
  }

  /** Records one completed step's duration. */
  observe(ms: number): void {
    this.average += this.weight * (ms - this.average);
  }

  /** Times `step` and records how long it took, however it ends. */
  async time<T>(step: Promise<T>): Promise<T> {
    const started = Date.now();
    try {
      return await step;
    } finally {
      this.observe(Date.now() - started);
    }
  }

  /** The current estimate, ms. */
  get ms(): number {
    return this.average;
  }
}

export class Deadline {
  /**
   * `at`: when the answer is due (Date.now() ms); `budgetMs`: the whole budget it was given
   * (what {@link allows} never asks for more than a quarter of).
   */
  constructor(
    readonly at: number,
    readonly budgetMs: number,
  ) {}

  /** A deadline `budgetMs` from now. */
  static after(budgetMs: number, now = Date.now()): Deadline {
    return new Deadline(now + budgetMs, budgetMs);
  }

  /** Milliseconds left (negative once past). */
  left(now = Date.now()): number {
    return this.at - now;
  }

  passed(now = Date.now()): boolean {
    return now >= this.at;
  }

  /**
   * Whether a step that usually takes `step.ms` (or `ms`) may still start: something is left,
   * and at least that much. The estimate counts for at most a quarter of the budget: a step whose
   * estimate grew in a stall (every try refused, no new observation) must not stay refused once
   * the stall is over.
   */
  allows(step: StepTime | number, now = Date.now()): boolean {
    const left = this.left(now);
    const needed = Math.min(typeof step === 'number' ? step : step.ms, this.budgetMs / 4);
    return left > 0 && left >= needed;
  }
}
