/**
 * How late this process's event loop is running: how far past its time a timer due every
 * `intervalMs` fired last, or is now, overdue (the loop busy, or the process waiting for a CPU,
 * with requests piling up unread). A request read now has most likely waited about that long
 * since its bytes arrived: time its deadline has lost before any step of ours could see it
 * (docs/decisions/0071-past-capacity-a-fast-no.md). The timer does not keep the process alive.
 */
import { performance } from 'node:perf_hooks';

export class LoopLag {
  private lastMs = 0;
  private due: number;
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs = 20) {
    this.due = performance.now() + intervalMs;
    this.timer = setInterval(() => {
      const now = performance.now();
      this.lastMs = Math.max(0, now - this.due);
      this.due = now + intervalMs;
    }, intervalMs);
    this.timer.unref();
  }

  /**
   * The loop's delay, ms: the timer's at its last firing, or more when it is overdue now (read
   * in the middle of the backlog a stall left, before the timer could fire).
   */
  get ms(): number {
    return Math.max(this.lastMs, performance.now() - this.due);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

let shared: LoopLag | undefined;

/** The process's one lag monitor (made on first use). */
export function processLoopLag(): LoopLag {
  return (shared ??= new LoopLag());
}
