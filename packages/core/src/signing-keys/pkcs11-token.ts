/**
 * The key in its token, as a signer of pkcs11-signer.ts connects to it: the token's slot (by label
 * or slot number), the private key (by label and/or id) and its public point, checked to be one
 * secp256k1 key that may sign; `count` sessions opened and logged in. Kept apart from the signer's
 * session pool and failure handling (pkcs11-signer.ts), which call {@link connect} at start and
 * on every reconnect.
 */
import type * as Pkcs11js from 'pkcs11js';
import { secp256k1 as nobleSecp256k1 } from '@noble/curves/secp256k1';
import { isPkcs11Error, pkcs11Binding, pkcs11Reason, type Pkcs11Module } from './pkcs11-module';
import type { Pkcs11KeyRef } from './pkcs11-uri';

/** DER of secp256k1's object identifier (1.3.132.0.10): the CKA_EC_PARAMS of a secp256k1 key. */
const SECP256K1_PARAMS = '06052b8104000a';
/** Curves a key is often made on by mistake, named in the error. */
const OTHER_CURVES: Record<string, string> = {
  '06082a8648ce3d030107': 'P-256',
  '06052b81040022': 'P-384',
  '06052b81040023': 'P-521',
};

/** What a connection to the key holds: the sessions and the key's handle in them. */
export interface Connection {
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
    let label: string;
    try {
      label = lib.C_GetTokenInfo(slot).label.trim();
    } catch (err) {
      // One token that fails (SoftHSM2 answers CKR_GENERAL_ERROR for a token whose folder went
      // away) must not hide the others.
      labels.push(`a token that fails (${pkcs11Reason(err)}) (slot ${slotNumber(slot)})`);
      continue;
    }
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

export function closeQuietly(lib: Pkcs11js.PKCS11, session: Buffer): void {
  try {
    lib.C_CloseSession(session);
  } catch {
    // a session of a failed module is gone already
  }
}

/** Opens `count` sessions on the key's token, logs in, finds the key. Throws a plain Error. */
export function connect(module: Pkcs11Module, ref: Pkcs11KeyRef, pin: string, count: number): Connection {
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
    throw isPkcs11Error(err) ? new Error(`the module failed (${pkcs11Reason(err)})`) : err; // Pkcs11PinError included
  }
}
