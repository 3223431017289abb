/**
 * One API call with the SDK's failure policy:
 * - 429 and 503 are retried (bounded attempts; not 503 HALTED, which lasts until the operator
 *   lifts it), after the server's `Retry-After` when it sends
 *   one, else after a jittered, doubling backoff. Network failures are retried the same way.
 *   Every other answer is final. Signing is retried too: a signature is a quote, asking again
 *   only gets a fresh one, and nothing is spent until the integrator sends a transaction.
 * - One deadline per call (`timeoutMs`) covers every attempt and every wait; a wait that would
 *   pass it is not started (the last error is thrown at once).
 * - The caller's `AbortSignal` stops the attempt in flight and any wait.
 */
import { PmmApiError, apiErrorFromText } from './pmm-api-error';
import { rateLimitFromHeaders, type RateLimitInfo } from './rate-limit-info';

export interface RetryOptions {
  /** Attempts in all, the first included (default 3; 1 disables retries). */
  attempts?: number;
  /** First backoff when the server names no wait, ms (default 200); doubles per attempt, ± 50 % jitter. */
  minDelayMs?: number;
  /** Longest backoff, ms (default 5 000). A `Retry-After` is honoured whatever its length, within the deadline. */
  maxDelayMs?: number;
}

export interface CallOptions {
  /** Deadline of the whole call, retries included, ms (default: the client's, 10 000). */
  timeoutMs?: number;
  /** Aborts the call (the request in flight and any wait before a retry). */
  signal?: AbortSignal;
  /** Overrides the client's retry policy for this call. */
  retry?: RetryOptions;
}

export interface HttpCall {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** Statuses worth asking again: over the rate limit, or the service briefly unavailable. */
const RETRIED_STATUSES = new Set([429, 503]);

/** Sleeps `ms` unless `signal` aborts first (then rejects with the signal's reason). */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Sends `call`, retrying per `retry`, and returns the parsed JSON of the 2xx answer. Calls
 * `onRateLimit` with the figures of every answer that carries them.
 */
export async function requestJson<T>(
  call: HttpCall,
  options: { timeoutMs: number; signal?: AbortSignal; retry: Required<RetryOptions> },
  onRateLimit: (info: RateLimitInfo) => void,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  // One controller for the call: aborted by the caller's signal or by the deadline.
  const controller = new AbortController();
  const timeout = new PmmApiError(0, 'TIMEOUT', `no answer within ${options.timeoutMs} ms`);
  const timer = setTimeout(() => controller.abort(timeout), options.timeoutMs);
  const onCallerAbort = () => controller.abort(new PmmApiError(0, 'ABORTED', 'the call was aborted'));
  if (options.signal?.aborted) onCallerAbort();
  else options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  try {
    for (let attempt = 1; ; attempt++) {
      // Aborts (caller or deadline) reject here with the controller's reason.
      const error = await attemptOnce<T>(call, controller.signal, onRateLimit);
      if (!(error instanceof PmmApiError)) return error.value;
      // HALTED is a 503 that no retry within a call can fix: the operator lifts a halt, not time.
      const retryable =
        error.code === 'NETWORK_ERROR' || (RETRIED_STATUSES.has(error.status) && error.code !== 'HALTED');
      if (!retryable || attempt >= options.retry.attempts) throw error;
      const backoff = Math.min(options.retry.maxDelayMs, options.retry.minDelayMs * 2 ** (attempt - 1));
      const delay = error.retryAfterMs ?? backoff * (0.5 + Math.random());
      if (Date.now() + delay >= deadline) throw error;
      await wait(delay, controller.signal);
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onCallerAbort);
  }
}

/** One request: the value of a 2xx answer, or the PmmApiError of anything else (thrown only on abort). */
async function attemptOnce<T>(
  call: HttpCall,
  signal: AbortSignal,
  onRateLimit: (info: RateLimitInfo) => void,
): Promise<{ value: T } | PmmApiError> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(call.url, { method: call.method, headers: call.headers, body: call.body, signal });
    text = await res.text();
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    return new PmmApiError(0, 'NETWORK_ERROR', err instanceof Error ? err.message : String(err));
  }
  const rateLimit = rateLimitFromHeaders(res.headers);
  if (rateLimit) onRateLimit(rateLimit);
  if (!res.ok) return apiErrorFromText(res, text);
  try {
    return { value: JSON.parse(text) as T };
  } catch {
    return new PmmApiError(res.status, 'BAD_RESPONSE', `non-JSON answer (HTTP ${res.status})`);
  }
}
