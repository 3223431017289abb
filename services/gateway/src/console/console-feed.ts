/**
 * The operator console's event stream (`GET /console/events` on the operator port): one
 * Server-Sent Events connection per viewer carrying every served chain and the status.
 *
 * - `book`: a chain's new book; `data` is the stored `GET /v2/price` body (it names its chain).
 * - `unavailable`: `{"chainId":N}`: the chain's book went (the page drops its chart).
 * - `status`: the snapshot of console-status.ts, every {@link STATUS_INTERVAL_MS}.
 *
 * Books come from the price stream's hub (stream/stream-hub.ts) as ONE observer per chain for
 * the whole gateway, whatever the number of viewers: no Redis subscription or read of its own.
 * The status is taken once per interval for all viewers, and only while there are viewers. Each
 * event's bytes are built once and shared (stream-writer.ts). A viewer whose socket is full keeps
 * only the newest event of each kind and chain until `drain`, so a stalled page costs nothing
 * that grows. A new viewer gets the latest of each at once.
 */
import type { ServerResponse } from 'node:http';
import type { StreamHub } from '../stream/stream-hub';
import type { BookEntry } from '../price/book-cache';
import { sseEvent } from '../stream/sse-event';
import { StreamPayload, streamWriter, type StreamWriter } from '../stream/stream-writer';
import type { ConsoleStatus } from './console-status';

/** How often the status is sent (also what keeps an idle stream open through proxies). */
export const STATUS_INTERVAL_MS = 2_000;

interface Viewer {
  res: ServerResponse;
  writer: StreamWriter;
  blocked: boolean;
  /** While blocked: the newest event per slot (`chain:<id>`, `status`), in arrival order. */
  pending: Map<string, StreamPayload>;
}

export interface ConsoleFeedOptions {
  hub: StreamHub;
  chains: readonly number[];
  status: () => Promise<ConsoleStatus>;
  intervalMs?: number;
}

export class ConsoleFeed {
  private readonly viewers = new Set<Viewer>();
  /** The latest event per slot, sent to every new viewer. */
  private readonly latest = new Map<string, StreamPayload>();
  private stopObserving: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private statusRunning = false;
  private closed = false;

  constructor(private readonly opts: ConsoleFeedOptions) {}

  /** Open console streams. */
  get size(): number {
    return this.viewers.size;
  }

  /** Adds a viewer whose headers are sent; it gets the latest events at once, then every new one. */
  attach(res: ServerResponse): void {
    if (this.closed) {
      res.end();
      return;
    }
    const viewer: Viewer = { res, writer: streamWriter(res), blocked: false, pending: new Map() };
    this.viewers.add(viewer);
    res.once('close', () => {
      this.viewers.delete(viewer);
      if (this.viewers.size === 0) this.stop();
    });
    for (const [slot, payload] of this.latest) this.send(viewer, slot, payload);
    if (this.viewers.size === 1) this.start();
  }

  /** Ends every console stream (graceful shutdown) and refuses new ones. */
  close(): void {
    this.closed = true;
    for (const viewer of this.viewers) viewer.res.end();
    this.stop();
  }

  private start(): void {
    this.stopObserving = this.opts.chains.map((chainId) =>
      this.opts.hub.observe(chainId, (entry) => this.chainEvent(chainId, entry)),
    );
    this.tick();
    this.timer = setInterval(() => this.tick(), this.opts.intervalMs ?? STATUS_INTERVAL_MS);
    this.timer.unref();
  }

  /** Nobody watches: stop listening, and forget what was seen (it would be stale for the next viewer). */
  private stop(): void {
    for (const stop of this.stopObserving) stop();
    this.stopObserving = [];
    clearInterval(this.timer);
    this.timer = undefined;
    this.latest.clear();
  }

  private chainEvent(chainId: number, entry: BookEntry | null): void {
    const payload = entry
      ? new StreamPayload(sseEvent('book', entry.v2))
      : new StreamPayload(sseEvent('unavailable', JSON.stringify({ chainId })));
    this.publish(`chain:${chainId}`, payload);
  }

  private tick(): void {
    // A slow snapshot (a check waiting out its 1 s timeout) is not started twice.
    if (this.statusRunning) return;
    this.statusRunning = true;
    this.opts
      .status()
      .then(
        (status) => {
          if (this.viewers.size > 0)
            this.publish('status', new StreamPayload(sseEvent('status', JSON.stringify(status))));
        },
        () => undefined, // every part of a snapshot reports its own failure; nothing else can reject
      )
      .finally(() => (this.statusRunning = false));
  }

  private publish(slot: string, payload: StreamPayload): void {
    this.latest.set(slot, payload);
    for (const viewer of this.viewers) this.send(viewer, slot, payload);
  }

  private send(viewer: Viewer, slot: string, payload: StreamPayload): void {
    if (viewer.res.writableEnded || viewer.res.destroyed) return;
    if (viewer.blocked) {
      viewer.pending.delete(slot);
      viewer.pending.set(slot, payload);
      return;
    }
    if (viewer.writer.write(payload)) return;
    viewer.blocked = true;
    viewer.writer.onceDrain(() => {
      viewer.blocked = false;
      const pending = [...viewer.pending];
      viewer.pending.clear();
      for (const [s, p] of pending) this.send(viewer, s, p);
    });
  }
}
