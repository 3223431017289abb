/**
 * `Retry-After` (RFC 9110 §10.2.3): either delay-seconds or an HTTP-date. Returns the wait in
 * ms (never negative), or undefined when the header is absent or unreadable.
 */
export function retryAfterMs(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value == null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1_000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
