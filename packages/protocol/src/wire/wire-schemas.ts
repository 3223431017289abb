/**
 * JSON schemas (draft 2020-12) of the bodies the public API answers, next to the TypeScript
 * types they describe (orderbook.ts, sign-wire.ts, error-envelope.ts). The OpenAPI document is
 * generated from these (services/gateway/src/docs/openapi), so the document and the code share one definition;
 * the gateway's contract tests validate every response they see against it. Field descriptions
 * are documentation and are added by the generator. `$ref`s point at the document's
 * `#/components/schemas/<Name>` under the names used here.
 */
import { KNOWN_CHAIN_IDS } from '../chains/chains';
import { ERROR_CODES, type ErrorCode } from '../errors/error-codes';
import { ADDRESS_PATTERN } from '../requests/parse-address';
import { UINT_STRING_PATTERN } from '../requests/parse-uint';
import { SIGN_REQUEST_SCHEMA } from '../requests/sign-request';

/** An exact, non-negative decimal string (prices and amounts of a book). */
const DECIMAL_STRING_PATTERN = '^[0-9]+(\\.[0-9]+)?$';
/** Lower-case 0x-prefixed hex of whole bytes, as the signer writes it. */
const HEX_BYTES_PATTERN = '^0x([0-9a-f]{2})*$';

export const ORDERBOOK_LEVEL_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['price', 'amount'],
  properties: {
    price: { type: 'string', pattern: DECIMAL_STRING_PATTERN },
    amount: { type: 'string', pattern: DECIMAL_STRING_PATTERN },
  },
} as const;

export const PAIR_ORDERBOOK_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['baseToken', 'quoteToken', 'bids', 'asks'],
  properties: {
    baseToken: { type: 'string', pattern: ADDRESS_PATTERN },
    quoteToken: { type: 'string', pattern: ADDRESS_PATTERN },
    bids: { type: 'array', items: { $ref: '#/components/schemas/OrderbookLevel' } },
    asks: { type: 'array', items: { $ref: '#/components/schemas/OrderbookLevel' } },
  },
} as const;

/** `GET /v2/price` (OrderbookResponse). */
export const ORDERBOOK_RESPONSE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['chainId', 'blockNumber', 'blockTime', 'pairs'],
  properties: {
    chainId: { type: 'integer', enum: [...KNOWN_CHAIN_IDS] },
    blockNumber: { type: 'integer', minimum: 0 },
    blockTime: { type: 'integer', minimum: 0 },
    pairs: { type: 'array', items: { $ref: '#/components/schemas/PairOrderbook' } },
  },
} as const;

/** Legacy `GET /v1/price`: the v2 body without `chainId`. */
export const V1_ORDERBOOK_RESPONSE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['blockNumber', 'blockTime', 'pairs'],
  properties: {
    blockNumber: ORDERBOOK_RESPONSE_SCHEMA.properties.blockNumber,
    blockTime: ORDERBOOK_RESPONSE_SCHEMA.properties.blockTime,
    pairs: ORDERBOOK_RESPONSE_SCHEMA.properties.pairs,
  },
} as const;

/** Fields of the v2 sign request that legacy /v1 rejects (400 UNSUPPORTED_FIELD). */
const V2_ONLY_SIGN_FIELDS: readonly string[] = ['chainId', 'slippageBps'];

/** Legacy `POST /v1/swap/sign`: the v2 request without `chainId` and `slippageBps` (which /v1 rejects). */
export const V1_SIGN_REQUEST_SCHEMA = {
  ...SIGN_REQUEST_SCHEMA,
  properties: Object.fromEntries(
    Object.entries(SIGN_REQUEST_SCHEMA.properties).filter(([name]) => !V2_ONLY_SIGN_FIELDS.includes(name)),
  ),
};

/** `POST /v2/swap/sign` 200 (SignSwapResponse). */
export const SIGN_RESPONSE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['verificationData', 'timestamp', 'deadline'],
  properties: {
    verificationData: { type: 'string', pattern: HEX_BYTES_PATTERN },
    timestamp: { type: 'integer', format: 'int64', minimum: 0 },
    deadline: { type: 'integer', format: 'int64', minimum: 0 },
    calldata: { type: 'string', pattern: HEX_BYTES_PATTERN },
    amountOut: { type: 'string', pattern: UINT_STRING_PATTERN },
    minAmountOut: { type: 'string', pattern: UINT_STRING_PATTERN },
    blockNumber: { type: 'integer', format: 'int64', minimum: 0 },
  },
} as const;

/** Legacy `POST /v1/swap/sign` 200 (LegacySignSwapResponse): the v2 answer without `deadline`. */
export const V1_SIGN_RESPONSE_SCHEMA = {
  ...SIGN_RESPONSE_SCHEMA,
  required: ['verificationData', 'timestamp'],
  properties: {
    verificationData: SIGN_RESPONSE_SCHEMA.properties.verificationData,
    timestamp: SIGN_RESPONSE_SCHEMA.properties.timestamp,
    calldata: SIGN_RESPONSE_SCHEMA.properties.calldata,
  },
} as const;

/** The error envelope (ErrorEnvelope) whose `code` is one of `codes` (every code by default). */
export function errorEnvelopeSchema(codes: readonly ErrorCode[] = ERROR_CODES) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        additionalProperties: false,
        required: ['code', 'message', 'requestId'],
        properties: {
          code: codes.length === 1 ? { type: 'string', const: codes[0] } : { type: 'string', enum: [...codes] },
          message: { type: 'string' },
          requestId: { type: 'string' },
        },
      },
    },
  };
}
