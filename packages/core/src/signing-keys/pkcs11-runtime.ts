/**
 * What a process with keys in a PKCS#11 module sets up around them: the sign timeout setting
 * (one definition for the signer and the indexers) and libuv's thread pool, sized for the
 * sessions.
 *
 * Every sign runs C_Sign on libuv's thread pool, which also runs the process's file reads, DNS
 * lookups (Redis and node reconnects) and some crypto. The pool has 4 threads unless
 * UV_THREADPOOL_SIZE says otherwise when it is first used, so 4 sessions of a module that
 * stops answering could hold every thread. The pool gets a thread for every session of every
 * key plus libuv's 4 for the rest; a sign stuck in the module then holds only its own.
 */
import { settings, type Setting } from '../settings/config';
import { DEFAULT_PKCS11_SIGN_TIMEOUT_MS } from './pkcs11-signer';

/** libuv's own default, kept for file, DNS and crypto work beside the signs. */
const LIBUV_DEFAULT_THREADS = 4;
/** libuv's upper bound. */
const LIBUV_MAX_THREADS = 1024;

export function pkcs11SignTimeoutSetting(): Setting<number> {
  return settings.int(
    'PKCS11_SIGN_TIMEOUT_MS',
    `A sign a PKCS#11 module has not answered within this many ms fails (503) and marks its key down; the key asks the module nothing more until the call returns. Default ${DEFAULT_PKCS11_SIGN_TIMEOUT_MS}.`,
    DEFAULT_PKCS11_SIGN_TIMEOUT_MS,
    [50, 60_000],
  );
}

/**
 * Sizes libuv's thread pool for `sessions` module sessions (all keys together): sets
 * UV_THREADPOOL_SIZE when the environment asks for fewer threads. Only a process's entry point
 * may call it, before anything has used the pool (libuv reads the variable once, when the pool
 * starts; later it changes nothing). Returns the size the pool will have.
 */
export function sizeThreadPool(sessions: number, env: NodeJS.ProcessEnv = process.env): number {
  const given = Number(env.UV_THREADPOOL_SIZE);
  const current = Number.isInteger(given) && given > 0 ? Math.min(given, LIBUV_MAX_THREADS) : LIBUV_DEFAULT_THREADS;
  const needed = Math.min(sessions + LIBUV_DEFAULT_THREADS, LIBUV_MAX_THREADS);
  if (sessions === 0 || current >= needed) return current;
  env.UV_THREADPOOL_SIZE = String(needed);
  return needed;
}
