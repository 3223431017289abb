/**
 * Halts: the operator's stop of signing in a scope (`npm run risk -- halt …`). A scope is a
 * conjunction of optional parts — a chain, a pair on that chain (its base token), an integrator,
 * a user address — and the empty scope is everything. The five scopes of the runbook are the
 * scopes of one part (a pair always names its chain); several parts narrow it (an integrator on
 * one chain). This file is the one definition of a scope's name (the field of the halts hash),
 * of a stored halt, and of which halts cover a sign request or a book.
 *
 * A halt record also says who made it and why; an automatic trip (a limit on executed swaps)
 * writes the same record with `trip` set, so that status and history show what tripped, its value
 * and its threshold.
 */
import { ApiError, isAddress, isIntegratorId } from '@pmm/protocol';

/** A halt's scope; no part at all is everything. Addresses lower case. */
export interface HaltScope {
  chainId?: number;
  /** A pair's base token on `chainId` (a pair needs its chain). */
  pair?: string;
  integratorId?: string;
  userAddress?: string;
}

/** What an automatic limit on executed swaps records when it trips (the ledger's limits, services/indexer/src/ledger/limits.ts). */
export interface HaltTrip {
  /**
   * The limit's name: `integrator-notional`, `pair-notional`, `integrator-markout`,
   * `integrator-reference-markout`, `integrator-below-quote`, `integrator-reverts`, `integrator-unused`.
   */
  limit: string;
  /** The measured value and the threshold it crossed, as decimal strings in the limit's units. */
  value: string;
  threshold: string;
}

/** One active halt, as stored. */
export interface HaltRecord {
  scope: HaltScope;
  reason: string;
  /** Who halted: the command's `--by`, the operator's login, or the ledger whose limit tripped (`ledger-<chain id>`). */
  by: string;
  /** Unix ms. */
  at: number;
  trip?: HaltTrip;
}

/** The narrowest part a scope names: what an integrator is told is halted, and the metrics' label. */
export type HaltScopeKind = 'all' | 'chain' | 'pair' | 'integrator' | 'user';
export const HALT_SCOPE_KINDS: readonly HaltScopeKind[] = ['all', 'chain', 'pair', 'integrator', 'user'];

/** Longest reason kept (an operator's sentence, not a document). */
export const MAX_HALT_REASON = 1_000;

export function haltScopeKind(scope: HaltScope): HaltScopeKind {
  if (scope.userAddress !== undefined) return 'user';
  if (scope.integratorId !== undefined) return 'integrator';
  if (scope.pair !== undefined) return 'pair';
  if (scope.chainId !== undefined) return 'chain';
  return 'all';
}

/**
 * The scope's name, the field of the halts hash: `all`, or its parts in a fixed order,
 * `chain=8453 pair=0x… integrator=acme user=0x…`. Two commands naming the same scope name the
 * same field, whatever the order of their options.
 */
export function haltScopeName(scope: HaltScope): string {
  const parts: string[] = [];
  if (scope.chainId !== undefined) parts.push(`chain=${scope.chainId}`);
  if (scope.pair !== undefined) parts.push(`pair=${scope.pair}`);
  if (scope.integratorId !== undefined) parts.push(`integrator=${scope.integratorId}`);
  if (scope.userAddress !== undefined) parts.push(`user=${scope.userAddress}`);
  return parts.length === 0 ? 'all' : parts.join(' ');
}

/** Why a scope cannot be stored, or undefined (shapes only; whether a chain is served is the command's check). */
export function haltScopeProblem(scope: HaltScope): string | undefined {
  if (scope.chainId !== undefined && !(Number.isSafeInteger(scope.chainId) && scope.chainId > 0))
    return `chain ${JSON.stringify(scope.chainId)} is not a chain id`;
  if (scope.pair !== undefined) {
    if (scope.chainId === undefined) return 'a pair needs its chain';
    if (!isAddress(scope.pair) || scope.pair !== scope.pair.toLowerCase())
      return `pair ${JSON.stringify(scope.pair)} is not a lower-case address`;
  }
  if (scope.integratorId !== undefined && !isIntegratorId(scope.integratorId))
    return `integrator ${JSON.stringify(scope.integratorId)} is not an integrator id`;
  if (
    scope.userAddress !== undefined &&
    (!isAddress(scope.userAddress) || scope.userAddress !== scope.userAddress.toLowerCase())
  )
    return `user ${JSON.stringify(scope.userAddress)} is not a lower-case address`;
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A stored halt from its JSON; throws on anything else (a reader then fails closed). */
export function parseHaltRecord(json: string): HaltRecord {
  return haltRecordOf(JSON.parse(json));
}

/** A halt from a parsed value (a stored record, or a log entry carrying one); throws on anything else. */
export function haltRecordOf(v: unknown): HaltRecord {
  if (!isObject(v) || !isObject(v.scope)) throw new Error('a halt record is not an object with a scope');
  const s = v.scope;
  const scope: HaltScope = {
    ...(s.chainId !== undefined ? { chainId: s.chainId as number } : {}),
    ...(s.pair !== undefined ? { pair: s.pair as string } : {}),
    ...(s.integratorId !== undefined ? { integratorId: s.integratorId as string } : {}),
    ...(s.userAddress !== undefined ? { userAddress: s.userAddress as string } : {}),
  };
  const problem = haltScopeProblem(scope);
  if (problem) throw new Error(`a halt record's scope: ${problem}`);
  if (typeof v.reason !== 'string' || typeof v.by !== 'string' || !Number.isSafeInteger(v.at))
    throw new Error('a halt record lacks its reason, author or time');
  const record: HaltRecord = { scope, reason: v.reason, by: v.by, at: v.at as number };
  if (isObject(v.trip)) {
    const { limit, value, threshold } = v.trip;
    if (typeof limit === 'string' && typeof value === 'string' && typeof threshold === 'string')
      record.trip = { limit, value, threshold };
  }
  return record;
}

/**
 * The active halts from the halts hash (field: scope name, value: its record), oldest first.
 * Throws when a record does not parse, or is filed under another scope's name: a writer that may
 * only add halts (a ledger's limits) could otherwise lift one by writing a narrower record over
 * it, which the readers, matching on the record's scope, would obey. A reader then fails closed.
 */
export function parseActiveHalts(fields: Record<string, string>): HaltRecord[] {
  return Object.entries(fields)
    .map(([name, json]) => {
      const record = parseHaltRecord(json);
      if (haltScopeName(record.scope) !== name)
        throw new Error(`the halt filed as "${name}" is a halt of "${haltScopeName(record.scope)}"`);
      return record;
    })
    .sort((a, b) => a.at - b.at);
}

/** Who a chain's ledger writes its trips as: its Redis user's name (redis-acl.ts). */
export function ledgerAuthor(chainId: number): string {
  return `ledger-${chainId}`;
}

/**
 * The scopes a chain's ledger may trip (its limits, services/indexer/src/ledger/limit-window.ts):
 * an integrator on every chain, or a pair of its own chain. Nothing wider: a ledger, which reads
 * what a node sends, can never stop a whole chain or everything.
 */
export function ledgerMayTrip(chainId: number, scope: HaltScope): boolean {
  const { chainId: chain, pair, integratorId, userAddress } = scope;
  if (userAddress !== undefined) return false;
  if (integratorId !== undefined) return chain === undefined && pair === undefined;
  return pair !== undefined && chain === chainId;
}

/** A chain's ledger's trips as the readers take them (parseLedgerTrips). */
export interface LedgerTrips {
  /** Its trips, and one halt of its chain for each unreadable field (fail closed on its chain). */
  halts: HaltRecord[];
  /** The fields that did not hold a trip this ledger may make (counted; lifted with its chain's resume). */
  unreadable: string[];
}

/**
 * Chain `chainId`'s ledger's trips hash (`{halts}:trips:<id>`, field: scope name, value: its
 * record). A field holds a trip only when its record parses, is filed under its own scope's
 * name, was written by that ledger (`by`), names its limit (`trip`) and is a scope that ledger
 * may trip. Any other field is unreadable: it neither throws (one ledger cannot blind every
 * reader) nor is ignored (it may be a trip): it halts the ledger's own chain, until an operator
 * resumes that chain, which clears it.
 */
export function parseLedgerTrips(chainId: number, fields: Record<string, string>): LedgerTrips {
  const out: LedgerTrips = { halts: [], unreadable: [] };
  const by = ledgerAuthor(chainId);
  for (const [name, json] of Object.entries(fields)) {
    let record: HaltRecord | undefined;
    try {
      record = parseHaltRecord(json);
    } catch {
      record = undefined;
    }
    if (
      record &&
      haltScopeName(record.scope) === name &&
      record.by === by &&
      record.trip !== undefined &&
      ledgerMayTrip(chainId, record.scope)
    ) {
      out.halts.push(record);
      continue;
    }
    out.unreadable.push(name);
  }
  if (out.unreadable.length > 0)
    out.halts.push({
      scope: { chainId },
      reason: `${out.unreadable.length} unreadable trip record(s) of ${by}: its chain stays halted until an operator resumes chain ${chainId}`,
      by,
      at: 0,
    });
  return out;
}

/** What a sign request is, for the halts (addresses any case). */
export interface SignSubject {
  chainId: number;
  tokenIn: string;
  tokenOut: string;
  integratorId: string;
  userAddress: string;
}

/** Whether `scope` covers the request: every part it names matches (a pair: either token). */
export function scopeCoversSign(scope: HaltScope, s: SignSubject): boolean {
  if (scope.chainId !== undefined && scope.chainId !== s.chainId) return false;
  if (scope.integratorId !== undefined && scope.integratorId !== s.integratorId) return false;
  if (scope.userAddress !== undefined && scope.userAddress !== s.userAddress.toLowerCase()) return false;
  if (scope.pair !== undefined && scope.pair !== s.tokenIn.toLowerCase() && scope.pair !== s.tokenOut.toLowerCase())
    return false;
  return true;
}

/**
 * What the halts leave of a chain's book for an integrator: refused (the kind of the halt that
 * covers the whole book: everything, the chain, the integrator, the integrator on the chain), else
 * the base tokens whose levels are withheld. A halt naming a user never touches a book (a book has
 * no user). `integratorId` '' stands for every integrator at once: only halts naming none apply.
 */
export type BookHalt = { refusedBy: HaltScopeKind } | { pairs: ReadonlySet<string> };

export function bookHalt(halts: Iterable<HaltRecord>, chainId: number, integratorId: string): BookHalt {
  const pairs = new Set<string>();
  for (const { scope } of halts) {
    if (scope.userAddress !== undefined) continue;
    if (scope.chainId !== undefined && scope.chainId !== chainId) continue;
    if (scope.integratorId !== undefined && scope.integratorId !== integratorId) continue;
    if (scope.pair === undefined) return { refusedBy: haltScopeKind(scope) };
    pairs.add(scope.pair);
  }
  return { pairs };
}

/**
 * `Retry-After` of a HALTED answer. A halt has no announced end: this is a polite pace for a
 * client that polls (the SDK does not retry HALTED; its price stream reconnects at this pace).
 */
export const HALTED_RETRY_AFTER_SECONDS = 60;

const HALTED_WHAT: Record<HaltScopeKind, string> = {
  all: 'signing is halted',
  chain: 'signing is halted on this chain',
  pair: 'signing is halted for this pair',
  integrator: "signing is halted for this API key's integrator",
  user: 'signing is halted for this user address',
};

/**
 * The answer to a request a halt covers: 503 HALTED. It names the kind of scope, never the
 * reason nor who halted (an integrator learns that it is halted, not why).
 */
export function haltedError(kind: HaltScopeKind): ApiError {
  return new ApiError('HALTED', `${HALTED_WHAT[kind]} by the operator; retry later`, {
    'Retry-After': String(HALTED_RETRY_AFTER_SECONDS),
  });
}
