/**
 * One loaded PKCS#11 module per shared library path, shared by every key that lives in it:
 * a module is initialised once per process (a second C_Initialize is an error, and two
 * `PKCS11` objects over one library share its state anyway), and finalised when the last key
 * using it closes.
 *
 * Initialised with CKF_OS_LOCKING_OK: signs run on libuv's thread pool (one session per
 * concurrent sign), and a module initialised without it may assume a single-threaded caller.
 *
 * Initialised again (which ends every session of every key in it) only when the module itself
 * fails or none of its keys signs, and only once no call of it runs (`recover`); never finalised
 * under a running call. The PKCS#11 return values that make a PIN final are here too (login).
 */
import { createHash } from 'node:crypto';
import type * as Pkcs11js from 'pkcs11js';

/**
 * The module's user PIN was refused for good: wrong (`CKR_PIN_INCORRECT`), locked, expired, or
 * not a PIN the token can take (`CKR_PIN_INVALID`, `CKR_PIN_LEN_RANGE`), or it differs from
 * the PIN this process is logged in to the token with. Trying the same PIN again cannot succeed
 * and, where the module counts wrong tries, only brings the lock nearer.
 */
export class Pkcs11PinError extends Error {
  override readonly name = 'Pkcs11PinError';
}

/** Return values of C_Login that a retry with the same PIN cannot change. */
const PIN_REFUSALS: Record<string, string> = {
  CKR_PIN_INCORRECT: 'the token refused the PIN (CKR_PIN_INCORRECT)',
  CKR_PIN_LOCKED: 'the PIN is locked after too many wrong tries (CKR_PIN_LOCKED): the security officer must reset it',
  CKR_PIN_EXPIRED: 'the PIN has expired (CKR_PIN_EXPIRED): set a new one on the token',
  CKR_PIN_INVALID: 'the PIN has characters the token does not take (CKR_PIN_INVALID)',
  CKR_PIN_LEN_RANGE: 'the PIN is too long or too short for the token (CKR_PIN_LEN_RANGE)',
};

export interface Pkcs11Module {
  readonly lib: Pkcs11js.PKCS11;
  readonly path: string;
  /**
   * Logs the application in to the token of `slot` as its user. Login is per token and process,
   * not per session: the second key of a token finds it done, so its PIN is compared with the
   * one that logged in (a wrong PIN must not pass because another key's was right). Throws
   * {@link Pkcs11PinError} when the PIN is refused for good, a plain Error otherwise; never
   * with the PIN in it.
   */
  login(slot: Buffer, session: Buffer, pin: string): void;
  /** Counts the module's initialisations: a key's sessions belong to the epoch they were opened in. */
  epoch(): number;
  /** Tells the module whether this key signs now: a module all of whose keys are down may be initialised again. */
  setUp(up: boolean): void;
  /**
   * Runs one call of the module on libuv's thread pool (a sign), counted until it returns, even
   * after its caller gave up on it: the module is never finalised under a running call.
   */
  track<T>(call: Promise<T>): Promise<T>;
  /** Resolves at once, or when an initialisation under way ends: a sign waits for it rather than fail. */
  settled(): Promise<void>;
  /**
   * Called by a key whose reconnect failed: finalises and initialises the module again when the
   * module itself has failed, never for one token's, key's or PIN's problem while another key
   * of the module signs (see {@link moduleFailure}); first waits (up to `drainMs`) for every
   * module call in flight to return, and holds new signs of every key until it is done. At
   * most once every few seconds, and once per `seenEpoch` however many keys ask. Resolves true
   * when the module was initialised again since `seenEpoch` (reconnect now), false when not.
   */
  recover(seenEpoch: number, drainMs: number): Promise<boolean>;
  /** Drops this user of the module; the last one finalises it (once no call of it runs). Idempotent. */
  release(): void;
}

interface User {
  up: boolean;
}

interface Loaded {
  lib: Pkcs11js.PKCS11;
  users: Set<User>;
  /** SHA-256 of the PIN that logged in, by slot (hex of its handle); the PIN itself is not kept here. */
  pins: Map<string, string>;
  epoch: number;
  /** When it was last initialised again (Unix ms). */
  reinitializedAt: number;
  /** Module calls running on the thread pool (signs), those given up on included. */
  calls: number;
  /** Woken when `calls` drops to 0. */
  idle: (() => void)[];
  /** The initialisation under way, if any. */
  reinitializing: Promise<boolean> | undefined;
  /** Released by its last user while a call still ran: finalised when the call returns, unless a user comes back. */
  orphaned: boolean;
}

/**
 * Least time between two initialisations of one module: a module that keeps failing is not
 * finalised and initialised in a loop.
 */
const REINITIALIZE_MIN_MS = 5_000;

const loaded = new Map<string, Loaded>();
let binding: typeof Pkcs11js | undefined;

/**
 * The pkcs11js binding, loaded on first use: a process without a key in a module (the gateway,
 * the operator commands, a signer with keys in files) never loads its native code.
 */
export function pkcs11Binding(): typeof Pkcs11js {
  binding ??= require('pkcs11js') as typeof Pkcs11js;
  return binding;
}

/** True for a PKCS#11 error with this CKR_ name (pkcs11js puts the name in the message). */
export function isPkcs11Error(err: unknown, name?: string): err is Pkcs11js.Pkcs11Error {
  if (!(err instanceof Error) || typeof (err as { code?: unknown }).code !== 'number') return false;
  return name === undefined ? err.message.startsWith('CKR_') : err.message.startsWith(name);
}

/** A module's error in a few words: the CKR_ name only (never arguments, never a PIN). */
export function pkcs11Reason(err: unknown): string {
  if (isPkcs11Error(err)) return err.message.split(/[\s:]/)[0]!;
  return err instanceof Error ? err.message : 'unknown error';
}

/**
 * Why the module as a whole has failed, or undefined when it answers: the calls that name no
 * token, slot or session (C_GetInfo, C_GetSlotList) return an error. `CKR_CRYPTOKI_NOT_INITIALIZED`
 * (the module lost its initialisation), `CKR_DEVICE_ERROR`, `CKR_GENERAL_ERROR`,
 * `CKR_FUNCTION_FAILED` or `CKR_HOST_MEMORY` there are the module's own failure; the same
 * values from a call on one token's slot, session or key are that token's.
 */
export function moduleFailure(lib: Pkcs11js.PKCS11): string | undefined {
  try {
    lib.C_GetInfo();
    lib.C_GetSlotList(false);
    return undefined;
  } catch (err) {
    return pkcs11Reason(err);
  }
}

function initialize(lib: Pkcs11js.PKCS11): void {
  lib.C_Initialize({ flags: pkcs11Binding().CKF_OS_LOCKING_OK });
}

function finalize(lib: Pkcs11js.PKCS11): void {
  try {
    lib.C_Finalize();
  } catch {
    // a failed module may refuse to finalise; what follows does not depend on it
  }
}

/** Resolves true once no call of the module runs, false when `ms` pass first. */
function drained(entry: Loaded, ms: number): Promise<boolean> {
  if (entry.calls === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    entry.idle.push(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Finalises and initialises the module again once the calls in flight have returned (they may
 * be on libuv's threads: finalising under them is undefined by the standard). Signs that start
 * meanwhile wait on `entry.reinitializing`; a sign that got past before it was set is counted in
 * `calls` by now, so the count is checked again after every wake-up.
 */
async function reinitialize(entry: Loaded, path: string, drainMs: number): Promise<boolean> {
  const until = Date.now() + drainMs;
  for (;;) {
    if (entry.calls === 0) break;
    if (!(await drained(entry, Math.max(0, until - Date.now())))) return false;
  }
  entry.reinitializedAt = Date.now();
  entry.epoch++;
  entry.pins.clear();
  finalize(entry.lib);
  try {
    initialize(entry.lib);
  } catch (err) {
    throw new Error(`cannot initialise the PKCS#11 module ${path} again (${pkcs11Reason(err)})`);
  }
  return true;
}

/**
 * Loads and initialises the module at `path`, or joins the process's existing use of it.
 * Throws a plain Error naming the path when the library cannot be loaded or initialised.
 */
export function openPkcs11Module(path: string): Pkcs11Module {
  let entry = loaded.get(path);
  if (!entry) {
    const { PKCS11 } = pkcs11Binding();
    const lib = new PKCS11();
    try {
      lib.load(path);
    } catch (err) {
      throw new Error(
        `cannot load the PKCS#11 module ${path} (${err instanceof Error ? err.message : 'unknown error'})`,
      );
    }
    try {
      initialize(lib);
    } catch (err) {
      // Another loader in this process (a test's own handle, say) got there first: same state.
      if (!isPkcs11Error(err, 'CKR_CRYPTOKI_ALREADY_INITIALIZED')) {
        throw new Error(`cannot initialise the PKCS#11 module ${path} (${pkcs11Reason(err)})`);
      }
    }
    entry = {
      lib,
      users: new Set(),
      pins: new Map(),
      epoch: 0,
      reinitializedAt: 0,
      calls: 0,
      idle: [],
      reinitializing: undefined,
      orphaned: false,
    };
    loaded.set(path, entry);
  }
  const current = entry;
  current.orphaned = false; // a user again: not finalised when its last call returns
  const user: User = { up: true };
  current.users.add(user);
  let released = false;
  return {
    lib: current.lib,
    path,
    login(slot, session, pin) {
      const slotKey = slot.toString('hex');
      const pinHash = createHash('sha256').update(pin).digest('hex');
      try {
        current.lib.C_Login(session, pkcs11Binding().CKU_USER, pin);
      } catch (err) {
        if (!isPkcs11Error(err, 'CKR_USER_ALREADY_LOGGED_IN')) {
          const refusal = PIN_REFUSALS[pkcs11Reason(err)];
          if (refusal !== undefined) throw new Pkcs11PinError(refusal);
          throw new Error(`login failed (${pkcs11Reason(err)})`);
        }
        // Logged in already (by another key of the token): the module did not check this PIN.
        const known = current.pins.get(slotKey);
        if (known !== undefined && known !== pinHash)
          throw new Pkcs11PinError('the token refused the PIN (it differs from the PIN this process logged in with)');
      }
      current.pins.set(slotKey, pinHash);
    },
    epoch: () => current.epoch,
    setUp(up) {
      user.up = up;
    },
    track(call) {
      current.calls++;
      const done = () => {
        if (--current.calls > 0) return;
        for (const wake of current.idle.splice(0)) wake();
        if (current.orphaned) {
          current.orphaned = false;
          loaded.delete(path);
          finalize(current.lib);
        }
      };
      call.then(done, done);
      return call;
    },
    settled: async () => {
      await current.reinitializing;
    },
    async recover(seenEpoch, drainMs) {
      if (current.reinitializing) await current.reinitializing;
      if (seenEpoch !== current.epoch) return true; // another key of this module did it already
      if (Date.now() - current.reinitializedAt < REINITIALIZE_MIN_MS) return false;
      // The module itself failed, or no key of it signs (nothing healthy to cut off: SoftHSM2
      // sees a token folder that went away and came back, and network clients a lost link,
      // only after an initialisation). Otherwise one token, key or PIN is at fault.
      const everyKeyDown = [...current.users].every((u) => !u.up);
      if (moduleFailure(current.lib) === undefined && !everyKeyDown) return false;
      current.reinitializing = reinitialize(current, path, drainMs);
      try {
        return await current.reinitializing;
      } finally {
        current.reinitializing = undefined;
      }
    },
    release() {
      if (released) return;
      released = true;
      current.users.delete(user);
      if (current.users.size > 0) return;
      // Finalising under a call that still runs (a hung sign) is undefined: then later, if ever
      // (a key opened meanwhile joins this initialisation instead).
      if (current.calls > 0) return void (current.orphaned = true);
      loaded.delete(path);
      finalize(current.lib);
    },
  };
}
