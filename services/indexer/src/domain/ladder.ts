/**
 * The ladder: the increasing input amounts at which the indexer samples `quote()` for each
 * pair and side. Level i of a book side is the step between samples i−1 and i, so the ladder
 * decides the book's granularity and depth.
 *
 * Configuration (setting `LADDER`, JSON), amounts in HUMAN units of the side's INPUT token,
 * as decimal strings (or safe integers):
 *
 * ```json
 * {
 *   "default": { "asks": ["100", "1000", "10000"] },
 *   "WETH":    { "bids": ["0.05", "0.5", "5", "50"] },
 *   "0x4200000000000000000000000000000000000006": { "asks": ["250", "2500"] }
 * }
 * ```
 *
 * - asks (input = the quote token, output = base): quote notionals;
 * - bids (input = the base token, output = quote): base amounts.
 * A pair's entry is found by base token address (any case), then by base symbol, then
 * `"default"`; a side it does not set comes from the next entry, then from the defaults below.
 *
 * Defaults (documented in the README):
 * - asks: {@link DEFAULT_ASK_NOTIONALS}, a geometric ladder of quote notionals from 100 to
 *   1,000,000 quote units (12 points);
 * - bids: the SAME notionals converted to base amounts at the pair's current price, measured
 *   at each registry refresh by a probe `quote()` (see {@link bidAmountsFromNotionals}), so
 *   both sides of the book reach the same quote depth. When no probe price is available (the
 *   ask side is empty or failing) the bids use {@link FALLBACK_BID_AMOUNTS} base units.
 */
import { isAddress, parseAddress, parseUnits, type TokenInfo } from '@pmm/protocol';

/** One pair's ladder, human units of each side's input token. */
export interface LadderSpec {
  asks?: string[];
  bids?: string[];
}

/** The `LADDER` setting: entries by base address (lowercase), base symbol, or `default`. */
export type LadderConfig = Record<string, LadderSpec>;

/** A pair's resolved ladder in raw units of each side's input token, strictly increasing. */
export interface RawLadder {
  asks: bigint[];
  bids: bigint[];
}

/** Default ask ladder: quote notionals (human units of the quote token). */
export const DEFAULT_ASK_NOTIONALS: readonly string[] = Object.freeze([
  '100',
  '500',
  '1000',
  '2500',
  '5000',
  '10000',
  '25000',
  '50000',
  '100000',
  '250000',
  '500000',
  '1000000',
]);

/** Bid ladder (human base units) used when the pair's price could not be probed. */
export const FALLBACK_BID_AMOUNTS: readonly string[] = Object.freeze([
  '0.001',
  '0.01',
  '0.1',
  '1',
  '10',
  '100',
  '1000',
]);

/** Most points per side: each point is one `quote()` inside the per-block call. */
const MAX_LADDER_POINTS = 64;

const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

function fail(reason: string): never {
  throw new Error(reason);
}

function parseSide(where: string, raw: unknown): string[] {
  if (!Array.isArray(raw)) return fail(`${where}: must be an array of decimal strings`);
  if (raw.length === 0 || raw.length > MAX_LADDER_POINTS) fail(`${where}: must have 1..${MAX_LADDER_POINTS} amounts`);
  const out = raw.map((v, i) => {
    const text = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v;
    if (typeof text !== 'string' || !DECIMAL.test(text))
      return fail(`${where}[${i}]: must be a positive decimal string`);
    return text;
  });
  // Compare exactly: scale every amount to the largest number of places among them.
  const places = Math.max(...out.map((s) => (s.split('.')[1] ?? '').length));
  let previous = 0n;
  out.forEach((s, i) => {
    const v = parseUnits(s, places);
    if (v <= previous) fail(`${where}[${i}]: amounts must be positive and strictly increasing`);
    previous = v;
  });
  return out;
}

/**
 * Validates the `LADDER` setting (at boot, before any token decimals are known). Address
 * keys are normalised to lowercase; other keys are symbols (case-sensitive) or `default`.
 *
 * @throws Error naming the offending entry
 */
export function parseLadderConfig(value: unknown): LadderConfig {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return fail('must be an object keyed by token');
  const out: LadderConfig = {};
  for (const [rawKey, spec] of Object.entries(value as Record<string, unknown>)) {
    let key = rawKey;
    if (isAddress(rawKey)) {
      try {
        key = parseAddress(rawKey, rawKey).toLowerCase();
      } catch (err) {
        // parseAddress names the entry and the reason (a wrong checksum or the zero address).
        fail((err as Error).message);
      }
    }
    if (spec === null || typeof spec !== 'object' || Array.isArray(spec))
      fail(`${rawKey}: must be { "asks"?: [...], "bids"?: [...] }`);
    const entry: LadderSpec = {};
    for (const [field, amounts] of Object.entries(spec as Record<string, unknown>)) {
      if (field !== 'asks' && field !== 'bids') fail(`${rawKey}.${field}: unknown field (asks, bids)`);
      entry[field] = parseSide(`${rawKey}.${field}`, amounts);
    }
    out[key] = entry;
  }
  return out;
}

/**
 * Human amounts → raw units of a token with `decimals`. Digits past the token's precision are
 * cut (toward zero: the ladder is a set of sample points, not money owed), then zero and
 * repeated points are dropped, so the result is strictly increasing and positive.
 */
export function toRawAmounts(human: readonly string[], decimals: number): bigint[] {
  const out: bigint[] = [];
  for (const s of human) {
    const [whole = '0', fraction = ''] = s.split('.');
    const v = parseUnits(fraction ? `${whole}.${fraction.slice(0, decimals)}` : whole, decimals);
    const last = out[out.length - 1];
    if (v > 0n && (last === undefined || v > last)) out.push(v);
  }
  return out;
}

/** A measured price of a pair: `quoteIn` raw quote units bought `baseOut` raw base units. */
export interface ProbePrice {
  quoteIn: bigint;
  baseOut: bigint;
}

/**
 * Converts raw quote notionals into raw base amounts at the probe price (floor), dropping
 * zero and repeated points. Returns [] for a probe without a positive price.
 */
export function bidAmountsFromNotionals(notionals: readonly bigint[], probe: ProbePrice): bigint[] {
  if (probe.quoteIn <= 0n || probe.baseOut <= 0n) return [];
  const out: bigint[] = [];
  for (const n of notionals) {
    const v = (n * probe.baseOut) / probe.quoteIn;
    const last = out[out.length - 1];
    if (v > 0n && (last === undefined || v > last)) out.push(v);
  }
  return out;
}

/** The configured spec of one side for a pair (address entry, then symbol, then default). */
function configuredSide(config: LadderConfig, base: TokenInfo, side: 'asks' | 'bids'): string[] | undefined {
  return config[base.address.toLowerCase()]?.[side] ?? config[base.symbol]?.[side] ?? config['default']?.[side];
}

/** Raw ask amounts of a pair (quote-token input): configured, else the default notionals. */
export function askLadder(config: LadderConfig, base: TokenInfo, quote: TokenInfo): bigint[] {
  return toRawAmounts(configuredSide(config, base, 'asks') ?? DEFAULT_ASK_NOTIONALS, quote.decimals);
}

/** True when the bids of this pair need a probe price (no configured bid ladder). */
export function needsBidProbe(config: LadderConfig, base: TokenInfo): boolean {
  return configuredSide(config, base, 'bids') === undefined;
}

/**
 * A pair's full ladder. Bids: configured, else the ask notionals at `probe`'s price, else
 * {@link FALLBACK_BID_AMOUNTS}.
 */
export function resolveLadder(config: LadderConfig, base: TokenInfo, quote: TokenInfo, probe?: ProbePrice): RawLadder {
  const asks = askLadder(config, base, quote);
  const configuredBids = configuredSide(config, base, 'bids');
  if (configuredBids) return { asks, bids: toRawAmounts(configuredBids, base.decimals) };
  const derived = probe ? bidAmountsFromNotionals(asks, probe) : [];
  return { asks, bids: derived.length > 0 ? derived : toRawAmounts(FALLBACK_BID_AMOUNTS, base.decimals) };
}
