/**
 * Integrators and their API keys, as stored in Redis. An API key is stored only as its
 * SHA-256; the key record points to the integrator, so that an integrator can hold several
 * keys at once (rotation) while its whitelist and limits live in one place.
 */
import { KNOWN_CHAIN_IDS } from '../chains/chains';
import { isAddress } from '../requests/parse-address';
import { isUint256String } from '../requests/parse-uint';

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
  /**
   * Signatures per chain and UTC day; absent or 0 means the signer's DAILY_SIGNATURE_QUOTA.
   * It bounds what one integrator adds to the audit trail (docs/operations/settlement.md#audit-trail).
   */
  dailySignatureQuota?: number;
}

/** Largest daily signature quota a record may set. */
export const MAX_DAILY_SIGNATURE_QUOTA = 1_000_000_000;

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
  if (v.dailySignatureQuota !== undefined) {
    const q = v.dailySignatureQuota;
    if (!Number.isSafeInteger(q) || (q as number) < 0) throw bad('dailySignatureQuota');
    record.dailySignatureQuota = q as number;
  }
  return record;
}

/**
 * The shape of an API key's public id (`pmm_` + 8 base64url characters for issued keys,
 * `dev_` + 8 hex for the development key): it is printed by the key CLI and forwarded to the
 * signer in a header, so a record whose keyId does not match is not a usable key.
 */
export const KEY_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
const KEY_ID_RE = new RegExp(KEY_ID_PATTERN);

export function isKeyId(value: unknown): value is string {
  return typeof value === 'string' && KEY_ID_RE.test(value);
}

/** Longest integrator name. */
export const MAX_INTEGRATOR_NAME_LENGTH = 200;
/** C0 and C1 control characters and DEL: terminal escape sequences, CR/LF, NUL. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const MAX_RATE_REQUESTS = 9_999_999_999;
const MAX_RATE_WINDOW_SECONDS = 999_999;

/** A value as it may be shown in a problem: JSON-quoted (control characters escaped), cut short. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * THE rules of an integrator record written by the service (the key CLI's create, update and
 * import, the development key's seeding): each problem, naming the field and quoting the value
 * escaped; [] when the record is valid. Readers (parseIntegratorRecord) stay lenient on what
 * cannot widen access; writers are held to these.
 */
export function integratorRecordProblems(r: IntegratorRecord): string[] {
  const problems: string[] = [];
  if (!isIntegratorId(r.id)) problems.push(`id ${shown(r.id)} must match ${INTEGRATOR_ID_PATTERN}`);
  if (typeof r.name !== 'string' || r.name.length === 0 || r.name.length > MAX_INTEGRATOR_NAME_LENGTH)
    problems.push(`name must be 1..${MAX_INTEGRATOR_NAME_LENGTH} characters`);
  else if (CONTROL_RE.test(r.name)) problems.push(`name ${shown(r.name)} contains control characters`);
  for (const a of r.whitelist) if (!isAddress(a)) problems.push(`whitelist: not an address: ${shown(a)}`);
  if (new Set(r.whitelist.map((a) => a.toLowerCase())).size !== r.whitelist.length)
    problems.push('whitelist lists an address twice');
  const unknown = (id: unknown) => `unknown chain ${shown(String(id))} (known: ${KNOWN_CHAIN_IDS.join(', ')})`;
  for (const c of r.chains) if (!KNOWN_CHAIN_IDS.includes(c)) problems.push(`chains: ${unknown(c)}`);
  if (new Set(r.chains).size !== r.chains.length) problems.push('chains lists a chain twice');
  const { requests, windowSeconds } = r.rateLimit;
  if (!Number.isSafeInteger(requests) || requests < 0 || requests > MAX_RATE_REQUESTS)
    problems.push(`rateLimit.requests must be an integer in 0..${MAX_RATE_REQUESTS}`);
  if (!Number.isSafeInteger(windowSeconds) || windowSeconds < 0 || windowSeconds > MAX_RATE_WINDOW_SECONDS)
    problems.push(`rateLimit.windowSeconds must be an integer in 0..${MAX_RATE_WINDOW_SECONDS}`);
  for (const [chain, value] of Object.entries(r.originRate ?? {})) {
    if (!CHAIN_KEY_RE.test(chain) || !KNOWN_CHAIN_IDS.includes(Number(chain)))
      problems.push(`originRate: ${unknown(chain)}`);
    if (!isUint256String(value)) problems.push(`originRate.${chain} must be a uint256 decimal string`);
  }
  const quota = r.dailySignatureQuota;
  if (quota !== undefined && (!Number.isSafeInteger(quota) || quota < 0 || quota > MAX_DAILY_SIGNATURE_QUOTA))
    problems.push(`dailySignatureQuota must be an integer in 0..${MAX_DAILY_SIGNATURE_QUOTA}`);
  if (typeof r.disabled !== 'boolean') problems.push('disabled must be true or false');
  return problems;
}

/** THE rules of an API key record written by the service; [] when it is valid. */
export function apiKeyRecordProblems(r: ApiKeyRecord): string[] {
  const problems: string[] = [];
  if (!isIntegratorId(r.integratorId))
    problems.push(`integratorId ${shown(r.integratorId)} must match ${INTEGRATOR_ID_PATTERN}`);
  if (!isKeyId(r.keyId)) problems.push(`keyId ${shown(r.keyId)} must match ${KEY_ID_PATTERN}`);
  if (!Number.isSafeInteger(r.createdAt) || r.createdAt < 0) problems.push('createdAt must be a time in ms');
  if (typeof r.disabled !== 'boolean') problems.push('disabled must be true or false');
  return problems;
}
