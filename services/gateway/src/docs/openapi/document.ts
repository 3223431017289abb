/**
 * The OpenAPI 3.1 document of the public API, generated: paths and methods from the route
 * declaration (http/public-routes.ts), body schemas from @pmm/protocol (wire-schemas.ts, sign-request.ts),
 * error codes and statuses from protocol's ERROR_STATUS, header patterns from protocol's
 * headers.ts, stated limits from the settings (limits.ts). Written by hand: the prose, which
 * codes each route can send (answers.ts) and each route's operation (operations.ts);
 * responses.ts groups the answers by status and collects the `$ref`ed components.
 * `npm run openapi` writes it to services/gateway/openapi/openapi.json; a test fails when that
 * file differs from this output, and Redocly's `recommended` rules lint it with no warning.
 */
import {
  DEFAULT_MAX_FEE,
  FILL_FATE_SCHEMA,
  FILLS_RESPONSE_SCHEMA,
  ORDERBOOK_LEVEL_SCHEMA,
  ORDERBOOK_RESPONSE_SCHEMA,
  PAIR_ORDERBOOK_SCHEMA,
  SIGN_REQUEST_SCHEMA,
  SIGN_RESPONSE_SCHEMA,
  V1_SIGN_RESPONSE_SCHEMA,
  V1_ORDERBOOK_RESPONSE_SCHEMA,
  V1_SIGN_REQUEST_SCHEMA,
} from '@pmm/protocol';
import { ROUTES, type PublicRoute, type RouteName } from '../../http/public-routes';
import { DEFAULT_BASE_URL } from './code-samples';
import {
  BODY_LIMIT,
  MAX_HEADER_BYTES,
  RATE_LIMIT,
  RATE_WINDOW_SECONDS,
  seconds,
  SIGN_DEADLINE_MS,
  TIMEOUT_MS,
  TIMEOUTS,
} from './limits';
import { operation } from './operations';
import { ComponentSet } from './responses';

type Json = Record<string, unknown>;

/** Adds a `description` to each named property of a schema (the shape stays protocol's). */
function describe(schema: Json, description: string, fields: Record<string, string>): Json {
  const properties = schema.properties as Record<string, Json>;
  return {
    ...schema,
    description,
    properties: Object.fromEntries(
      Object.entries(properties).map(([name, s]) => [name, fields[name] ? { ...s, description: fields[name] } : s]),
    ),
  };
}

const LEVEL_SCHEMAS = {
  OrderbookLevel: describe(ORDERBOOK_LEVEL_SCHEMA, 'One price level of a book.', {
    price:
      'Quote token per base token, exact decimal string with at most 12 significant digits (rounded against the taker: bids down, asks up). Adjacent levels never share a price.',
    amount: 'Base-token quantity in human units, exact decimal string.',
  }),
};

const SIGN_FIELDS: Record<string, string> = {
  chainId:
    'Chain of the swap; omitted or 0 means 8453. A JSON integer; any other type, a negative or a fractional number is 422; a well-formed id that is not served is 400 UNSUPPORTED_CHAIN.',
  tokenIn:
    "Input token on that chain. Exactly one of tokenIn/tokenOut must be the chain's quote token, the other a tracked base token (else 400 PAIR_NOT_FOUND). Must differ from tokenOut; not the zero address.",
  tokenOut: 'Output token on that chain.',
  fee: `Fee in units of 0.1 bps as a canonical base-10 integer string (no sign, no leading zeros, no spaces): \`1\` = 0.1 bps, \`10\` = 1 bps, \`30\` = 3 bps, \`100\` = 10 bps. Range 0 … maxFee (deployment setting MAX_FEE, default ${DEFAULT_MAX_FEE} = ${Number(DEFAULT_MAX_FEE) / 1000}%).`,
  userAddress:
    "Address that will submit the swap; must be whitelisted for the API key's integrator (else 403 ADDRESS_NOT_WHITELISTED).",
  amountIn:
    'Input amount in wei (canonical base-10 integer string, 1 … 2^256−1). When present, the response has `calldata` and the exact `amountOut` the router pays at `blockNumber` (503 SERVICE_UNAVAILABLE when it cannot be had in time: no live state, never a guess; 422 when the router cannot fill it).',
  minAmountOut:
    "Minimum output in wei of tokenOut (0 … 2^256−1, default 0); used only with `amountIn`. Scale with the token's own decimals (USDT has 18 on chain 56, USDC 6 on 8453). Not together with `slippageBps`.",
  slippageBps:
    "Only with `amountIn`, not with `minAmountOut` (422 otherwise): the calldata's minimum is `floor(amountOut × (10000 − slippageBps) / 10000)`. A JSON integer 0 … 10000.",
};

const FATE_FIELDS: Record<string, string> = {
  chainId: 'The chain.',
  keyId: "The public id of the API key that asked (your integrator's keys).",
  requestId: "The service's id of the sign request: the `X-Request-Id` of its answer.",
  clientRequestId: 'The `X-Request-Id` you sent with the sign request, when you sent one.',
  signature: 'The signature given (lowercase hex), as in `verificationData`.',
  signedAt: 'Unix milliseconds of the signing.',
  quoteTimestamp: 'The signed `timestamp` (Unix seconds).',
  deadline: 'The last block timestamp at which the router accepted it (Unix seconds).',
  firm: 'A firm quote: signed on /v2 with `amountIn` (the answer had `amountOut`).',
  pair: '`BASE/QUOTE` by symbol (e.g. `WETH/USDC`); the two token addresses when the ledger has not named them.',
  fate: "`executed` (a swap carried it), `reverted` (no swap, a router call carrying it reverted), `unused` (neither, and the ledger has passed its `deadline`), `pending` (its window is still open in the ledger's time).",
  executions: 'Swaps that carried it.',
  reverts: 'Router calls carrying it that reverted (within ten minutes after its `deadline`).',
  txHash: "`executed`: the first swap's transaction; `reverted`: the last reverted call's.",
  blockNumber: 'The block of that transaction.',
  blockTime: 'Unix seconds of that block.',
  delaySeconds: '`executed`: seconds from `quoteTimestamp` to the block.',
  delayBlocks: '`executed`, firm quotes: blocks from the block the quote was made at.',
  amountOut: '`executed`: what the router paid (wei of tokenOut).',
  quotedAmountOut: "`executed` with the firm quote's very amounts: what it quoted (wei).",
  executedVsQuotedBps:
    '`executed`: (paid − quoted) / quoted, in basis points (0.01 bp precision); negative when less was paid.',
  reason:
    "`reverted`: the router's error (`QuoteExpired`, `InsufficientOutput`, `InsufficientReserve`, `WrongSender`, `InvalidSignature`, …; `CallerReverted` when the router call succeeded and the contract that made it reverted after it).",
};

/** The whole document (the bytes `npm run openapi` writes: `JSON.stringify(doc, null, 2)`). */
export function buildOpenApiDocument(): Json {
  const components = new ComponentSet();
  const paths: Json = {};
  for (const [name, routeInfo] of Object.entries(ROUTES) as [RouteName, PublicRoute][]) {
    const method = routeInfo.methods.includes('POST') ? 'post' : 'get';
    paths[routeInfo.path] = { [method]: operation(name, routeInfo, components) };
  }
  const { headers, responses, errorSchemas } = components.components();
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'PMM quote service',
      version: '2.0.0',
      summary: "Signed swap quotes and per-block orderbooks for a market maker's router on chains 8453, 56 and 4663.",
      description: `Every route under \`/v1/\` and \`/v2/\` needs the header \`X-API-KEY\` (issued by the operator, who also whitelists your signing addresses and sets your allowed chains and rate limit). The examples read it from \`$PMM_API_KEY\`.

**This reference** is served by the gateway without a key: as a page at \`/docs\`, and as this document at \`/docs/openapi.json\` (the same bytes as \`/v2/openapi.json\`).

**Errors.** Every error, including 404, 405, 413 and 429, is \`{"error":{"code","message","requestId"}}\`. Validation messages read \`<field>: <reason>\` with the field named as you sent it. Checks run in this order, first match wins: unknown route 404 NOT_FOUND · wrong method 405 METHOD_NOT_ALLOWED (with \`Allow\`) · missing/invalid key 401 UNAUTHORIZED · over the rate limit 429 RATE_LIMITED (with \`Retry-After\`) · body over ${BODY_LIMIT / 1024} KiB 413 PAYLOAD_TOO_LARGE · 400 INVALID_JSON · 400 UNSUPPORTED_FIELD · 422 VALIDATION_ERROR · 503 HALTED (with \`Retry-After\`) · 400 UNSUPPORTED_CHAIN · 503 SERVICE_UNAVAILABLE · 400 PAIR_NOT_FOUND · 403 ADDRESS_NOT_WHITELISTED · 503 PAIR_UNAVAILABLE (with \`Retry-After\`) · 500 SIGNING_FAILED · 500 ENCODING_FAILED · 429 QUOTA_EXCEEDED (with \`Retry-After\`) · 500 INTERNAL_ERROR. The codes 404, 405, 413, 429 and 403 extend the interface specification.

**Answers before routing.** A request Node's HTTP parser rejects, or that arrives too slowly, is answered in the same envelope (with \`X-Request-Id\`) and the connection is closed: 400 MALFORMED_REQUEST (not valid HTTP/1.1), 408 REQUEST_TIMEOUT (headers not in within ${seconds(TIMEOUTS.headersMs)} s, or the whole request within ${seconds(TIMEOUTS.requestMs)} s; a sign body still arriving after ${seconds(TIMEOUT_MS)} s is 408 too), 413 PAYLOAD_TOO_LARGE (oversized chunk extensions), 417 EXPECTATION_FAILED (\`Expect\` other than \`100-continue\`), 431 HEADERS_TOO_LARGE (headers over ${MAX_HEADER_BYTES / 1024} KiB), 405 METHOD_NOT_ALLOWED for \`CONNECT\`. These are the shared responses MalformedRequest, RequestTimeout, ChunkExtensionsTooLarge, ExpectationFailed and HeadersTooLarge, listed on every path. No client behaviour is answered with a 5xx.

**Request id.** Every response carries \`X-Request-Id\` (yours when you send a safe token of 1–128 characters \`[A-Za-z0-9._:-]\`, else a new UUID); it is also \`error.requestId\`. Quote it when you contact the operator.

**Rate limit.** Per integrator (all its keys together), shared by every gateway instance: a fixed window aligned to the epoch (default ${RATE_LIMIT} requests per ${RATE_WINDOW_SECONDS} s; the operator sets yours). Every authenticated response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` (seconds until the window ends); a refused request is 429 with \`Retry-After\` (seconds).

**Timeouts and availability.** A sign not answered within its deadline (${SIGN_DEADLINE_MS} ms from when the request arrived) is 503 SERVICE_UNAVAILABLE then, whatever step it had reached, and so is a sign that comes while the service is over capacity, at once: a fast refusal rather than an answer too late to use. Any other request received in full but unanswered after ${seconds(TIMEOUT_MS)} s is 503 SERVICE_UNAVAILABLE; so is a request that cannot reach the signer or the store. 503 SERVICE_UNAVAILABLE is always safe to retry after a short delay; 503 HALTED means the operator halted signing in a scope that covers the request (everything, the chain, the pair, your integrator or the user address): it lasts until the operator lifts it, with no announced end.

**Versions.** \`/v1\` is the earlier form (chain 8453 only, no \`chainId\`, no UNSUPPORTED_CHAIN / PAIR_NOT_FOUND codes). Its responses carry \`Deprecation: true\` and a \`Link\` header to the \`/v2\` successor.

**Chains.** 8453 (default; quote token USDC, 6 decimals), 56 (USDT, 18 decimals), 4663 (USDG, 6 decimals). Amounts in wei must be scaled with the decimals of the token they are in.

**Swap flow.** 1) \`POST /v2/swap/sign\` with \`amountIn\` (and \`minAmountOut\` for slippage protection); 2) approve the chain's router for \`amountIn\` of \`tokenIn\`; 3) send \`calldata\` to the router from \`userAddress\` (or call \`swap(tokenIn, amountIn, tokenOut, minAmountOut, timestamp, verificationData)\`) so that it is mined in a block whose timestamp is at most the answer's \`deadline\` (timestamp + the router's validity: 60 s on the reference router); in any later block the router reverts \`QuoteExpired\`. The signature is bound to \`userAddress\`, the tokens, the fee and the timestamp, not to the chain.`,
      // info-license (Redocly recommended): the repository's license (LICENSE), the SDK's too.
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      {
        url: '{base_url}',
        variables: { base_url: { default: DEFAULT_BASE_URL, description: "The gateway's address." } },
      },
    ],
    security: [{ ApiKey: [] }],
    tags: [
      { name: 'v2', description: 'Current interface.' },
      { name: 'v1', description: 'Earlier interface, chain 8453 only (deprecated).' },
    ],
    paths,
    components: {
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-KEY',
          description:
            'The API key issued by the operator (`pmm_` followed by 43 characters). Keep it secret; the operator can rotate or revoke it.',
        },
      },
      headers,
      responses,
      schemas: {
        ...LEVEL_SCHEMAS,
        PairOrderbook: describe(PAIR_ORDERBOOK_SCHEMA, 'The book of one pair.', {
          baseToken: 'The traded token.',
          quoteToken:
            "The chain's quote token (USDC on 8453, USDT on 56, USDG on 4663); the same for every pair of the chain.",
          bids: 'Levels at which the market maker buys the base token, best (highest) price first.',
          asks: 'Levels at which the market maker sells the base token, best (lowest) price first.',
        }),
        OrderbookResponse: describe(
          ORDERBOOK_RESPONSE_SCHEMA,
          'The body of `GET /v2/price` and the data of a `book` event.',
          {
            chainId: 'The resolved chain (8453 when the request omitted `chainId` or sent 0).',
            blockNumber: 'Block at which the book was computed, on that chain.',
            blockTime: 'Unix time in seconds of that block.',
            pairs: 'One entry per tracked pair of the chain. Empty when the chain is live but tracks no pairs.',
          },
        ),
        V1OrderbookResponse: describe(V1_ORDERBOOK_RESPONSE_SCHEMA, 'The body of legacy `GET /v1/price`.', {
          blockNumber: 'Block at which the book was computed, on that chain. 0 before the first book.',
          blockTime: 'Unix time in seconds of that block. 0 before the first book.',
          pairs: 'One entry per tracked pair of the chain. Empty before the first book.',
        }),
        SignQuoteRequest: describe(
          SIGN_REQUEST_SCHEMA,
          'Unknown fields are rejected with 400 UNSUPPORTED_FIELD.',
          SIGN_FIELDS,
        ),
        V1SignQuoteResponse: describe(V1_SIGN_RESPONSE_SCHEMA, 'A signed quote, in the earlier form: no `deadline`.', {
          verificationData:
            "ABI encoding of (uint256 fee, uint256 originRate, address userAddress, bytes signature); pass it unchanged to the router's `swap`.",
          timestamp: 'Unix seconds at which the quote was signed; pass it unchanged as `quoteTimestamp`.',
          calldata:
            'Present if and only if `amountIn` was sent: as in the /v2 answer (no `amountOut`, `minAmountOut` or `blockNumber` on /v1).',
        }),
        V1SignQuoteRequest: describe(
          V1_SIGN_REQUEST_SCHEMA,
          'Unknown fields are rejected with 400 UNSUPPORTED_FIELD (including `chainId`, which /v1 does not have).',
          {
            ...SIGN_FIELDS,
            tokenIn:
              "Input token on that chain. Exactly one of tokenIn/tokenOut must be the chain's quote token, the other a tracked base token (else 422 VALIDATION_ERROR on /v1). Must differ from tokenOut; not the zero address.",
          },
        ),
        SignQuoteResponse: describe(SIGN_RESPONSE_SCHEMA, 'A signed quote.', {
          verificationData:
            "ABI encoding of (uint256 fee, uint256 originRate, address userAddress, bytes signature); pass it unchanged to the router's `swap`.",
          timestamp: 'Unix seconds at which the quote was signed; pass it unchanged as `quoteTimestamp`.',
          deadline:
            "Unix seconds, like `timestamp`: the last block timestamp at which the chain's router accepts this quote (`timestamp` + the router's validity, 60 s on the reference router). A swap mined in a later block reverts `QuoteExpired`; do not send one that cannot be mined by then.",
          calldata:
            "Present if and only if `amountIn` was sent: the ABI-encoded call `swap(address,uint256,address,uint256,uint256,bytes)` with (tokenIn, amountIn, tokenOut, minAmountOut, timestamp, verificationData); send it to the chain's router from `userAddress`.",
          amountOut:
            "Present if and only if `amountIn` was sent: wei of tokenOut, exact, net of the fee: what the router's `swap` pays for `amountIn` in the state of block `blockNumber` (the router's own `quote()` there, less the fee). A swap mined while that state holds receives exactly this.",
          minAmountOut:
            'Present if and only if `amountIn` was sent: the minimum the calldata encodes (as sent, default 0, or derived from `amountOut` and `slippageBps`).',
          blockNumber:
            'Present if and only if `amountIn` was sent: the block `amountOut` is exact for; never older than the book `GET /v2/price` serves for the chain.',
        }),
        FillFate: describe(FILL_FATE_SCHEMA, 'One of your signatures and what became of it on-chain.', FATE_FIELDS),
        FillsResponse: describe(FILLS_RESPONSE_SCHEMA, 'The body of `GET /v2/fills`: one page of a period.', {
          chainId: 'The resolved chain.',
          from: 'The period asked for, Unix seconds (inclusive), by signing time.',
          to: 'The period asked for, Unix seconds (exclusive).',
          ledger:
            "The last block the maker's ledger holds on the chain and its time: a fate is final once this time is past its `deadline`. null before the ledger's first block (every fate pending).",
          fates: 'Your signatures of this page, in signing order.',
          next: 'Pass as `cursor` (with the same period) to read the rest of the period; null when this page ends it.',
        }),
        ...errorSchemas,
      },
    },
  };
}

/** The document's bytes as committed and served. */
export function renderOpenApiDocument(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}
