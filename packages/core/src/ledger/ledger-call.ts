/**
 * Where a router `swap` call of the maker's ledger took place: the fields that every ledger record
 * (an executed swap, ledger-entry.ts; a reverted call, ledger-revert.ts) holds alike, and their
 * checks when a stored record is read back.
 */

export interface LedgerCall {
  chainId: number;
  blockNumber: number;
  blockHash: string;
  /** Unix seconds of the block. */
  blockTime: number;
  txHash: string;
  /** Order of the call among its transaction's router swap calls (0 for the first). */
  callIndex: number;
  /** `direct`: the transaction calls the router; `nested`: a contract does (aggregator, split route). */
  via: 'direct' | 'nested';
}

/**
 * Checks a parsed record's call fields and the integers and strings of its own kind (`what` names
 * the kind in the error); throws naming what is wrong.
 */
export function checkLedgerCall<T extends LedgerCall>(
  what: string,
  v: unknown,
  own: { integers: readonly (keyof T)[]; strings: readonly (keyof T)[] },
): asserts v is Partial<T> {
  if (typeof v !== 'object' || v === null) throw new Error(`${what}: not an object`);
  const record = v as Record<PropertyKey, unknown>;
  for (const f of ['chainId', 'blockNumber', 'blockTime', 'callIndex', ...own.integers])
    if (!Number.isSafeInteger(record[f])) throw new Error(`${what}: ${String(f)} is not an integer`);
  for (const f of ['txHash', 'blockHash', ...own.strings])
    if (typeof record[f] !== 'string') throw new Error(`${what}: ${String(f)} is missing`);
  if (record.via !== 'direct' && record.via !== 'nested') throw new Error(`${what}: via is neither direct nor nested`);
}
