/**
 * A fixed bound on the work in flight (docs/decisions/0071-past-capacity-a-fast-no.md): a slot
 * is taken at once or not at all. Nothing waits for one: what comes past the bound is refused
 * by the caller, at once, rather than queued behind work that is already late.
 */
export class InFlightLimit {
  private count = 0;

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`in-flight limit: ${limit} is not a positive integer`);
  }

  /** Work in flight now. */
  get inFlight(): number {
    return this.count;
  }

  /** Takes a slot; false when every slot is taken (nothing was taken then). */
  tryAcquire(): boolean {
    if (this.count >= this.limit) return false;
    this.count++;
    return true;
  }

  /** Gives a slot back (once per slot taken). */
  release(): void {
    if (this.count > 0) this.count--;
  }

  /** A release that works only once, for a slot taken just now: several ends of one piece of work may each call it. */
  releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.release();
    };
  }
}
