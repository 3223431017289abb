/**
 * Integrators and their API keys, as stored in Redis. An API key is stored only as its
 * SHA-256; the key record points to the integrator, so that an integrator can hold several
 * keys at once (rotation) while its whitelist and limits live in one place.
 */
import { isUint256String } from './parse-uint';

export interface ApiKeyRecord {
  integratorId: string;
  /** Short public identifier of the key (its first characters), for listings and logs. */
  keyId: string;
  createdAt: number;
  disabled: boolean;
}

export interface IntegratorRecord {
  id: string;
  name: string;
  /** Lowercase addresses allowed as `userAddress` on the sign endpoint. */
  whitelist: string[];
  /** Chains this integrator may use; empty means every served chain. */
  chains: number[];
  /** Requests per window; 0 means the gateway's default. */
  rateLimit: { requests: number; windowSeconds: number };
  disabled: boolean;
  /** Optional per-chain originRate override (uint256 decimal string), keyed by chain id. */
  originRate?: Record<string, string>;
}

/**
 * The shape of an integrator id: it appears in Redis keys and in the internal header the
 * gateway forwards to the signer, so both sides and the key CLI check this one pattern.
 */
export const INTEGRATOR_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';
const INTEGRATOR_ID_RE = new RegExp(INTEGRATOR_ID_PATTERN);

export function isIntegratorId(value: unknown): value is string {
  return typeof value === 'string' && INTEGRATOR_ID_RE.test(value);
}

/** A stored record that cannot be used (operator error). The message names the field, never the value. */
export class MalformedIntegratorError extends Error {
  constructor(integratorId: string, reason: string) {
    super(`integrator ${integratorId}: malformed record: ${reason}`);
    this.name = 'MalformedIntegratorError';
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const CHAIN_KEY_RE = /^[0-9]+$/;

/**
 * The one parser of a stored IntegratorRecord (gateway, signer, key CLI and backups use it).
 * Absent optional fields take their defaults; a field of the wrong type makes the whole record
 * unusable rather than silently widening it (a `chains: ["56"]` read as "every chain" would
 * grant chains the operator did not). Whitelist addresses come back lowercase.
 *
 * @param integratorId the id the record was looked up by (for the error message)
 * @throws MalformedIntegratorError naming the first bad field
 */
export function parseIntegratorRecord(integratorId: string, text: string): IntegratorRecord {
  const bad = (reason: string) => new MalformedIntegratorError(integratorId, reason);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  if (!isObject(v)) throw bad('not an object');
  if (!isIntegratorId(v.id)) throw bad('id');
  if (v.name !== undefined && typeof v.name !== 'string') throw bad('name');
  if (v.whitelist !== undefined && (!Array.isArray(v.whitelist) || !v.whitelist.every((a) => typeof a === 'string')))
    throw bad('whitelist');
  if (v.chains !== undefined && (!Array.isArray(v.chains) || !v.chains.every((c) => Number.isSafeInteger(c) && c > 0)))
    throw bad('chains');
  if (v.disabled !== undefined && typeof v.disabled !== 'boolean') throw bad('disabled');
  const rl = v.rateLimit === undefined ? {} : v.rateLimit;
  if (!isObject(rl)) throw bad('rateLimit');
  const count = (name: string, min: number): number => {
    const n = rl[name];
    if (n === undefined) return 0;
    if (!Number.isSafeInteger(n) || (n as number) < min) throw bad(`rateLimit.${name}`);
    return n as number;
  };
  const record: IntegratorRecord = {
    id: v.id,
    name: typeof v.name === 'string' ? v.name : v.id,
    whitelist: ((v.whitelist as string[] | undefined) ?? []).map((a) => a.toLowerCase()),
    chains: (v.chains as number[] | undefined) ?? [],
    rateLimit: { requests: count('requests', 0), windowSeconds: count('windowSeconds', 0) },
    disabled: v.disabled === true,
  };
  if (v.originRate !== undefined) {
    if (!isObject(v.originRate)) throw bad('originRate');
    const originRate: Record<string, string> = {};
    for (const [chain, value] of Object.entries(v.originRate)) {
      if (!CHAIN_KEY_RE.test(chain) || !isUint256String(value)) throw bad(`originRate.${chain}`);
      originRate[chain] = value;
    }
    record.originRate = originRate;
  }
  return record;
}
