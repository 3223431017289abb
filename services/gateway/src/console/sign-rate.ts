/**
 * Signatures per second on one chain, across every signer replica: the chain's audit stream
 * (`<prefix>:{<id>}:audit`) has one entry per signature any signer returned, and Redis (≥ 7)
 * counts every entry ever added to a stream (`XINFO STREAM` → `entries-added`), trimming
 * aside. The rate is that counter's growth between samples over the last
 * {@link SIGN_RATE_WINDOW_MS}: one O(1) command per chain per sample, whatever the rate.
 * (This replica's `signer_signatures_total` would only count the signer replicas it is scraped
 * with, and the audit stream is the record settlement trusts anyway.)
 */
import type { RedisClient } from '@pmm/core';

/** The span the rate is averaged over. */
export const SIGN_RATE_WINDOW_MS = 10_000;

interface Sample {
  at: number;
  added: number;
}

/** `entries-added` of a stream; 0 when it does not exist yet; null when Redis does not report it (< 7). */
export async function entriesAdded(redis: RedisClient, streamKey: string): Promise<number | null> {
  let info: unknown[];
  try {
    info = (await redis.xinfo('STREAM', streamKey)) as unknown[];
  } catch (err) {
    if (err instanceof Error && /no such key/i.test(err.message)) return 0;
    throw err;
  }
  const i = info.indexOf('entries-added');
  return i >= 0 ? Number(info[i + 1]) : null;
}

export class SignRate {
  private samples: Sample[] = [];

  constructor(
    private readonly redis: RedisClient,
    private readonly streamKey: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Takes a sample and returns signatures per second over the window; null until two samples
   * a second apart exist, or when Redis does not count entries. Rejects when Redis cannot be read.
   */
  async sample(): Promise<number | null> {
    const added = await entriesAdded(this.redis, this.streamKey);
    const at = this.now();
    if (added === null) return null;
    // A stream deleted and written again counts from 0: start over.
    const last = this.samples.at(-1);
    if (last && added < last.added) this.samples = [];
    this.samples.push({ at, added });
    while (this.samples.length > 2 && this.samples[1]!.at <= at - SIGN_RATE_WINDOW_MS) this.samples.shift();
    const first = this.samples[0]!;
    const seconds = (at - first.at) / 1_000;
    return seconds >= 1 ? (added - first.added) / seconds : null;
  }
}
