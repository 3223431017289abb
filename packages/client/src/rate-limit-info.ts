/** The gateway's `RateLimit-*` figures of one answer (IETF RateLimit header draft). */
export interface RateLimitInfo {
  /** Requests allowed per window (`RateLimit-Limit`). */
  limit: number;
  /** Requests left in the current window (`RateLimit-Remaining`). */
  remaining: number;
  /** Seconds until the window ends (`RateLimit-Reset`), as of `observedAt`. */
  resetSeconds: number;
  /** When the answer arrived (ms since the epoch). */
  observedAt: number;
}

/** The figures of an answer that carries all three headers, else undefined. */
export function rateLimitFromHeaders(headers: { get(name: string): string | null }): RateLimitInfo | undefined {
  const figures = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'].map((name) => {
    const value = headers.get(name);
    return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : undefined;
  });
  const [limit, remaining, resetSeconds] = figures;
  if (limit === undefined || remaining === undefined || resetSeconds === undefined) return undefined;
  return { limit, remaining, resetSeconds, observedAt: Date.now() };
}
