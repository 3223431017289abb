/**
 * `GET /v2/fills`: an integrator's own signatures of a period and what became of each on-chain
 * (docs/api.md#get-v2fills--your-signatures-fates, docs/operations/ledger.md#fills-each-signatures-fate). The fate is
 * computed by core's signature-fates.ts (the operator's `npm run fills` uses the same function);
 * this file is the wire shape and its JSON schema, which the OpenAPI document and the SDK take.
 */
import { KNOWN_CHAIN_IDS } from '../chains/chains';
import { UINT_STRING_PATTERN } from '../requests/parse-uint';

export type FillFateKind = 'executed' | 'reverted' | 'unused' | 'pending';

/** One sign request's signature and its fate (field order: the JSON's). */
export interface FillFate {
  chainId: number;
  /** Public id of the API key that asked. */
  keyId: string;
  /** The service's id of the sign request (its `X-Request-Id` answer header). */
  requestId: string;
  /** The `X-Request-Id` the integrator sent with the sign request, when it sent one. */
  clientRequestId?: string;
  /** Lowercase hex. */
  signature: string;
  /** Unix ms of the signing; the signed `timestamp` and `deadline` (Unix seconds). */
  signedAt: number;
  quoteTimestamp: number;
  deadline?: number;
  /** A firm quote: signed on /v2 with `amountIn` (the answer had `amountOut`). */
  firm: boolean;
  /** `WETH/USDC` when the ledger names the tokens; else `tokenIn/tokenOut` addresses. */
  pair: string;
  fate: FillFateKind;
  /** Router calls that carried it: swaps that executed, calls that reverted. */
  executions: number;
  reverts: number;
  /** executed: the first swap; reverted: the last reverted call. */
  txHash?: string;
  blockNumber?: number;
  blockTime?: number;
  /** executed: seconds from `quoteTimestamp` to the block's time; for a firm quote, blocks from its quote's block. */
  delaySeconds?: number;
  delayBlocks?: number;
  /** executed: what the router paid (raw units of tokenOut); for a firm quote of those amounts, what it quoted and the gap in bps. */
  amountOut?: string;
  quotedAmountOut?: string;
  executedVsQuotedBps?: number;
  /** reverted: the router's error (`QuoteExpired`, `InsufficientOutput`, …). */
  reason?: string;
}

/** The body of a `GET /v2/fills` 200. */
export interface FillsResponse {
  chainId: number;
  /** The period asked for, Unix seconds, `from` inclusive, `to` exclusive, by signing time. */
  from: number;
  to: number;
  /**
   * The last block the chain's ledger holds and its time: a fate is final once this time is past
   * its deadline (before, `pending`). null before the ledger's first block.
   */
  ledger: { blockNumber: number; blockTime: number | null } | null;
  /** This page's signatures, in signing order. */
  fates: FillFate[];
  /** The `cursor` of the next page of the period; null when this page ends it. */
  next: string | null;
}

const HEX_PATTERN = '^0x[0-9a-f]*$';
const UNIX_SECONDS = { type: 'integer', format: 'int64', minimum: 0 } as const;

export const FILL_FATE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: [
    'chainId',
    'keyId',
    'requestId',
    'signature',
    'signedAt',
    'quoteTimestamp',
    'firm',
    'pair',
    'fate',
    'executions',
    'reverts',
  ],
  properties: {
    chainId: { type: 'integer', enum: [...KNOWN_CHAIN_IDS] },
    keyId: { type: 'string' },
    requestId: { type: 'string' },
    clientRequestId: { type: 'string' },
    signature: { type: 'string', pattern: HEX_PATTERN },
    signedAt: { type: 'integer', format: 'int64', minimum: 0 },
    quoteTimestamp: UNIX_SECONDS,
    deadline: UNIX_SECONDS,
    firm: { type: 'boolean' },
    pair: { type: 'string' },
    fate: { type: 'string', enum: ['executed', 'reverted', 'unused', 'pending'] },
    executions: { type: 'integer', minimum: 0 },
    reverts: { type: 'integer', minimum: 0 },
    txHash: { type: 'string', pattern: HEX_PATTERN },
    blockNumber: { type: 'integer', format: 'int64', minimum: 0 },
    blockTime: UNIX_SECONDS,
    delaySeconds: { type: 'integer' },
    delayBlocks: { type: 'integer' },
    amountOut: { type: 'string', pattern: UINT_STRING_PATTERN },
    quotedAmountOut: { type: 'string', pattern: UINT_STRING_PATTERN },
    executedVsQuotedBps: { type: 'number' },
    reason: { type: 'string' },
  },
} as const;

export const FILLS_RESPONSE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['chainId', 'from', 'to', 'ledger', 'fates', 'next'],
  properties: {
    chainId: { type: 'integer', enum: [...KNOWN_CHAIN_IDS] },
    from: UNIX_SECONDS,
    to: UNIX_SECONDS,
    ledger: {
      oneOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['blockNumber', 'blockTime'],
          properties: {
            blockNumber: { type: 'integer', format: 'int64', minimum: 0 },
            blockTime: { oneOf: [UNIX_SECONDS, { type: 'null' }] },
          },
        },
        { type: 'null' },
      ],
    },
    fates: { type: 'array', items: { $ref: '#/components/schemas/FillFate' } },
    next: { oneOf: [{ type: 'string' }, { type: 'null' }] },
  },
} as const;
