/**
 * The sign decision after the body has been parsed: which chain, which pair, which user, and
 * the signature. Pure apart from the signer it is given (no Redis, no clock: `nowMs` is passed).
 * Synchronous with a key in memory; a promise with a key in a hardware module (whose outage is
 * SERVICE_UNAVAILABLE, from signSwapQuote).
 *
 * Precedence (docs/decisions/0001-error-precedence.md, after VALIDATION_ERROR), first match wins:
 *   UNSUPPORTED_CHAIN (not served, or not enabled for this integrator) ·
 *   SERVICE_UNAVAILABLE (no pair registry yet) · PAIR_NOT_FOUND · ADDRESS_NOT_WHITELISTED ·
 *   SIGNING_FAILED / ENCODING_FAILED · anything else INTERNAL_ERROR.
 *
 * Legacy `/v1` (docs/decisions/0030-legacy-v1.md) has no UNSUPPORTED_CHAIN, PAIR_NOT_FOUND or
 * SERVICE_UNAVAILABLE; with `legacy: true` the same conditions map to:
 *   integrator not enabled for 8453 → 401 UNAUTHORIZED (the key is not valid for /v1's only chain);
 *   no pair registry yet            → 422 VALIDATION_ERROR (consistent with /v1/price, which
 *                                     then shows an empty book: no pair is tradable yet);
 *   pair not tracked                → 422 VALIDATION_ERROR (same message as v2's PAIR_NOT_FOUND).
 */
import {
  ApiError,
  assertServedChain,
  encodeSwapCalldata,
  signSwapQuote,
  slippageMinimum,
  type KeySigner,
  type LegacySignSwapResponse,
  type PairRegistry,
  type ParsedSignRequest,
  type SignedSwapQuote,
  type SignSwapResponse,
  type TokenInfo,
} from '@pmm/protocol';
import type { IntegratorView } from '../store/integrator-store';

/** The body of a 200 (spec 2.3): the protocol's shape. */
export type SignQuoteResponse = SignSwapResponse;

export interface SignQuoteContext {
  servedChains: readonly number[];
  /** The cached registry of a chain (undefined: not bootstrapped). */
  registry(chainId: number): PairRegistry | undefined;
  integrator: IntegratorView;
  signer(chainId: number): KeySigner | undefined;
  /** The chain's configured originRate (the integrator's override wins over it). */
  originRate(chainId: number): bigint;
  /** The chain's router validity in seconds (undefined only for a chain that is not served). */
  validitySeconds(chainId: number): number | undefined;
  /** Unix milliseconds now. */
  nowMs: number;
  /** Legacy `/v1` code mapping (see the file comment). */
  legacy?: boolean;
}

/** The exact amount of a sign with `amountIn` on /v2 (sign-use-case.ts gets it before signing). */
export interface FirmAmount {
  /** What the router's `swap` pays, net of the fee, in the state of `blockNumber`. */
  amountOut: bigint;
  blockNumber: number;
}

/** What was signed, for the response, logs and metrics. */
export interface SignedQuote {
  /** The answer's body: without `deadline` on legacy `/v1`. */
  response: SignQuoteResponse | LegacySignSwapResponse;
  /** Unix seconds: the last block timestamp at which the router accepts the quote. */
  deadline: number;
  chainId: number;
  digest: string;
  signature: string;
  signerAddress: string;
  originRate: bigint;
  /** The calldata's minimum (with `amountIn`) and the firm amount (with `amountIn`, /v2). */
  minAmountOut?: bigint;
  firm?: FirmAmount;
}

/** Token lookups of a registry by lowercase address, built once per registry object. */
interface RegistryIndex {
  quote: string;
  bases: Map<string, TokenInfo>;
}

const indexes = new WeakMap<PairRegistry, RegistryIndex>();

function indexOf(registry: PairRegistry): RegistryIndex {
  let idx = indexes.get(registry);
  if (!idx) {
    idx = {
      quote: registry.quoteToken.address.toLowerCase(),
      bases: new Map(registry.baseTokens.map((t) => [t.address.toLowerCase(), t])),
    };
    indexes.set(registry, idx);
  }
  return idx;
}

/** `symbol` when the token is known on this chain, else what another chain calls it, else the address. */
function nameOf(address: string, chainId: number, ctx: SignQuoteContext): string {
  const lower = address.toLowerCase();
  const here = ctx.registry(chainId);
  if (here) {
    const idx = indexOf(here);
    if (idx.quote === lower) return here.quoteToken.symbol;
    const base = idx.bases.get(lower);
    if (base) return base.symbol;
  }
  for (const other of ctx.servedChains) {
    const r = other === chainId ? undefined : ctx.registry(other);
    if (!r) continue;
    const idx = indexOf(r);
    const t = idx.quote === lower ? r.quoteToken : idx.bases.get(lower);
    if (t) return `${address} (${t.symbol} on chain ${other})`;
  }
  return address;
}

function pairError(ctx: SignQuoteContext, message: string): ApiError {
  return new ApiError(ctx.legacy ? 'VALIDATION_ERROR' : 'PAIR_NOT_FOUND', message);
}

/**
 * docs/decisions/0007-pairs.md: exactly one leg must be the chain's quote token and the
 * other a tracked base token. The message names the wrong leg and the quote token expected.
 */
function assertTrackedPair(req: ParsedSignRequest, registry: PairRegistry, ctx: SignQuoteContext): void {
  const idx = indexOf(registry);
  const inLower = req.tokenIn.toLowerCase();
  const outLower = req.tokenOut.toLowerCase();
  const inIsQuote = inLower === idx.quote;
  const outIsQuote = outLower === idx.quote;
  const q = registry.quoteToken;
  const chain = req.chainId;
  const expected = `the quote token there is ${q.symbol} (${q.address})`;
  // tokenIn !== tokenOut was checked by the parser, so at most one leg is the quote token.
  if (inIsQuote || outIsQuote) {
    const [leg, other] = inIsQuote ? (['tokenOut', req.tokenOut] as const) : (['tokenIn', req.tokenIn] as const);
    if (idx.bases.has(other.toLowerCase())) return;
    const listed =
      registry.baseTokens.length === 0
        ? 'none'
        : registry.baseTokens
            .slice(0, 20)
            .map((t) => t.symbol)
            .join(', ');
    throw pairError(
      ctx,
      `${leg}: ${nameOf(other, chain, ctx)} is not a tracked base token on chain ${chain} (pairs there are against ${q.symbol}; base tokens: ${listed})`,
    );
  }
  const inBase = idx.bases.get(inLower);
  const outBase = idx.bases.get(outLower);
  const pair = (base: string, quote: string) => `pair ${base}/${quote} is not tracked on chain ${chain}`;
  if (inBase && !outBase)
    throw pairError(ctx, `tokenOut: ${pair(inBase.symbol, nameOf(req.tokenOut, chain, ctx))}; ${expected}`);
  if (outBase && !inBase)
    throw pairError(ctx, `tokenIn: ${pair(outBase.symbol, nameOf(req.tokenIn, chain, ctx))}; ${expected}`);
  if (inBase && outBase) {
    throw pairError(
      ctx,
      `tokenOut: ${pair(inBase.symbol, outBase.symbol)}: every pair there is against ${q.symbol}, so one leg must be ${q.symbol} (${q.address})`,
    );
  }
  throw pairError(
    ctx,
    `tokenIn, tokenOut: ${pair(nameOf(req.tokenIn, chain, ctx), nameOf(req.tokenOut, chain, ctx))}: neither token is listed there; ${expected}`,
  );
}

/** Runs every check after the parse, in precedence order; returns the registry in use. */
export function checkSignRequest(req: ParsedSignRequest, ctx: SignQuoteContext): PairRegistry {
  const chain = req.chainId;
  // /v1 is only mounted when 8453 is served, so this cannot fire there.
  assertServedChain(chain, ctx.servedChains);
  if (ctx.integrator.chains.size > 0 && !ctx.integrator.chains.has(chain)) {
    if (ctx.legacy)
      throw new ApiError('UNAUTHORIZED', `this API key is not enabled for chain ${chain}, the only chain of /v1`);
    throw new ApiError('UNSUPPORTED_CHAIN', `chainId: ${chain} is not enabled for this API key`);
  }
  const registry = ctx.registry(chain);
  if (!registry) {
    if (ctx.legacy) {
      throw new ApiError(
        'VALIDATION_ERROR',
        `tokenIn, tokenOut: no pair is tradable on chain ${chain} yet (the pair list is still loading); retry shortly`,
      );
    }
    throw new ApiError(
      'SERVICE_UNAVAILABLE',
      `chain ${chain}: the pair list is not loaded yet (bootstrapping); retry shortly`,
    );
  }
  assertTrackedPair(req, registry, ctx);
  if (!ctx.integrator.whitelist.has(req.userAddress.toLowerCase())) {
    throw new ApiError(
      'ADDRESS_NOT_WHITELISTED',
      `userAddress: ${req.userAddress} is not whitelisted for this API key`,
    );
  }
  return registry;
}

/**
 * Checks and signs a parsed request. Throws ApiError with the codes of the file comment;
 * an unexpected exception propagates (rendered as INTERNAL_ERROR).
 */
export function signQuote(req: ParsedSignRequest, ctx: SignQuoteContext): SignedQuote | Promise<SignedQuote> {
  checkSignRequest(req, ctx);
  return signCheckedQuote(req, ctx);
}

/**
 * Signs a request {@link checkSignRequest} passed. With `firm` (a /v2 sign with `amountIn`) the
 * answer carries `amountOut`, `minAmountOut` and `blockNumber`, and a `slippageBps` request's
 * calldata minimum is derived from `firm.amountOut`.
 */
export function signCheckedQuote(
  req: ParsedSignRequest,
  ctx: SignQuoteContext,
  firm?: FirmAmount,
): SignedQuote | Promise<SignedQuote> {
  const signer = ctx.signer(req.chainId);
  const validitySeconds = ctx.validitySeconds(req.chainId);
  // Start-up refuses to serve a chain without a key; reaching this is a wiring bug.
  if (!signer || validitySeconds === undefined)
    throw new Error(`no signer or validity for served chain ${req.chainId}`);
  const originRate = ctx.integrator.originRates.get(req.chainId) ?? ctx.originRate(req.chainId);
  const seconds = Math.floor(ctx.nowMs / 1000);
  const timestamp = BigInt(seconds);
  // signSwapQuote throws ENCODING_FAILED (digest or verificationData), SERVICE_UNAVAILABLE (the
  // key's module is down) or SIGNING_FAILED itself.
  const signed = signSwapQuote(signer, {
    tokenIn: req.tokenIn,
    tokenOut: req.tokenOut,
    timestamp,
    fee: req.fee,
    originRate,
    userAddress: req.userAddress,
  });
  const answer = (s: SignedSwapQuote) =>
    signedAnswer(req, ctx, s, { signer, validitySeconds, originRate, seconds, firm });
  return signed instanceof Promise ? signed.then(answer) : answer(signed);
}

/** The answer of a signed quote: response body (with calldata when amountIn was sent) and what the log needs. */
function signedAnswer(
  req: ParsedSignRequest,
  ctx: SignQuoteContext,
  signed: SignedSwapQuote,
  p: { signer: KeySigner; validitySeconds: number; originRate: bigint; seconds: number; firm?: FirmAmount },
): SignedQuote {
  const { signer, validitySeconds, originRate, seconds, firm } = p;
  const timestamp = BigInt(seconds);
  const deadline = seconds + validitySeconds;
  // Field order is the JSON's: deadline right after the timestamp it is counted from. The
  // legacy /v1 answer keeps the earlier interface's fields (docs/decisions/0027-the-quote-deadline.md).
  const response: SignQuoteResponse | LegacySignSwapResponse = ctx.legacy
    ? { verificationData: signed.verificationData, timestamp: seconds }
    : { verificationData: signed.verificationData, timestamp: seconds, deadline };
  let minAmountOut: bigint | undefined;
  if (req.amountIn !== undefined) {
    minAmountOut =
      firm && req.slippageBps !== undefined ? slippageMinimum(firm.amountOut, req.slippageBps) : req.minAmountOut;
    try {
      response.calldata = encodeSwapCalldata({
        tokenIn: req.tokenIn,
        amountIn: req.amountIn,
        tokenOut: req.tokenOut,
        minAmountOut,
        quoteTimestamp: timestamp,
        verificationData: signed.verificationData,
      });
    } catch (err) {
      throw new ApiError(
        'ENCODING_FAILED',
        `encoding failed: calldata: ${err instanceof Error ? err.message : 'unknown error'}`,
      );
    }
    if (firm && !ctx.legacy) {
      const v2 = response as SignQuoteResponse;
      v2.amountOut = firm.amountOut.toString();
      v2.minAmountOut = minAmountOut.toString();
      v2.blockNumber = firm.blockNumber;
    }
  }
  return {
    response,
    deadline,
    chainId: req.chainId,
    digest: signed.digest,
    signature: signed.signature,
    signerAddress: signer.address,
    originRate,
    ...(minAmountOut === undefined ? {} : { minAmountOut }),
    ...(firm ? { firm } : {}),
  };
}
