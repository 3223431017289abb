/**
 * The operator console's status snapshot, sent to its viewers every few seconds
 * (console-feed.ts): the readiness of the gateway's dependencies (the same checks as `/readyz`:
 * Redis, the signer), and per chain the indexer replicas that announce themselves (core's
 * indexer-presence.ts), the sign rate across every signer (sign-rate.ts), the symbols of the
 * chain's tokens (from the pair registry, to label the charts), each pair's standing against its
 * reference at the served book (core's band-record.ts: its band, deviation and reference age), the
 * maker's ledger of the day (console-ledger.ts), and the active halts with who made them and why (read only). Books are not
 * in it: they come from the price stream's hub as they are written.
 */
import {
  bookBandKey,
  checkReadiness,
  decodeBandRecord,
  haltScopeKind,
  haltScopeName,
  type HaltScopeKind,
  type HaltView,
  readPresence,
  type IndexerPresence,
  type ReadinessCheck,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';
import { readConsoleLedger, type ConsoleLedger } from './console-ledger';
import { SignRate } from './sign-rate';

export interface ConsoleChainStatus {
  chainId: number;
  /** The replicas that announced themselves within the presence TTL; null when Redis could not be read. */
  indexers: IndexerPresence[] | null;
  /** Signatures per second over the last 10 s, every signer replica together; null while unknown. */
  signRate: number | null;
  /** Lowercase token address → symbol, from the chain's pair registry ({} before it is written). */
  symbols: Record<string, string>;
  /** The chain's quote token (lowercase address; null before the registry is written): the ledger's notional is in it. */
  quoteToken: string | null;
  /** The maker's ledger of the day; null when Redis could not be read. */
  ledger: ConsoleLedger | null;
  /**
   * Each pair with a reference at the served book (registry order of the record), [] when none
   * has one or no book is served; null when Redis could not be read.
   */
  references: ConsoleReference[] | null;
}

/** A pair's standing against its reference, as the console shows it. */
export interface ConsoleReference {
  /** Lowercase base token address. */
  base: string;
  /** The book's block the standing was written with. */
  block: number;
  status: string;
  mode: string;
  withheld: boolean;
  served: boolean;
  /** The block where `served` last changed. */
  since: number;
  /** The curve's mid against the reference, signed bps; null when either is unknown. */
  deviationBps: number | null;
  /** The reference's age at the block, s; null when unreadable. */
  ageSeconds: number | null;
  maxDeviationBelowBps: number;
  maxDeviationAboveBps: number;
}

/** The standing written with the chain's served book, as the console shows it (anything unreadable: none). */
function references(text: string | null): ConsoleReference[] {
  const record = decodeBandRecord(text);
  if (!record) return [];
  return Object.entries(record.pairs).map(([base, p]) => ({
    base,
    block: record.block,
    status: p.status,
    mode: p.mode,
    withheld: p.withheld,
    served: p.served,
    since: p.since,
    deviationBps: p.deviationBps ?? null,
    ageSeconds: p.ageSeconds ?? null,
    maxDeviationBelowBps: p.maxDeviationBelowBps,
    maxDeviationAboveBps: p.maxDeviationAboveBps,
  }));
}

/** An active halt as the console shows it (read only: `npm run risk` changes them). */
export interface ConsoleHalt {
  scope: string;
  kind: HaltScopeKind;
  reason: string;
  by: string;
  /** Unix ms. */
  at: number;
  trip?: { limit: string; value: string; threshold: string };
}

export interface ConsoleStatus {
  /** Unix milliseconds on the gateway's clock (the page measures book ages against it). */
  time: number;
  /** The active halts as this gateway last read them, oldest first. */
  halts: ConsoleHalt[];
  /** Per dependency: `ok` or `fail: <reason>`, as `/readyz` says. */
  parts: Record<string, string>;
  chains: ConsoleChainStatus[];
}

export interface ConsoleStatusOptions {
  /** REDIS_URL: the indexers' presence, the pair registries. */
  redis: RedisClient;
  /** The records' server (the same connection when one server holds both): the audit trail, the ledger. */
  records: RedisClient;
  keys: RedisKeys;
  chains: readonly number[];
  readiness: Record<string, ReadinessCheck>;
  halts: Pick<HaltView, 'lastRead'>;
}

/** Token symbols of a stored pair registry, and its quote token (anything unreadable gives none). */
function registryTokens(text: string | null): { symbols: Record<string, string>; quoteToken: string | null } {
  const symbols: Record<string, string> = {};
  let quoteToken: string | null = null;
  if (text === null) return { symbols, quoteToken };
  try {
    const registry = JSON.parse(text) as { quoteToken?: unknown; baseTokens?: unknown };
    const tokens = [registry.quoteToken, ...(Array.isArray(registry.baseTokens) ? registry.baseTokens : [])];
    for (const token of tokens) {
      const { address, symbol } = (token ?? {}) as { address?: unknown; symbol?: unknown };
      if (typeof address === 'string' && typeof symbol === 'string') symbols[address.toLowerCase()] = symbol;
    }
    const quote = (registry.quoteToken ?? {}) as { address?: unknown };
    if (typeof quote.address === 'string') quoteToken = quote.address.toLowerCase();
  } catch {
    // Not JSON: no labels; the console shows addresses.
  }
  return { symbols, quoteToken };
}

/** Returns the function that takes one snapshot (it samples the sign rates: call it at a steady pace). */
export function consoleStatus(opts: ConsoleStatusOptions): () => Promise<ConsoleStatus> {
  const { redis, records, keys } = opts;
  const rates = new Map(opts.chains.map((chainId) => [chainId, new SignRate(records, keys.audit(chainId))]));
  const chainStatus = async (chainId: number): Promise<ConsoleChainStatus> => {
    const [indexers, signRate, registry, ledger, band] = await Promise.allSettled([
      readPresence(redis, keys, chainId),
      rates.get(chainId)!.sample(),
      redis.get(keys.pairs(chainId)),
      readConsoleLedger(records, keys, chainId),
      redis.get(bookBandKey(keys.book(chainId))),
    ]);
    return {
      chainId,
      indexers: indexers.status === 'fulfilled' ? indexers.value : null,
      signRate: signRate.status === 'fulfilled' ? signRate.value : null,
      ...registryTokens(registry.status === 'fulfilled' ? registry.value : null),
      ledger: ledger.status === 'fulfilled' ? ledger.value : null,
      references: band.status === 'fulfilled' ? references(band.value) : null,
    };
  };
  return async () => {
    const [readiness, chains] = await Promise.all([
      checkReadiness(opts.readiness),
      Promise.all(opts.chains.map(chainStatus)),
    ]);
    const halts = opts.halts.lastRead().halts.map((h) => ({
      scope: haltScopeName(h.scope),
      kind: haltScopeKind(h.scope),
      reason: h.reason,
      by: h.by,
      at: h.at,
      ...(h.trip ? { trip: h.trip } : {}),
    }));
    return { time: Date.now(), parts: readiness.checks, halts, chains };
  };
}
