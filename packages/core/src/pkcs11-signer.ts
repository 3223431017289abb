/**
 * A signing key that never leaves a PKCS#11 module (an HSM, a cloud HSM, SoftHSM for trials):
 * the same {@link KeySigner} contract as the in-memory signer, with the module doing the
 * secp256k1 arithmetic.
 *
 * - The address comes from the token's public key (CKA_EC_POINT of the public key object
 *   beside the private key), checked to be a secp256k1 point.
 * - A signature is CKM_ECDSA over the 32-byte digest itself (no hashing by the module), which
 *   returns bare r ‖ s; s is made low and v is the recovery id that recovers the token's public
 *   key (secp256k1-signer.ts), so the 65 bytes have the in-memory signer's form and recover to
 *   the same address. They are not the same bytes: a module draws a random nonce, the in-memory
 *   signer RFC 6979's deterministic one.
 * - Sessions are pooled: a PKCS#11 session runs one operation at a time, so one session would
 *   serialise every sign behind the one before. Each sign takes an idle session (or waits for
 *   one), runs C_Sign on libuv's thread pool, and gives the session back.
 * - A module that fails mid-run (device error, lost session, token removed) makes every sign
 *   fail fast with {@link KeyUnavailableError} (503 upstream) instead of hanging; the next sign
 *   at least `retryMs` later reconnects (sessions, login, the key found again and checked to be
 *   the same address), and signing resumes when the module is back.
 *
 * SECURITY: the PIN stays in this closure (it is needed to log in again after a failure); it is
 * never a property, never in an error message, and the key's private part never leaves the module.
 */
import { inspect } from 'node:util';
import type * as Pkcs11js from 'pkcs11js';
import { secp256k1 as nobleSecp256k1 } from '@noble/curves/secp256k1';
import { KeyUnavailableError, type KeySigner } from '@pmm/protocol';
import { openPkcs11Module, isPkcs11Error, pkcs11Binding, pkcs11Reason, type Pkcs11Module } from './pkcs11-module';
import { describePkcs11Key, type Pkcs11KeyRef } from './pkcs11-uri';
import { addressOfPublicKey, toRecoverableSignature } from './secp256k1-signer';

/** DER of secp256k1's object identifier (1.3.132.0.10): the CKA_EC_PARAMS of a secp256k1 key. */
const SECP256K1_PARAMS = '06052b8104000a';
/** Curves a key is often made on by mistake, named in the error. */
const OTHER_CURVES: Record<string, string> = {
  '06082a8648ce3d030107': 'P-256',
  '06052b81040022': 'P-384',
  '06052b81040023': 'P-521',
};

export const DEFAULT_PKCS11_SESSIONS = 4;
const DEFAULT_RETRY_MS = 1000;

export interface Pkcs11SignerOptions {
  key: Pkcs11KeyRef;
  /** The token's user PIN. */
  pin: string;
  /** Sessions kept open, the signs that can run at once. Default {@link DEFAULT_PKCS11_SESSIONS}. */
  sessions?: number;
  /** After a failure, how long signs fail fast before the next reconnect attempt, ms. Default 1000. */
  retryMs?: number;
  /** Each failure: a sign the module refused or a reconnect that did not succeed (the module's reason, no secret). */
  onFailure?: (reason: string) => void;
  /** The module signs again after a failure. */
  onRecovered?: () => void;
}

export interface Pkcs11Signer extends KeySigner {
  readonly backend: 'pkcs11';
  /** Always later: the module answers on libuv's thread pool. */
  sign(digest: Uint8Array): Promise<Uint8Array>;
  /** Waits for the signs in flight, closes the sessions and releases the module. Idempotent. */
  close(): Promise<void>;
  /** The session pool now: sessions open, signing, and signs waiting for one. */
  pool(): { sessions: number; busy: number; waiting: number };
}

/** What a connection to the key holds: the sessions and the key's handle in them. */
interface Connection {
  /** The module's epoch when this connection was made. */
  epoch: number;
  key: Buffer;
  sessions: Buffer[];
  publicKey: Uint8Array;
}

function slotNumber(slot: Buffer): bigint {
  return slot.length >= 8 ? slot.readBigUInt64LE(0) : BigInt(slot.readUInt32LE(0));
}

function findSlot(lib: Pkcs11js.PKCS11, ref: Pkcs11KeyRef): Buffer {
  const slots = lib.C_GetSlotList(true);
  const labels: string[] = [];
  for (const slot of slots) {
    const label = lib.C_GetTokenInfo(slot).label.trim();
    labels.push(`"${label}" (slot ${slotNumber(slot)})`);
    const labelOk = ref.tokenLabel === undefined || label === ref.tokenLabel;
    const slotOk = ref.slotId === undefined || slotNumber(slot) === ref.slotId;
    if (labelOk && slotOk) return slot;
  }
  const wanted = ref.tokenLabel !== undefined ? `labelled "${ref.tokenLabel}"` : `in slot ${ref.slotId}`;
  throw new Error(`no token ${wanted} (tokens present: ${labels.length > 0 ? labels.join(', ') : 'none'})`);
}

function findOne(lib: Pkcs11js.PKCS11, session: Buffer, template: Pkcs11js.Template): Buffer[] {
  lib.C_FindObjectsInit(session, template);
  try {
    return lib.C_FindObjects(session, 2);
  } finally {
    lib.C_FindObjectsFinal(session);
  }
}

function keyTemplate(ref: Pkcs11KeyRef, objectClass: number): Pkcs11js.Template {
  const p = pkcs11Binding();
  const template: Pkcs11js.Template = [{ type: p.CKA_CLASS, value: objectClass }];
  if (ref.keyLabel !== undefined) template.push({ type: p.CKA_LABEL, value: ref.keyLabel });
  if (ref.keyId !== undefined) template.push({ type: p.CKA_ID, value: Buffer.from(ref.keyId) });
  return template;
}

function attribute(lib: Pkcs11js.PKCS11, session: Buffer, object: Buffer, type: number): Buffer | undefined {
  try {
    const [attr] = lib.C_GetAttributeValue(session, object, [{ type }]);
    return Buffer.isBuffer(attr?.value) ? attr.value : undefined;
  } catch {
    return undefined; // the module does not have (or does not show) this attribute
  }
}

/** CKA_EC_POINT as the uncompressed point 0x04 ‖ X ‖ Y: DER-wrapped (04 41 …) by the standard, bare by some modules. */
function uncompressedPoint(ecPoint: Buffer): Uint8Array {
  const bare = ecPoint.length === 67 && ecPoint[0] === 0x04 && ecPoint[1] === 0x41 ? ecPoint.subarray(2) : ecPoint;
  if (bare.length !== 65 || bare[0] !== 0x04)
    throw new Error('the public key (CKA_EC_POINT) is not an uncompressed point');
  try {
    nobleSecp256k1.ProjectivePoint.fromHex(bare).assertValidity();
  } catch {
    throw new Error('the public key (CKA_EC_POINT) is not a point of secp256k1');
  }
  return Uint8Array.from(bare);
}

/** Finds the private key and its public point in an open, logged-in session; checks the curve. */
function findKey(lib: Pkcs11js.PKCS11, session: Buffer, ref: Pkcs11KeyRef): { key: Buffer; publicKey: Uint8Array } {
  const p = pkcs11Binding();
  const keys = findOne(lib, session, keyTemplate(ref, p.CKO_PRIVATE_KEY));
  if (keys.length === 0) throw new Error('no private key with that label/id in the token');
  if (keys.length > 1) throw new Error('more than one private key matches: give both object= and id= in the URI');
  const key = keys[0]!;
  const keyType = attribute(lib, session, key, p.CKA_KEY_TYPE);
  if (keyType && keyType.readUIntLE(0, Math.min(keyType.length, 6)) !== p.CKK_EC)
    throw new Error('the key is not an elliptic-curve key (a secp256k1 key is required)');
  const params = attribute(lib, session, key, p.CKA_EC_PARAMS)?.toString('hex');
  if (params !== SECP256K1_PARAMS) {
    const curve = params === undefined ? 'unknown' : (OTHER_CURVES[params] ?? `EC_PARAMS ${params}`);
    throw new Error(`the key is not a secp256k1 key (its curve: ${curve}); Ethereum signatures need secp256k1`);
  }
  const canSign = attribute(lib, session, key, p.CKA_SIGN);
  if (canSign && canSign[0] === 0) throw new Error('the key may not sign (CKA_SIGN is false)');
  // The public point: on the public key object beside it (same id, else same label), or on
  // the private key itself where the module shows it there.
  const id = attribute(lib, session, key, p.CKA_ID);
  const label = attribute(lib, session, key, p.CKA_LABEL);
  const publicRef: Pkcs11KeyRef = { modulePath: ref.modulePath };
  if (id && id.length > 0) publicRef.keyId = id;
  else if (label) publicRef.keyLabel = label.toString('utf8');
  const publics =
    publicRef.keyId || publicRef.keyLabel ? findOne(lib, session, keyTemplate(publicRef, p.CKO_PUBLIC_KEY)) : [];
  const ecPoint =
    (publics.length === 1 ? attribute(lib, session, publics[0]!, p.CKA_EC_POINT) : undefined) ??
    attribute(lib, session, key, p.CKA_EC_POINT);
  if (!ecPoint)
    throw new Error('no public key object (CKA_EC_POINT) beside the private key: the address cannot be derived');
  return { key, publicKey: uncompressedPoint(ecPoint) };
}

function closeQuietly(lib: Pkcs11js.PKCS11, session: Buffer): void {
  try {
    lib.C_CloseSession(session);
  } catch {
    // a session of a failed module is gone already
  }
}

/** Opens `count` sessions on the key's token, logs in, finds the key. Throws a plain Error. */
function connect(module: Pkcs11Module, ref: Pkcs11KeyRef, pin: string, count: number): Connection {
  const lib = module.lib;
  const sessions: Buffer[] = [];
  try {
    const slot = findSlot(lib, ref);
    for (let i = 0; i < count; i++) sessions.push(lib.C_OpenSession(slot, pkcs11Binding().CKF_SERIAL_SESSION));
    module.login(slot, sessions[0]!, pin);
    const { key, publicKey } = findKey(lib, sessions[0]!, ref);
    return { epoch: module.epoch(), key, sessions, publicKey };
  } catch (err) {
    for (const s of sessions) closeQuietly(lib, s);
    throw isPkcs11Error(err) ? new Error(`the module failed (${pkcs11Reason(err)})`) : err;
  }
}

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
  const pin = opts.pin;
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
  let epoch = first.epoch;
  let idle = [...first.sessions];
  let down: { reason: string; at: number } | undefined;
  let reconnecting: Promise<void> | undefined;
  let closed = false;
  const waiters: { resolve(session: Buffer): void; reject(err: Error): void }[] = [];
  const inFlight = new Set<Promise<unknown>>();

  const unavailable = (reason: string) => new KeyUnavailableError(`${where}: ${reason}`);

  const fail = (gen: number, reason: string) => {
    if (gen !== generation) return; // this failure was already seen
    generation++;
    down = { reason, at: Date.now() };
    for (const s of idle) closeQuietly(lib, s);
    idle = [];
    conn = undefined;
    for (const w of waiters.splice(0)) w.reject(unavailable(reason));
    opts.onFailure?.(reason);
  };

  /** Connects again; when the module cannot, initialises it again (once per epoch) and retries. */
  const connectAgain = (): Connection => {
    try {
      return connect(module, ref, pin, sessionCount);
    } catch {
      module.reinitialize(epoch);
      // Whatever happened, the next attempt compares with the module's epoch of now.
      epoch = module.epoch();
      return connect(module, ref, pin, sessionCount);
    }
  };

  const reconnect = async (): Promise<void> => {
    try {
      const next = connectAgain();
      epoch = next.epoch;
      const nextAddress = addressOfPublicKey(next.publicKey);
      if (nextAddress !== address) {
        for (const s of next.sessions) closeQuietly(lib, s);
        throw new Error(`the token now holds another key under this label/id (${nextAddress}, not ${address})`);
      }
      generation++;
      conn = next;
      idle = [...next.sessions];
      down = undefined;
      opts.onRecovered?.();
    } catch (err) {
      const reason = err instanceof Error ? err.message : 'reconnect failed';
      down = { reason, at: Date.now() };
      opts.onFailure?.(reason);
    }
  };

  const acquire = async (): Promise<{ session: Buffer; gen: number; key: Buffer }> => {
    for (;;) {
      if (closed) throw unavailable('the signer is closed');
      if (down) {
        if (Date.now() - down.at < retryMs) throw unavailable(down.reason);
        reconnecting ??= reconnect().finally(() => (reconnecting = undefined));
        await reconnecting;
        if (down) throw unavailable(down.reason);
        continue;
      }
      const gen = generation;
      const key = conn!.key;
      const session = idle.pop() ?? (await new Promise<Buffer>((resolve, reject) => waiters.push({ resolve, reject })));
      if (gen !== generation) {
        closeQuietly(lib, session);
        continue;
      }
      return { session, gen, key };
    }
  };

  const release = (session: Buffer, gen: number) => {
    if (closed || gen !== generation) return closeQuietly(lib, session);
    const waiter = waiters.shift();
    if (waiter) waiter.resolve(session);
    else idle.push(session);
  };

  const signOnce = async (digest: Uint8Array): Promise<Uint8Array> => {
    if (!(digest instanceof Uint8Array) || digest.length !== 32) throw new Error('sign: digest must be 32 bytes');
    const { session, gen, key } = await acquire();
    let rs: Buffer;
    try {
      lib.C_SignInit(session, ecdsa, key);
      rs = await lib.C_SignAsync(session, Buffer.from(digest), Buffer.alloc(72));
    } catch (err) {
      closeQuietly(lib, session);
      const reason = pkcs11Reason(err);
      fail(gen, reason);
      throw unavailable(reason);
    }
    release(session, gen);
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
    await Promise.allSettled([...inFlight]);
    for (const s of idle) closeQuietly(lib, s);
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
