/**
 * A value now or later. The hot path stays synchronous while everything it needs is cached
 * (no promise, no microtask per step); it becomes asynchronous only when Redis is read.
 */
export type MaybePromise<T> = T | Promise<T>;

/** Applies `fn` to a value now, or when the promise settles. Errors thrown by `fn` propagate the same way. */
export function andThen<T, U>(value: MaybePromise<T>, fn: (v: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}

/** Runs `fn` and turns a synchronous throw into the same shape as its result would have. */
export function attempt<T>(fn: () => MaybePromise<T>, onError: (err: unknown) => void, onValue: (v: T) => void): void {
  let result: MaybePromise<T>;
  try {
    result = fn();
  } catch (err) {
    return onError(err);
  }
  if (result instanceof Promise) result.then(onValue, onError);
  else onValue(result);
}
