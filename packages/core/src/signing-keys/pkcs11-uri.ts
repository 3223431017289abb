/**
 * Where a key in a PKCS#11 module is: parsed from a PKCS#11 URI (RFC 7512, the form OpenSSL,
 * GnuTLS and p11-kit take), e.g.
 *
 *   pkcs11:token=pmm-signer;object=signer-8453?module-path=/usr/lib/softhsm/libsofthsm2.so
 *
 * Path attributes: `token` (token label) or `slot-id` (decimal slot number, RFC 7512's successor
 * draft and p11-kit), `object` (key label) and/or `id` (CKA_ID, percent-encoded bytes, e.g.
 * `%01`). Query attribute: `module-path` (required: the module's shared library). Unknown
 * attributes are refused rather than ignored, so a typo cannot select another key. A PIN in
 * the URI (`pin-value`, `pin-source`) is refused too: the URI is a plain setting, the PIN is
 * a secret read from its own file.
 */
import { ConfigError, type Setting } from '../settings/config';

/** A parsed key reference: one token (by label or slot) and one key (by label and/or id). */
export interface Pkcs11KeyRef {
  modulePath: string;
  tokenLabel?: string;
  slotId?: bigint;
  keyLabel?: string;
  /** CKA_ID bytes. */
  keyId?: Uint8Array;
}

const PATH_ATTRIBUTES = new Set(['token', 'slot-id', 'object', 'id', 'type']);
const QUERY_ATTRIBUTES = new Set(['module-path']);

/** Percent-decoding to bytes (RFC 7512 values are byte strings, `id` in particular). */
function decodeBytes(value: string, attr: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '%') {
      const hex = value.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw new Error(`${attr}: malformed percent-encoding`);
      out.push(parseInt(hex, 16));
      i += 2;
    } else out.push(...Buffer.from(value[i]!, 'utf8'));
  }
  return Uint8Array.from(out);
}

function decodeText(value: string, attr: string): string {
  return Buffer.from(decodeBytes(value, attr)).toString('utf8');
}

function attributes(part: string, sep: string, allowed: Set<string>): Map<string, string> {
  const out = new Map<string, string>();
  if (part === '') return out;
  for (const item of part.split(sep)) {
    const eq = item.indexOf('=');
    const name = eq < 0 ? item : item.slice(0, eq);
    if (name === 'pin-value' || name === 'pin-source')
      throw new Error(`${name}: the PIN does not go in the URI; give it in its own secret file`);
    if (!allowed.has(name)) throw new Error(`unknown attribute "${name}"`);
    if (eq < 0) throw new Error(`${name}: expected ${name}=<value>`);
    if (out.has(name)) throw new Error(`${name}: given twice`);
    out.set(name, item.slice(eq + 1));
  }
  return out;
}

/** Parses a PKCS#11 URI. Throws a plain Error whose message names the attribute at fault. */
export function parsePkcs11Uri(uri: string): Pkcs11KeyRef {
  if (!uri.startsWith('pkcs11:')) throw new Error('expected a PKCS#11 URI (pkcs11:token=…;object=…?module-path=…)');
  const rest = uri.slice('pkcs11:'.length);
  const q = rest.indexOf('?');
  const path = attributes(q < 0 ? rest : rest.slice(0, q), ';', PATH_ATTRIBUTES);
  const query = attributes(q < 0 ? '' : rest.slice(q + 1), '&', QUERY_ATTRIBUTES);
  const type = path.get('type');
  if (type !== undefined && type !== 'private')
    throw new Error('type: only type=private (the signing key) is meaningful here');
  const modulePath = query.has('module-path') ? decodeText(query.get('module-path')!, 'module-path') : '';
  if (modulePath === '')
    throw new Error('module-path: required (the PKCS#11 module, e.g. ?module-path=/usr/lib/softhsm/libsofthsm2.so)');
  const ref: Pkcs11KeyRef = { modulePath };
  if (path.has('token')) ref.tokenLabel = decodeText(path.get('token')!, 'token');
  if (path.has('slot-id')) {
    const raw = path.get('slot-id')!;
    if (!/^[0-9]{1,20}$/.test(raw)) throw new Error('slot-id: expected a decimal slot number');
    ref.slotId = BigInt(raw);
  }
  if (ref.tokenLabel === undefined && ref.slotId === undefined)
    throw new Error('token or slot-id: required (which token holds the key)');
  if (path.has('object')) ref.keyLabel = decodeText(path.get('object')!, 'object');
  if (path.has('id')) {
    ref.keyId = decodeBytes(path.get('id')!, 'id');
    if (ref.keyId.length === 0) throw new Error('id: empty');
  }
  if (ref.keyLabel === undefined && ref.keyId === undefined)
    throw new Error('object or id: required (which key in the token)');
  return ref;
}

/** The key reference in words, for logs and errors (no secret in it). */
export function describePkcs11Key(ref: Pkcs11KeyRef): string {
  const token = ref.tokenLabel !== undefined ? `token "${ref.tokenLabel}"` : `slot ${ref.slotId}`;
  const key = [
    ref.keyLabel !== undefined ? `label "${ref.keyLabel}"` : undefined,
    ref.keyId !== undefined ? `id ${Buffer.from(ref.keyId).toString('hex')}` : undefined,
  ]
    .filter(Boolean)
    .join(', ');
  return `key (${key}) in ${token} of ${ref.modulePath}`;
}

/** A setting whose value is a PKCS#11 URI, parsed (and so checked) when the settings load; absent: undefined. */
export function pkcs11UriSetting(env: string, description: string): Setting<Pkcs11KeyRef | undefined> {
  return {
    env,
    description,
    default: undefined,
    parse: (raw) => {
      if (typeof raw !== 'string' || raw.length === 0) throw new ConfigError('must be a PKCS#11 URI');
      try {
        return parsePkcs11Uri(raw);
      } catch (err) {
        throw new ConfigError(err instanceof Error ? err.message : 'not a PKCS#11 URI');
      }
    },
  };
}
