/**
 * One loaded PKCS#11 module per shared library path, shared by every key that lives in it:
 * a module is initialised once per process (a second C_Initialize is an error, and two
 * `PKCS11` objects over one library share its state anyway), and finalised when the last key
 * using it closes.
 *
 * Initialised with CKF_OS_LOCKING_OK: signs run on libuv's thread pool (one session per
 * concurrent sign), and a module initialised without it may assume a single-threaded caller.
 */
import { createHash } from 'node:crypto';
import type * as Pkcs11js from 'pkcs11js';

export interface Pkcs11Module {
  readonly lib: Pkcs11js.PKCS11;
  readonly path: string;
  /**
   * Logs the application in to the token of `slot` as its user. Login is per token and process,
   * not per session: the second key of a token finds it done, so its PIN is compared with the
   * one that logged in (a wrong PIN must not pass because another key's was right). Throws a
   * plain Error without the PIN.
   */
  login(slot: Buffer, session: Buffer, pin: string): void;
  /** Counts the module's initialisations: a signer notes it when it connects (see {@link reinitialize}). */
  epoch(): number;
  /**
   * Finalises and initialises the module again, the last resort when it cannot even list its
   * tokens after a failure (SoftHSM, and vendors' network clients after a lost link, need it).
   * Every session of the module ends, so every key in it reconnects; done once per `seenEpoch`,
   * however many keys ask, and at most once every few seconds. Throws a plain Error when the
   * module does not initialise.
   */
  reinitialize(seenEpoch: number): void;
  /** Drops this user of the module; the last one finalises it. Idempotent. */
  release(): void;
}

interface Loaded {
  lib: Pkcs11js.PKCS11;
  users: number;
  /** SHA-256 of the PIN that logged in, by slot (hex of its handle); the PIN itself is not kept here. */
  pins: Map<string, string>;
  epoch: number;
  /** When it was last initialised again (Unix ms). */
  reinitializedAt: number;
}

/**
 * Least time between two initialisations of one module. Initialising again ends the sessions of
 * every key in the module: one key whose token stays away must not knock the others over at
 * every retry.
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
      lib.C_Initialize({ flags: pkcs11Binding().CKF_OS_LOCKING_OK });
    } catch (err) {
      // Another loader in this process (a test's own handle, say) got there first: same state.
      if (!isPkcs11Error(err, 'CKR_CRYPTOKI_ALREADY_INITIALIZED')) {
        throw new Error(`cannot initialise the PKCS#11 module ${path} (${pkcs11Reason(err)})`);
      }
    }
    entry = { lib, users: 0, pins: new Map(), epoch: 0, reinitializedAt: 0 };
    loaded.set(path, entry);
  }
  entry.users++;
  const current = entry;
  let released = false;
  return {
    lib: current.lib,
    path,
    login(slot, session, pin) {
      const slotKey = slot.toString('hex');
      const pinHash = createHash('sha256').update(pin).digest('hex');
      const known = current.pins.get(slotKey);
      if (known !== undefined && known !== pinHash)
        throw new Error('the token refused the PIN (it differs from the PIN this process logged in with)');
      try {
        current.lib.C_Login(session, pkcs11Binding().CKU_USER, pin);
      } catch (err) {
        if (!isPkcs11Error(err, 'CKR_USER_ALREADY_LOGGED_IN')) {
          if (isPkcs11Error(err, 'CKR_PIN_INCORRECT')) throw new Error('the token refused the PIN (CKR_PIN_INCORRECT)');
          if (isPkcs11Error(err, 'CKR_PIN_LOCKED'))
            throw new Error(
              'the PIN is locked after too many wrong tries (CKR_PIN_LOCKED): the security officer must reset it',
            );
          throw new Error(`login failed (${pkcs11Reason(err)})`);
        }
      }
      current.pins.set(slotKey, pinHash);
    },
    epoch: () => current.epoch,
    reinitialize(seenEpoch) {
      if (seenEpoch !== current.epoch) return; // another key of this module did it already
      if (Date.now() - current.reinitializedAt < REINITIALIZE_MIN_MS) return;
      current.reinitializedAt = Date.now();
      current.epoch++;
      current.pins.clear();
      try {
        current.lib.C_Finalize();
      } catch {
        // a failed module may refuse to finalise; initialising again is what matters
      }
      try {
        current.lib.C_Initialize({ flags: pkcs11Binding().CKF_OS_LOCKING_OK });
      } catch (err) {
        throw new Error(`cannot initialise the PKCS#11 module ${path} again (${pkcs11Reason(err)})`);
      }
    },
    release() {
      if (released) return;
      released = true;
      if (--current.users > 0) return;
      loaded.delete(path);
      try {
        current.lib.C_Finalize();
      } catch {
        // finalising a module that already failed: nothing left to release
      }
    },
  };
}
