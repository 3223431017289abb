/**
 * The operator's halts (the logic behind `risk.ts`, `npm run risk -- <command>`), apart from
 * process concerns so that tests run it in-process against a real Redis.
 *
 * Every input is checked before anything is written: a scope part that is malformed, a chain
 * this deployment does not serve, a pair that is not one of its pairs, an integrator that does
 * not exist, a reason that is missing, too long or carries control or format characters: a usage
 * error (exit 2) naming it, and nothing changes. A halt is reported only once it is durable (the
 * durable-write rule, core durable-writes.ts): unconfirmed, exit 1.
 *
 * Where things live (the two Redis roles, core's redis-roles.ts): the halts, the ledgers' trips,
 * their log, the integrators and the audit trail on the records' server (`redis`); the pair
 * registries, which the indexers rebuild, on the other (`registries`), reached only when a chain
 * or a pair is checked or a token named. A halt never waits on that server: when it cannot be
 * read, the scope is halted as given and the command says what it could not check.
 */
import { userInfo } from 'node:os';
import {
  DurableWrites,
  bookBandKey,
  decodeBandRecord,
  HaltStore,
  MAX_HALT_REASON,
  haltScopeKind,
  haltScopeName,
  scopeCoversSign,
  type AuditRecord,
  type HaltEvent,
  type HaltRecord,
  type HaltScope,
  type RedisClient,
  type RedisKeys,
} from '@pmm/core';
import { KNOWN_CHAIN_IDS, isAddress, isIntegratorId, type PairRegistry } from '@pmm/protocol';
import { AuditReader } from '../audit-trail/audit-reader';
import { bandHistory, bandTransitionJson, describeBandTransition } from './band-history';
import { UsageError, parseOptions } from '../cli/cli-options';

export const RISK_USAGE = `usage: risk <command> [options]

  halt    (--all | [--chain <id>] [--pair <base token>] [--integrator <id>] [--user <address>])
          --reason <text> [--by <name>]
          Stops signing in the scope on every gateway and signer within 1 s. A scope is every
          part given: --pair needs its --chain; --integrator with --chain halts that integrator
          on that chain only. No scope at all is refused: everything is --all. Prints the
          signatures still valid on-chain at once (provisional) and after 1 s, and when the
          figure is final (signatures in flight at the halt recorded).
  resume  the same scope, exactly as halted (an operator's halt or a ledger's trip);
          --reason <text> [--by <name>]
  status  [--format text|json]   The active halts, each with the signatures issued in its scope
                                 that the router still accepts (a halt cannot recall them), and the
                                 pairs out of band against their references (withheld, or watched).
  history [--format text|json]   Every halt, resume and trip, oldest first; then every pair's
                                 transitions in and out of its band (withheld, restored; in watch
                                 mode out-of-band, in-band), with the block and the values.

--by defaults to the operator's login name. --reason: at most ${MAX_HALT_REASON} characters.`;

/**
 * What the command needs: Redis as the risk user (the records' server, and the rebuildable one's
 * pair registries), how writes are confirmed, the clock and the login.
 */
export interface RiskContext {
  /** The records' server: halts, trips, their log, integrators, the audit trail. */
  redis: RedisClient;
  /** The server of the pair registries (the same connection when one server holds both roles), connected on first use. */
  registries: () => Promise<RedisClient>;
  keys: RedisKeys;
  durability: DurableWrites;
  /**
   * How long after a halt a signature already past the halt check may still be recorded: the
   * services obey a halt within 1 s, and a signature answered at all is recorded within the
   * request timeout of its request (REQUEST_TIMEOUT_MS). The exposure printed at the halt is
   * provisional until then.
   */
  exposureSettleMs: number;
  now?: () => number;
  /** Waits `ms` (the exposure's second reading); default a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** The operator's name when --by is not given; default the OS login. */
  login?: () => string;
}

/** The services obey a halt within this (core's halt-view.ts): the exposure is read again then. */
const HALT_OBEYED_MS = 1_000;

export interface RiskIo {
  out(line: string): void;
  err(line: string): void;
}

const SCOPE_OPTIONS = ['chain', 'pair', 'integrator', 'user'] as const;
const MAX_BY = 100;
/**
 * Control characters (C0, DEL, C1) would rewrite an operator's terminal when printed; format
 * characters (\p{Cf}: bidirectional overrides such as U+202E, zero-width ones) and the line and
 * paragraph separators would make what `status` prints read otherwise than it is.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/u;

/** Runs one command; returns the exit code (0, 1 failure, 2 usage or refused input). Throws only UsageError. */
export async function runRiskCommand(argv: readonly string[], ctx: RiskContext, io: RiskIo): Promise<number> {
  const [command, ...rest] = argv;
  const store = new HaltStore(ctx.redis, ctx.keys);
  const now = ctx.now ?? Date.now;
  switch (command) {
    case 'halt':
    case 'resume': {
      const opts = parseOptions(rest, [...SCOPE_OPTIONS, 'reason', 'by'], ['all']);
      if (opts.positionals.length > 0) throw new UsageError(`unexpected argument "${opts.positionals[0]}"`);
      const scope = scopeOf(opts.values, opts.flags.has('all'));
      const reason = textArg('reason', opts.values.reason, MAX_HALT_REASON);
      const by = textArg('by', opts.values.by ?? (ctx.login ?? defaultLogin)(), MAX_BY);
      // A halt must name what exists here; a resume only what is halted (a since deleted integrator's halt can still be lifted).
      if (command === 'halt') await assertExists(ctx, scope, io);
      const at = now();
      const name = haltScopeName(scope);
      if (command === 'halt') {
        const outcome = await ctx.durability.run((lane) =>
          new HaltStore(lane, ctx.keys).halt({ scope, reason, by, at }),
        );
        if (!outcome.made) {
          io.out(`already halted: ${describeHalt(outcome.existing, at)} (nothing changed)`);
          return 0;
        }
        io.out(`halted ${name} at ${iso(at)} by ${by}: signing in it stops on every replica within 1 s`);
        // Signatures past the halt check but not yet recorded (a slow key, a durable write) are
        // not in the trail yet: the first figure is provisional, read again once every replica
        // obeys the halt, and final once the last of them is recorded (see RiskContext).
        const halt = [{ scope, reason, by, at }];
        io.out(`  provisional: ${describeExposure((await exposureOf(ctx, halt, now()))[0]!)}`);
        await (ctx.sleep ?? sleep)(Math.max(0, at + HALT_OBEYED_MS - now()));
        io.out(`  after 1 s: ${describeExposure((await exposureOf(ctx, halt, now()))[0]!)}`);
        io.out(
          `  final from ${iso(at + ctx.exposureSettleMs)} (signatures in flight at the halt are recorded by then): \`risk status\``,
        );
        return 0;
      }
      const lifted = await ctx.durability.run((lane) =>
        new HaltStore(lane, ctx.keys).resume(scope, { reason, by, at }),
      );
      if (!lifted) {
        const active = await store.active().catch(() => []);
        io.err(
          `risk: ${name} is not halted; halted now: ${active.map((h) => haltScopeName(h.scope)).join(', ') || 'nothing'}`,
        );
        return 1;
      }
      io.out(`resumed ${name} at ${iso(at)} by ${by} (${sinceText(lifted)} by ${lifted.by})`);
      return 0;
    }
    case 'status': {
      const format = formatArg(rest);
      const at = now();
      const { halts, unreadableTrips } = await store.read();
      const exposure = await exposureOf(ctx, halts, at);
      const outOfBand = await pairsOutOfBand(ctx);
      if (format === 'json') {
        io.out(
          JSON.stringify(
            {
              at: iso(at),
              halts: halts.map((h, i) => ({ ...haltJson(h), exposure: exposure[i] })),
              unreadableTrips,
              outOfBand,
            },
            null,
            2,
          ),
        );
        return 0;
      }
      if (halts.length === 0) io.out('no halts: signing everywhere');
      halts.forEach((h, i) => {
        io.out(describeHalt(h, at));
        io.out(`  ${describeExposure(exposure[i]!)}`);
      });
      if (outOfBand === 'unreadable') io.out("pairs out of band: unknown (the books' server cannot be read)");
      else for (const p of outOfBand) io.out(describeOutOfBand(p));
      return 0;
    }
    case 'history': {
      const format = formatArg(rest);
      // The log, in its order, and the trips no operator has lifted yet (a lifted trip is in the log), each at its time.
      const [history, active, band] = await Promise.all([store.history(), store.read(), bandHistory(ctx)]);
      const events: HaltEvent[] = [...history.events];
      for (const trip of active.halts.filter((h) => h.trip !== undefined)) {
        const after = events.findIndex((e) => e.at > trip.at);
        events.splice(after === -1 ? events.length : after, 0, { id: 'trip', action: 'halt', ...trip });
      }
      if (history.malformed > 0)
        io.err(
          `risk: ${history.malformed} entr${history.malformed === 1 ? 'y' : 'ies'} of the halts' log do not parse: skipped`,
        );
      if (band === 'unreadable')
        io.err("risk: the pairs' band transitions are unknown (the books' server cannot be read)");
      else if (band.malformed > 0)
        io.err(
          `risk: ${band.malformed} entr${band.malformed === 1 ? 'y' : 'ies'} of the band logs do not parse: skipped`,
        );
      const transitions = band === 'unreadable' ? [] : band.transitions;
      if (format === 'json') {
        io.out(JSON.stringify([...events.map(eventJson), ...transitions.map(bandTransitionJson)], null, 2));
        return 0;
      }
      if (events.length === 0) io.out('no halt so far');
      for (const e of events)
        io.out(`${iso(e.at)}  ${e.action.padEnd(6)}  ${haltScopeName(e.scope)}  by ${e.by}: ${e.reason}${tripText(e)}`);
      for (const t of transitions) io.out(describeBandTransition(t));
      return 0;
    }
    default:
      throw new UsageError(command === undefined ? 'no command' : `unknown command "${command}"`);
  }
}

/** A pair out of its band against its reference at its chain's served book (core's band-record.ts). */
interface OutOfBand {
  chainId: number;
  base: string;
  /** Out of the book and its signs refused (enforce mode); false: watch mode, only reported. */
  withheld: boolean;
  status: string;
  since: number;
  deviationBps?: number;
  ageSeconds?: number;
}

/**
 * The pairs each known chain's indexers do not serve against their references, from the standing
 * written with the served book; 'unreadable' when the books' server cannot be read (status goes on).
 */
async function pairsOutOfBand(ctx: RiskContext): Promise<OutOfBand[] | 'unreadable'> {
  try {
    const redis = await ctx.registries();
    const texts = await redis.mget(...KNOWN_CHAIN_IDS.map((id) => bookBandKey(ctx.keys.book(id))));
    return KNOWN_CHAIN_IDS.flatMap((chainId, i) =>
      Object.entries(decodeBandRecord(texts[i])?.pairs ?? {})
        .filter(([, p]) => !p.served)
        .map(([base, p]) => ({
          chainId,
          base,
          withheld: p.withheld,
          status: p.status,
          since: p.since,
          deviationBps: p.deviationBps,
          ageSeconds: p.ageSeconds,
        })),
    );
  } catch {
    return 'unreadable';
  }
}

function describeOutOfBand(p: OutOfBand): string {
  const figures = [
    p.deviationBps === undefined ? undefined : `deviation ${p.deviationBps.toFixed(1)} bps`,
    p.ageSeconds === undefined ? undefined : `reference age ${p.ageSeconds} s`,
  ].filter(Boolean);
  const what = p.withheld ? 'withheld' : 'out of band (watch: still served)';
  return `chain ${p.chainId} pair ${p.base} ${what} since block ${p.since}: ${p.status}${figures.length ? `, ${figures.join(', ')}` : ''}`;
}

function defaultLogin(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER || 'unknown';
  }
}

/** The scope of the options; a part that is malformed, or none at all, is a UsageError. */
function scopeOf(values: Record<string, string | undefined>, all: boolean): HaltScope {
  const given = SCOPE_OPTIONS.filter((name) => values[name] !== undefined);
  if (all && given.length > 0) throw new UsageError(`--all halts everything: it takes no --${given[0]}`);
  if (!all && given.length === 0)
    throw new UsageError('no scope: give --chain, --pair, --integrator or --user (everything is --all)');
  const scope: HaltScope = {};
  const chain = values.chain;
  if (chain !== undefined) {
    const id = /^[0-9]{1,10}$/.test(chain) ? Number(chain) : NaN;
    if (!(KNOWN_CHAIN_IDS as readonly number[]).includes(id))
      throw new UsageError(`--chain: "${chain}" is not a chain of the registry (${KNOWN_CHAIN_IDS.join(', ')})`);
    scope.chainId = id;
  }
  if (values.pair !== undefined) {
    if (scope.chainId === undefined) throw new UsageError('--pair needs its --chain');
    scope.pair = addressArg('pair', values.pair);
  }
  if (values.integrator !== undefined) {
    if (!isIntegratorId(values.integrator))
      throw new UsageError(`--integrator: ${JSON.stringify(values.integrator)} is not an integrator id`);
    scope.integratorId = values.integrator;
  }
  if (values.user !== undefined) scope.userAddress = addressArg('user', values.user);
  return scope;
}

function addressArg(name: string, text: string): string {
  if (!isAddress(text))
    throw new UsageError(`--${name}: ${JSON.stringify(text)} is not an address (0x and 40 hex digits)`);
  return text.toLowerCase();
}

function textArg(name: string, text: string | undefined, max: number): string {
  const value = text?.trim() ?? '';
  if (value === '') throw new UsageError(`--${name} is required`);
  if (value.length > max) throw new UsageError(`--${name} is ${value.length} characters; at most ${max}`);
  if (CONTROL.test(value)) throw new UsageError(`--${name} has a control or format character`);
  return value;
}

function formatArg(argv: readonly string[]): 'text' | 'json' {
  const opts = parseOptions(argv, ['format']);
  if (opts.positionals.length > 0) throw new UsageError(`unexpected argument "${opts.positionals[0]}"`);
  const format = opts.values.format ?? 'text';
  if (format !== 'text' && format !== 'json') throw new UsageError(`--format: "${format}" is not text or json`);
  return format;
}

/** A chain's pair registry as the indexer stored it (undefined: none here), or the error that kept it from being read. */
async function registryOf(ctx: RiskContext, chainId: number): Promise<PairRegistry | undefined | Error> {
  try {
    const text = await (await ctx.registries()).get(ctx.keys.pairs(chainId));
    return text === null ? undefined : (JSON.parse(text) as PairRegistry);
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * Refuses (UsageError) a chain not served (no pair registry: the indexer writes it, nothing is
 * signed without it), a pair not of its registry, an integrator that does not exist. A registry
 * that cannot be read (its server down) refuses nothing: the halt goes on, and says so.
 */
async function assertExists(ctx: RiskContext, scope: HaltScope, io: RiskIo): Promise<void> {
  if (scope.chainId !== undefined) {
    const registry = await registryOf(ctx, scope.chainId);
    if (registry instanceof Error) {
      io.err(
        `risk: the pair registries cannot be read (${registry.message}): --chain${scope.pair === undefined ? '' : ' and --pair'} not checked, halting as given`,
      );
    } else if (!registry) {
      const found = await Promise.all(KNOWN_CHAIN_IDS.map((id) => registryOf(ctx, id)));
      const served = KNOWN_CHAIN_IDS.filter((_, i) => found[i] !== undefined && !(found[i] instanceof Error));
      throw new UsageError(
        `--chain: ${scope.chainId} is not served here (no pair registry; served: ${served.join(', ') || 'none'})`,
      );
    } else if (scope.pair !== undefined) {
      const bases = registry.baseTokens.map((t) => t.address.toLowerCase());
      if (registry.quoteToken.address.toLowerCase() === scope.pair)
        throw new UsageError(
          `--pair: ${scope.pair} is chain ${scope.chainId}'s quote token, in every pair: halt the chain`,
        );
      if (!bases.includes(scope.pair))
        throw new UsageError(`--pair: ${scope.pair} is not a base token of chain ${scope.chainId}'s pairs`);
    }
  }
  if (scope.integratorId !== undefined && (await ctx.redis.exists(ctx.keys.integrator(scope.integratorId))) === 0)
    throw new UsageError(`--integrator: no integrator "${scope.integratorId}"`);
}

/** The signatures of a scope that the router still accepts, with their amountIn per input token. */
export interface Exposure {
  signatures: number;
  /** Signatures that named an amountIn, summed per input token (raw units, and human when the token is known). */
  amountIn: { chainId: number; token: string; symbol?: string; raw: string; amount?: string }[];
  /** Unix seconds: the latest deadline among them (none: 0). */
  validUntil: number;
}

/**
 * Per halt, in order: its exposure at `at`, from the audit trail of every chain of the registry
 * (a record, on the records' server: whatever the other server holds). The pair registries only
 * name the tokens, when they can be read.
 */
async function exposureOf(ctx: RiskContext, halts: readonly HaltRecord[], at: number): Promise<Exposure[]> {
  const out = halts.map(() => ({ signatures: 0, sums: new Map<string, bigint>(), validUntil: 0 }));
  if (halts.length === 0) return [];
  const reader = new AuditReader(ctx.redis, ctx.keys);
  const registries = new Map<number, PairRegistry | undefined>();
  for (const chainId of KNOWN_CHAIN_IDS) {
    for await (const { record } of reader.live(chainId, Math.floor(at / 1000))) {
      halts.forEach((h, i) => {
        if (!scopeCoversSign(h.scope, record)) return;
        add(out[i]!, record);
      });
    }
  }
  for (const chainId of new Set(out.flatMap((o) => [...o.sums.keys()].map((key) => Number(key.split(' ')[0]))))) {
    const registry = await registryOf(ctx, chainId);
    registries.set(chainId, registry instanceof Error ? undefined : registry);
  }
  return out.map((o) => ({
    signatures: o.signatures,
    validUntil: o.validUntil,
    amountIn: [...o.sums].map(([key, raw]) => {
      const [chainId, token] = key.split(' ') as [string, string];
      const registry = registries.get(Number(chainId));
      const info = [registry?.quoteToken, ...(registry?.baseTokens ?? [])].find(
        (t) => t?.address.toLowerCase() === token,
      );
      return {
        chainId: Number(chainId),
        token,
        raw: raw.toString(),
        ...(info ? { symbol: info.symbol, amount: units(raw, info.decimals) } : {}),
      };
    }),
  }));
}

function add(o: { signatures: number; sums: Map<string, bigint>; validUntil: number }, r: AuditRecord): void {
  o.signatures++;
  o.validUntil = Math.max(o.validUntil, r.deadline ?? 0);
  if (r.amountIn === undefined) return;
  const key = `${r.chainId} ${r.tokenIn.toLowerCase()}`;
  o.sums.set(key, (o.sums.get(key) ?? 0n) + BigInt(r.amountIn));
}

/** `raw` in human units of a token with `decimals` (exact). */
function units(raw: bigint, decimals: number): string {
  const s = raw.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole;
}

function describeExposure(e: Exposure): string {
  if (e.signatures === 0) return 'no signature of this scope is still valid on-chain';
  const sums = e.amountIn.map((a) => (a.amount ? `${a.amount} ${a.symbol}` : `${a.raw} of ${a.token}`));
  return (
    `still valid on-chain: ${e.signatures} signature${e.signatures === 1 ? '' : 's'}` +
    `${sums.length > 0 ? `, amountIn ${sums.join(' + ')}` : ''}, the last until ${iso(e.validUntil * 1000)}` +
    ' (a halt cannot recall them: docs/operations/halts.md#the-on-chain-stop)'
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function age(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function tripText(h: Pick<HaltRecord, 'trip'>): string {
  return h.trip ? ` [limit ${h.trip.limit} tripped: value ${h.trip.value}, threshold ${h.trip.threshold}]` : '';
}

/** "halted since <time>", or "halted" for an unreadable trip (core's parseLedgerTrips), which has no time to trust. */
function sinceText(h: HaltRecord, at?: number): string {
  if (h.at === 0) return 'halted';
  return `halted since ${iso(h.at)}${at === undefined ? '' : ` (${age(at - h.at)})`}`;
}

function describeHalt(h: HaltRecord, at: number): string {
  return `${haltScopeName(h.scope)}  ${sinceText(h, at)} by ${h.by}: ${h.reason}${tripText(h)}`;
}

function haltJson(h: HaltRecord) {
  return {
    scope: h.scope,
    name: haltScopeName(h.scope),
    kind: haltScopeKind(h.scope),
    reason: h.reason,
    by: h.by,
    at: iso(h.at),
    ...(h.trip ? { trip: h.trip } : {}),
  };
}

function eventJson(e: HaltEvent) {
  return { id: e.id, action: e.action, ...haltJson(e) };
}
