/**
 * A signing key that never leaves a PKCS#11 module (an HSM, a cloud HSM, SoftHSM for trials):
 * the same {@link KeySigner} contract as the in-memory signer, with the module doing the
 * secp256k1 arithmetic.
 *
 * - The address comes from the token's public key (CKA_EC_POINT of the public key object
 *   beside the private key), checked to be a secp256k1 point (finding the token, the key and
 *   its point, and opening the sessions: pkcs11-token.ts; this file is the pool of sessions and
 *   what a failure does to it).
 * - A signature is CKM_ECDSA over the 32-byte digest itself (no hashing by the module), which
 *   returns bare r ‖ s; s is made low and v is the recovery id that recovers the token's public
 *   key (secp256k1-signer.ts), so the 65 bytes have the in-memory signer's form and recover to
 *   the same address. They are not the same bytes: a module draws a random nonce, the in-memory
 *   signer RFC 6979's deterministic one.
 * - Sessions are pooled: a PKCS#11 session runs one operation at a time, so one session would
 *   serialise every sign behind the one before. Each sign takes an idle session (or waits for
 *   one), runs C_Sign on libuv's thread pool, and gives the session back.
 * - A key that fails mid-run (device error, lost session, token removed, key deleted) makes
 *   its signs fail fast with {@link KeyUnavailableError} (503 upstream) instead of hanging;
 *   the next sign at least `retryMs` later reconnects (sessions, login, the key found again
 *   and checked to be the same address), and signing resumes when the key is back. The module
 *   is initialised again only when it has failed as a whole or none of its keys signs
 *   (pkcs11-module.ts `recover`): another key's healthy token is never cut off for this one.
 * - A PIN the token refuses for good (wrong, locked, expired) is not tried again: the key stays
 *   down, reported once (`onPinRefused`), until a new PIN arrives through `readPin` or the
 *   process restarts. A token that counts wrong tries is never locked by the retries.
 * - A sign that does not return within `signTimeoutMs` fails, and marks the key down; its
 *   session and thread stay with the module call until it returns, and the key does not call
 *   the module again before then. close() waits for signs at most that long.
 *
 * SECURITY: the PIN stays in this closure (it is needed to log in again after a failure); it is
 * never a property, never in an error message, and the key's private part never leaves the module.
 */
import { createHash } from 'node:crypto';
import { inspect } from 'node:util';
import { KeyUnavailableError, type KeySigner } from '@pmm/protocol';
import { openPkcs11Module, pkcs11Binding, pkcs11Reason, Pkcs11PinError, type Pkcs11Module } from './pkcs11-module';
import { closeQuietly, connect, type Connection } from './pkcs11-token';
import { describePkcs11Key, type Pkcs11KeyRef } from './pkcs11-uri';
import { addressOfPublicKey, toRecoverableSignature } from './secp256k1-signer';

export const DEFAULT_PKCS11_SESSIONS = 4;
/** A sign the module has not answered in this long has failed (a software token answers in about a millisecond, a network HSM in tens). */
export const DEFAULT_PKCS11_SIGN_TIMEOUT_MS = 2_000;
const DEFAULT_RETRY_MS = 1000;

export interface Pkcs11SignerOptions {
  key: Pkcs11KeyRef;
  /** The token's user PIN. */
  pin: string;
  /**
   * Reads the PIN again (its secret file): asked, about every `retryMs`, only while the token
   * refuses the PIN for good; a PIN that differs from the refused one is tried once. Absent:
   * only a restart brings a new PIN.
   */
  readPin?: () => Promise<string | undefined>;
  /** Sessions kept open, the signs that can run at once. Default {@link DEFAULT_PKCS11_SESSIONS}. */
  sessions?: number;
  /** After a failure, how long signs fail fast before the next reconnect attempt, ms. Default 1000. */
  retryMs?: number;
  /** A sign the module has not answered by then fails and marks the key down, ms. Default {@link DEFAULT_PKCS11_SIGN_TIMEOUT_MS}. */
  signTimeoutMs?: number;
  /** Each failure: a sign the module refused or a reconnect that did not succeed (the module's reason, no secret). */
  onFailure?: (reason: string) => void;
  /** The token refused the PIN for good: no login is tried until a new PIN (`readPin`) or a restart. After onFailure. */
  onPinRefused?: (reason: string) => void;
  /** The module signs again after a failure. */
  onRecovered?: () => void;
}

export interface Pkcs11Signer extends KeySigner {
  readonly backend: 'pkcs11';
  /** Always later: the module answers on libuv's thread pool. */
  sign(digest: Uint8Array): Promise<Uint8Array>;
  /**
   * Waits for the signs in flight (each ends within the sign timeout), closes the sessions and
   * releases the module. Idempotent. A sign still inside the module then is left to it: its
   * session is not closed under it, and the module is finalised only when it returns.
   */
  close(): Promise<void>;
  /** The session pool now: sessions open, signing, and signs waiting for one. */
  pool(): { sessions: number; busy: number; waiting: number };
}

/** A sign the module did not answer in time (the call itself goes on in the module). */
class SignTimeoutError extends Error {}

/**
 * Opens the key `opts.key` in its module and checks it (token present, PIN accepted, one
 * secp256k1 private key with a public point). Rejects with a plain Error that names the key
 * (module, token, label/id: no secret) and what is wrong.
 */
export async function openPkcs11Signer(opts: Pkcs11SignerOptions): Promise<Pkcs11Signer> {
  const ref = opts.key;
  const where = describePkcs11Key(ref);
  const sessionCount = opts.sessions ?? DEFAULT_PKCS11_SESSIONS;
  const retryMs = opts.retryMs ?? DEFAULT_RETRY_MS;
  const signTimeoutMs = opts.signTimeoutMs ?? DEFAULT_PKCS11_SIGN_TIMEOUT_MS;
  let pin = opts.pin;
  let module: Pkcs11Module;
  try {
    module = openPkcs11Module(ref.modulePath);
  } catch (err) {
    throw new Error(`${where}: ${err instanceof Error ? err.message : 'cannot load the module'}`);
  }
  const lib = module.lib;
  const ecdsa = { mechanism: pkcs11Binding().CKM_ECDSA };
  let first: Connection;
  try {
    first = connect(module, ref, pin, sessionCount);
  } catch (err) {
    module.release();
    throw new Error(`${where}: ${err instanceof Error ? err.message : 'unknown error'}`);
  }
  const publicKey = first.publicKey;
  const address = addressOfPublicKey(publicKey);

  // Pool state. `generation` changes on every failure and reconnect: a session that comes
  // back from a sign of an older generation is closed, not reused.
  let generation = 0;
  let conn: Connection | undefined = first;
  let idle = [...first.sessions];
  let down: { reason: string; at: number } | undefined;
  /** SHA-256 of the PIN the token refused for good; no login is tried with it again. */
  let refusedPin: string | undefined;
  /** Signs given up on (timed out) whose module call has not returned. */
  let stuck = 0;
  /** Idle sessions of a key with a stuck call: closed only once the module answers again. */
  let parked: { sessions: Buffer[]; epoch: number } | undefined;
  let reconnecting: Promise<void> | undefined;
  let closed = false;
  const waiters: { resolve(session: Buffer): void; reject(err: Error): void }[] = [];
  const inFlight = new Set<Promise<unknown>>();

  const unavailable = (reason: string) => new KeyUnavailableError(`${where}: ${reason}`);
  const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');

  /**
   * Closes a session of this key, unless the module was initialised again since it was opened:
   * its handle is void then, and the module may have given the same number to a new session.
   */
  const closeSession = (session: Buffer, epoch: number) => {
    if (epoch === module.epoch()) closeQuietly(lib, session);
  };

  const markDown = (reason: string) => {
    down = { reason, at: Date.now() };
    module.setUp(false);
  };

  const fail = (gen: number, reason: string) => {
    if (gen !== generation) return; // this failure was already seen
    generation++;
    markDown(reason);
    const epoch = conn?.epoch ?? module.epoch();
    // With a call stuck in the module, no other call of this key goes to it (C_CloseSession
    // could wait on the same lock, on the event loop): the idle sessions wait for the answer.
    if (stuck > 0) parked = { sessions: [...(parked?.sessions ?? []), ...idle], epoch };
    else for (const s of idle) closeSession(s, epoch);
    idle = [];
    conn = undefined;
    for (const w of waiters.splice(0)) w.reject(unavailable(reason));
    opts.onFailure?.(reason);
  };

  /** A PIN to log in with, or undefined while the token refuses the only PIN there is. */
  const usablePin = async (): Promise<string | undefined> => {
    if (refusedPin === undefined) return pin;
    const next = await opts.readPin?.().catch(() => undefined);
    if (next === undefined || next.length === 0 || hashOf(next) === refusedPin) return undefined;
    pin = next;
    refusedPin = undefined;
    return pin;
  };

  /**
   * Connects again: after a failure (`wasDown`), or for a healthy key whose sessions ended
   * because the module was initialised again for another key's sake (not a failure of this key).
   */
  const reconnect = async (wasDown: boolean): Promise<void> => {
    try {
      // Nothing goes to the module while one of this key's calls is stuck in it.
      if (stuck > 0) throw new Error(down?.reason ?? 'a sign is still stuck in the module');
      const loginPin = await usablePin();
      // Refused for good: no login, no new report; the next look at the PIN is `retryMs` later.
      if (loginPin === undefined) return void (down = { reason: down!.reason, at: Date.now() });
      let next: Connection;
      try {
        next = connect(module, ref, loginPin, sessionCount);
      } catch (err) {
        if (err instanceof Pkcs11PinError) throw err;
        markDown(err instanceof Error ? err.message : 'reconnect failed');
        // Initialised again only when the module itself failed or none of its keys signs.
        if (!(await module.recover(conn?.epoch ?? module.epoch(), signTimeoutMs))) throw err;
        next = connect(module, ref, loginPin, sessionCount);
      }
      const nextAddress = addressOfPublicKey(next.publicKey);
      if (nextAddress !== address) {
        for (const s of next.sessions) closeQuietly(lib, s);
        throw new Error(`the token now holds another key under this label/id (${nextAddress}, not ${address})`);
      }
      generation++;
      conn = next;
      idle = [...next.sessions];
      down = undefined;
      module.setUp(true);
      if (wasDown) opts.onRecovered?.();
    } catch (err) {
      const reason = err instanceof Error ? err.message : 'reconnect failed';
      generation++;
      conn = undefined;
      idle = [];
      for (const w of waiters.splice(0)) w.reject(unavailable(reason));
      const reported = down?.reason === reason && stuck > 0; // a stuck call: reported when it timed out
      markDown(reason);
      if (reported) return;
      opts.onFailure?.(reason);
      if (err instanceof Pkcs11PinError) {
        refusedPin = hashOf(pin);
        opts.onPinRefused?.(reason);
      }
    }
  };

  const acquire = async (): Promise<{ session: Buffer; gen: number; key: Buffer; epoch: number }> => {
    for (;;) {
      if (closed) throw unavailable('the signer is closed');
      // The module is being initialised again: wait for it rather than fail.
      await module.settled();
      if (down) {
        if (Date.now() - down.at < retryMs) throw unavailable(down.reason);
        reconnecting ??= reconnect(true).finally(() => (reconnecting = undefined));
        await reconnecting;
        if (down) throw unavailable(down.reason);
        continue;
      }
      if (conn!.epoch !== module.epoch()) {
        // Initialised again for another key's sake: this key's sessions ended with it.
        reconnecting ??= reconnect(false).finally(() => (reconnecting = undefined));
        await reconnecting;
        continue;
      }
      const gen = generation;
      const { key, epoch } = conn!;
      const session = idle.pop() ?? (await new Promise<Buffer>((resolve, reject) => waiters.push({ resolve, reject })));
      // Checked after every wait: a session of another generation or of the module's previous
      // initialisation is not used.
      if (gen !== generation || epoch !== module.epoch()) {
        closeSession(session, epoch);
        continue;
      }
      return { session, gen, key, epoch };
    }
  };

  const release = (session: Buffer, gen: number, epoch: number) => {
    if (closed || gen !== generation) return closeSession(session, epoch);
    const waiter = waiters.shift();
    if (waiter) waiter.resolve(session);
    else idle.push(session);
  };

  /** The module's answer, or a rejection once `signTimeoutMs` pass (the call itself goes on). */
  const answered = (call: Promise<Buffer>, session: Buffer, epoch: number): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        stuck++;
        reject(new SignTimeoutError(`the module did not answer a sign within ${signTimeoutMs} ms`));
      }, signTimeoutMs);
      call.then(
        (rs) => {
          clearTimeout(timer);
          if (late) return lateAnswer(session, epoch);
          resolve(rs);
        },
        (err: unknown) => {
          clearTimeout(timer);
          if (late) return lateAnswer(session, epoch);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });

  /** A call given up on has returned: its session (and the parked ones) can be closed now. */
  const lateAnswer = (session: Buffer, epoch: number) => {
    stuck--;
    closeSession(session, epoch);
    if (stuck > 0 || !parked) return;
    for (const s of parked.sessions) closeSession(s, parked.epoch);
    parked = undefined;
  };

  const signOnce = async (digest: Uint8Array): Promise<Uint8Array> => {
    if (!(digest instanceof Uint8Array) || digest.length !== 32) throw new Error('sign: digest must be 32 bytes');
    const { session, gen, key, epoch } = await acquire();
    let rs: Buffer;
    try {
      lib.C_SignInit(session, ecdsa, key);
      rs = await answered(
        module.track(lib.C_SignAsync(session, Buffer.from(digest), Buffer.alloc(72))),
        session,
        epoch,
      );
    } catch (err) {
      // A timed-out call still holds its session: lateAnswer closes it when the module answers.
      if (!(err instanceof SignTimeoutError)) closeSession(session, epoch);
      const reason = pkcs11Reason(err);
      fail(gen, reason);
      throw unavailable(reason);
    }
    release(session, gen, epoch);
    try {
      return toRecoverableSignature(digest, rs, publicKey);
    } catch (err) {
      // The module signed, but not with the key whose address we serve: find the key again.
      const reason = err instanceof Error ? err.message : 'bad signature';
      fail(gen, reason);
      throw unavailable(reason);
    }
  };

  const sign = (digest: Uint8Array): Promise<Uint8Array> => {
    const p = signOnce(digest);
    inFlight.add(p);
    void p.catch(() => undefined).finally(() => inFlight.delete(p));
    return p;
  };

  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    for (const w of waiters.splice(0)) w.reject(unavailable('the signer is closed'));
    // Each sign ends within the sign timeout; the bound holds even for a sign held up elsewhere.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...inFlight]),
      new Promise((resolve) => (timer = setTimeout(resolve, signTimeoutMs))),
    ]);
    clearTimeout(timer);
    if (stuck === 0) for (const s of idle) closeSession(s, conn?.epoch ?? module.epoch());
    idle = [];
    module.release();
  };

  const pool = () => {
    const sessions = conn ? conn.sessions.length : 0;
    return { sessions, busy: sessions - idle.length, waiting: waiters.length };
  };
  const describe = { address, backend: 'pkcs11' as const, key: where };
  const signer = {
    address,
    backend: 'pkcs11' as const,
    sign,
    close,
    pool,
    toJSON: () => describe,
    toString: () => `Pkcs11Signer(${address}, ${where})`,
    [inspect.custom]: () => `Pkcs11Signer { address: '${address}', key: '${where}' }`,
  };
  for (const hidden of ['toJSON', 'toString', 'close', 'pool', inspect.custom])
    Object.defineProperty(signer, hidden, { enumerable: false });
  return Object.freeze(signer);
}
