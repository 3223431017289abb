/**
 * The audit trail's record: one per signature the signer returns (written before the response
 * leaves), read back by the operator's `audit` and `settle` commands. Stored as the JSON of a
 * Redis Stream entry's one field; this file is the one place that maps a record to it and back.
 *
 * Nothing secret is in it: the signature and digest are public once the swap is on-chain, the
 * key id is the API key's public identifier (never the key), `signer` is the signing key's address.
 */

export interface AuditRecord {
  /** Unix milliseconds at signing, on the signer's clock. */
  time: number;
  chainId: number;
  integratorId: string;
  /** Public id of the API key the gateway authenticated; '' when the caller did not say. */
  keyId: string;
  /** The service's own id of the request (the gateway's; never the client's). */
  requestId: string;
  /** The client's `X-Request-Id`, when it sent a valid one (kept apart: it is not ours). */
  clientRequestId?: string;
  /** Lowercase addresses. */
  userAddress: string;
  tokenIn: string;
  tokenOut: string;
  /** Decimal strings (uint256). */
  fee: string;
  originRate: string;
  /** Present only when the request carried it (then the response had calldata). */
  amountIn?: string;
  /** The minimum the calldata encodes (as sent, or derived from `amountOut` and `slippageBps`). */
  minAmountOut?: string;
  /**
   * The firm quote of a /v2 sign with `amountIn`: what the router pays (wei, net of the fee) in
   * the state of block `blockNumber`. Absent on /v1 and from records written before it existed.
   */
  amountOut?: string;
  blockNumber?: number;
  /** The signed `timestamp` (Unix seconds), as returned to the integrator. */
  timestamp: number;
  /**
   * Unix seconds: the last block timestamp at which the router accepts the quote (`timestamp` +
   * the chain's validity), as answered on /v2. Absent from records written before it existed.
   */
  deadline?: number;
  /** `0x` hex: the signed digest and the 65-byte signature (lowercase). */
  digest: string;
  signature: string;
  /** Address of the chain's signing key that produced the signature. */
  signer: string;
}

/** Field order of the stored JSON and of the CSV export's columns. */
export const AUDIT_FIELDS = [
  'time',
  'chainId',
  'integratorId',
  'keyId',
  'requestId',
  'userAddress',
  'tokenIn',
  'tokenOut',
  'fee',
  'originRate',
  'amountIn',
  'minAmountOut',
  'timestamp',
  'digest',
  'signature',
  'signer',
  'clientRequestId',
  // Added after the first records: last, so that the CSV export's earlier columns keep their places.
  'deadline',
  'amountOut',
  'blockNumber',
] as const satisfies readonly (keyof AuditRecord)[];

/** The stream entry's only field: the record as JSON (one argument to send, one value to store). */
export const AUDIT_ENTRY_FIELD = 'r';

/** The record as the JSON of its stream entry, fields in {@link AUDIT_FIELDS} order. */
export function auditRecordJson(record: AuditRecord): string {
  return JSON.stringify(record, AUDIT_FIELDS as unknown as string[]);
}

const INTEGER_FIELDS = ['time', 'chainId', 'timestamp'] as const;
const OPTIONAL_FIELDS = ['amountIn', 'minAmountOut', 'clientRequestId', 'amountOut'] as const;
const OPTIONAL_INTEGER_FIELDS = ['deadline', 'blockNumber'] as const;
/** The other fields: required strings. */
const STRING_FIELDS = AUDIT_FIELDS.filter(
  (f) =>
    !(INTEGER_FIELDS as readonly string[]).includes(f) &&
    !(OPTIONAL_FIELDS as readonly string[]).includes(f) &&
    !(OPTIONAL_INTEGER_FIELDS as readonly string[]).includes(f),
);

/** Reads a record back from its JSON; throws a plain Error naming the first bad field. */
export function parseAuditRecord(json: string): AuditRecord {
  const v = JSON.parse(json) as Record<string, unknown>;
  if (typeof v !== 'object' || v === null) throw new Error('audit record: not an object');
  for (const name of INTEGER_FIELDS)
    if (!Number.isSafeInteger(v[name])) throw new Error(`audit record: ${name} is not an integer`);
  for (const name of STRING_FIELDS)
    if (typeof v[name] !== 'string') throw new Error(`audit record: ${name} is missing`);
  for (const name of OPTIONAL_FIELDS)
    if (v[name] !== undefined && typeof v[name] !== 'string') throw new Error(`audit record: ${name} is not a string`);
  for (const name of OPTIONAL_INTEGER_FIELDS)
    if (v[name] !== undefined && !Number.isSafeInteger(v[name]))
      throw new Error(`audit record: ${name} is not an integer`);
  return v as unknown as AuditRecord;
}

export const DAY_MS = 86_400_000;

/**
 * The Unix day of a signed timestamp (seconds): which day's signature index holds its record
 * (the signer writes it, the operator commands read it).
 */
export function auditDay(timestampSeconds: number): number {
  return Math.floor(timestampSeconds / 86_400);
}
