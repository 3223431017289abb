/**
 * The OpenAPI 3.1 document of the public API, generated: paths and methods from the route
 * table (http/routes.ts), body schemas from @pmm/protocol (wire-schemas.ts, sign-request.ts),
 * error codes and statuses from protocol's ERROR_STATUS, header patterns from protocol's
 * headers.ts. What is written here is the prose and which codes each route can send.
 * `npm run openapi` writes it to services/gateway/openapi/openapi.json; a test fails when that
 * file differs from this output, and Redocly's `recommended` rules lint it with no warning.
 */
import { maxHeaderSize } from 'node:http';
import {
  DEFAULT_MAX_FEE,
  KNOWN_CHAIN_IDS,
  ORDERBOOK_LEVEL_SCHEMA,
  ORDERBOOK_RESPONSE_SCHEMA,
  PAIR_ORDERBOOK_SCHEMA,
  SIGN_REQUEST_SCHEMA,
  SIGN_RESPONSE_SCHEMA,
  V1_ORDERBOOK_RESPONSE_SCHEMA,
  V1_SIGN_REQUEST_SCHEMA,
} from '@pmm/protocol';
import { GATEWAY_SETTINGS, gatewayTimeouts } from '../config';
import { ROUTES, type PublicRoute, type RouteName } from '../http/routes';
import { ComponentSet, STAGE_HEADERS, type Answer, type HeaderUse } from './responses';

type Json = Record<string, unknown>;

/** A setting's default: the limits the document states are the defaults (a deployment may change them). */
function defaultOf<T>(setting: { env: string; default?: T }): T {
  if (setting.default === undefined) throw new Error(`${setting.env} has no default`);
  return setting.default;
}
const TIMEOUT_MS = defaultOf(GATEWAY_SETTINGS.requestTimeoutMs);
const TIMEOUTS = gatewayTimeouts({ requestTimeoutMs: TIMEOUT_MS });
const BODY_LIMIT = defaultOf(GATEWAY_SETTINGS.signBodyLimit);
const RATE_LIMIT = defaultOf(GATEWAY_SETTINGS.defaultRateLimit);
const RATE_WINDOW_SECONDS = defaultOf(GATEWAY_SETTINGS.defaultRateWindowSeconds);
const STREAMS_PER_KEY = defaultOf(GATEWAY_SETTINGS.streamsPerKey);
const HEARTBEAT_MS = defaultOf(GATEWAY_SETTINGS.streamHeartbeatMs);
const seconds = (ms: number) => ms / 1000;

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

// ---- answers every route shares ------------------------------------------------------------

const { beforeRouting, beforeLimiter, limited, route, failure, unavailable } = STAGE_HEADERS;

/** Answered by Node's HTTP parser or the request timeout on any path, before routing. */
const BEFORE_ROUTING: Answer[] = [
  {
    code: 'MALFORMED_REQUEST',
    shared: 'MalformedRequest',
    description:
      'Not a valid HTTP/1.1 request (bad request line or method, invalid or NUL characters in a header, duplicate or conflicting `Content-Length`, invalid chunking, unsupported HTTP version). Answered by any path, before routing.',
    headers: [...beforeRouting],
    examples: { MALFORMED_REQUEST: 'malformed HTTP request (HPE_INVALID_HEADER_TOKEN)' },
  },
  {
    code: 'REQUEST_TIMEOUT',
    shared: 'RequestTimeout',
    description: `The request headers did not arrive within the headers timeout (${seconds(TIMEOUTS.headersMs)} s), or the whole request within the request timeout (${seconds(TIMEOUTS.requestMs)} s). Answered by any path.`,
    headers: [...beforeRouting],
    examples: { REQUEST_TIMEOUT: 'request headers or body not received in time' },
  },
  {
    code: 'PAYLOAD_TOO_LARGE',
    shared: 'ChunkExtensionsTooLarge',
    description: 'Chunk extensions of a chunked body larger than the server accepts. Answered by any path.',
    headers: [...beforeRouting],
    examples: { CHUNK_EXTENSIONS: 'body: chunk extensions larger than the server accepts' },
  },
  {
    code: 'EXPECTATION_FAILED',
    shared: 'ExpectationFailed',
    description: 'An `Expect` header other than `100-continue`. Answered by any path, before routing.',
    headers: [...beforeRouting],
    examples: { EXPECTATION_FAILED: 'Expect: only 100-continue is supported' },
  },
  {
    code: 'HEADERS_TOO_LARGE',
    shared: 'HeadersTooLarge',
    description: `Request headers larger than ${maxHeaderSize / 1024} KiB in total (Node's limit). Answered by any path, before routing.`,
    headers: [...beforeRouting],
    examples: { HEADERS_TOO_LARGE: 'request headers larger than the server accepts' },
  },
];

const METHOD_NOT_ALLOWED: Answer = {
  code: 'METHOD_NOT_ALLOWED',
  shared: 'MethodNotAllowed',
  description: 'Known path, wrong method (checked before the API key). `Allow` lists the methods the path accepts.',
  headers: [...beforeLimiter, { name: 'Allow', required: true }],
  examples: { METHOD_NOT_ALLOWED: 'DELETE is not allowed here' },
};

/** A /v1 path of a deployment that does not serve chain 8453 (docs/decisions.md#legacy-v1). */
const NOT_FOUND: Answer = {
  code: 'NOT_FOUND',
  shared: 'NotFound',
  description: 'Unknown route (checked first, before the API key); the /v1 paths when chain 8453 is not served.',
  headers: [...beforeLimiter],
  examples: { NOT_FOUND: 'no route for GET /v1/price' },
};

const UNAUTHORIZED: Answer = {
  code: 'UNAUTHORIZED',
  shared: 'Unauthorized',
  description: 'Missing, unknown, disabled or revoked API key (checked before everything but 404/405).',
  headers: [...beforeLimiter],
  examples: { UNAUTHORIZED: 'X-API-KEY: invalid, disabled or revoked API key' },
};

const RATE_LIMITED: Answer = {
  code: 'RATE_LIMITED',
  shared: 'RateLimited',
  description: "Over the integrator's rate limit. Retry after `Retry-After` seconds.",
  headers: [...limited],
  examples: {
    RATE_LIMITED: `rate limit of ${RATE_LIMIT} requests per window exceeded; retry in 17 s`,
  },
};

const INTERNAL_ERROR: Answer = {
  code: 'INTERNAL_ERROR',
  shared: 'InternalError',
  description: 'Unexpected server error (no details are ever returned).',
  headers: [...failure],
  examples: { INTERNAL_ERROR: 'internal error' },
};

/** The answers of every authenticated route, before its own. */
const COMMON: Answer[] = [...BEFORE_ROUTING, METHOD_NOT_ALLOWED, UNAUTHORIZED, RATE_LIMITED, INTERNAL_ERROR];

const unavailableAnswer = (description: string, examples: Record<string, string>): Answer => ({
  code: 'SERVICE_UNAVAILABLE',
  description,
  headers: [...unavailable],
  examples,
});

const routeAnswer = (code: Answer['code'], description: string, examples: Record<string, string>): Answer => ({
  code,
  description,
  headers: [...route],
  examples,
});

// ---- the routes' own answers ---------------------------------------------------------------

const CHAIN_QUERY_ANSWERS: Answer[] = [
  routeAnswer('UNSUPPORTED_FIELD', 'An unknown query parameter (only `chainId` is defined; the message names it).', {
    UNSUPPORTED_FIELD: 'chainid: unsupported query parameter (only chainId is defined)',
  }),
  routeAnswer('UNSUPPORTED_CHAIN', 'A `chainId` that is well-formed but not served, or not enabled for this API key.', {
    UNSUPPORTED_CHAIN: 'chainId: 1 is not served (served: 8453, 56, 4663)',
    UNSUPPORTED_CHAIN_KEY: 'chainId: 56 is not enabled for this API key',
  }),
];

const chainQueryInvalid = (extra: string, examples: Record<string, string> = {}): Answer =>
  routeAnswer(
    'VALIDATION_ERROR',
    `\`chainId\` is not one base-10 unsigned integer (sign, space, letters, empty value or a repeated parameter)${extra}.`,
    {
      VALIDATION_ERROR: 'chainId: must be a base-10 unsigned integer (ASCII digits only)',
      VALIDATION_ERROR_REPEATED: 'chainId: must be given at most once',
      ...examples,
    },
  );

const INVALID_JSON = routeAnswer(
  'INVALID_JSON',
  'Empty, malformed or non-object JSON, a key that appears twice in one object, or a body that does not decode with its `Content-Encoding` (gzip, deflate, br) or is truncated.',
  {
    INVALID_JSON: 'body: malformed JSON',
    INVALID_JSON_DUPLICATE_KEY: 'body: duplicate key "fee"',
    INVALID_JSON_ENCODING: 'body: does not decode with its Content-Encoding',
  },
);

const SIGN_ANSWERS = (v1: boolean): Answer[] => [
  routeAnswer('PAYLOAD_TOO_LARGE', `Body larger than ${BODY_LIMIT / 1024} KiB (deployment setting SIGN_BODY_LIMIT).`, {
    PAYLOAD_TOO_LARGE: `body: larger than ${BODY_LIMIT} bytes`,
  }),
  {
    code: 'REQUEST_TIMEOUT',
    description: `The body did not arrive in full within the request timeout (${seconds(TIMEOUT_MS)} s), e.g. shorter than its \`Content-Length\`. The connection is closed.`,
    headers: [...failure],
    examples: { REQUEST_TIMEOUT_BODY: `body: not received in full within ${TIMEOUT_MS} ms` },
  },
  INVALID_JSON,
  routeAnswer(
    'UNSUPPORTED_FIELD',
    v1 ? 'A field the body may not have (`chainId` included).' : 'A field the body may not have.',
    { UNSUPPORTED_FIELD: v1 ? 'chainId: unsupported field' : 'referrer: unsupported field' },
  ),
  routeAnswer(
    'VALIDATION_ERROR',
    `A field failed validation; the message names the field as sent: \`<field>: <reason>\`.${v1 ? ' On /v1 also an untracked pair.' : ''}`,
    {
      VALIDATION_ERROR: 'userAddress: must be a 0x-prefixed 20-byte hex address',
      VALIDATION_ERROR_FEE: `fee: must be at most ${DEFAULT_MAX_FEE}`,
    },
  ),
  ...(v1
    ? []
    : [
        routeAnswer('UNSUPPORTED_CHAIN', 'The chain is not served, or not enabled for this API key.', {
          UNSUPPORTED_CHAIN: 'chainId: 1 is not served (served: 8453, 56, 4663)',
        }),
        routeAnswer('PAIR_NOT_FOUND', 'The pair is not tracked on the chain.', {
          PAIR_NOT_FOUND: 'tokenIn/tokenOut: one side must be the quote token of chain 56 (USDT)',
        }),
      ]),
  routeAnswer('ADDRESS_NOT_WHITELISTED', "`userAddress` is not whitelisted for this API key's integrator.", {
    ADDRESS_NOT_WHITELISTED:
      'userAddress: 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 is not whitelisted for this API key',
  }),
  routeAnswer('SIGNING_FAILED', 'The signer could not sign (no details are ever returned).', {
    SIGNING_FAILED: 'signing failed',
  }),
  routeAnswer('ENCODING_FAILED', 'The calldata could not be encoded (no details are ever returned).', {
    ENCODING_FAILED: 'encoding failed',
  }),
  unavailableAnswer(
    `The signer is unreachable or did not answer within the request timeout (${seconds(TIMEOUT_MS)} s)${v1 ? '' : ", or the chain's pair list is not loaded yet (bootstrapping)"}. Retry shortly.`,
    { SERVICE_UNAVAILABLE: 'signer unavailable, retry shortly' },
  ),
];

// ---- examples --------------------------------------------------------------------------------

const BOOK_PAIRS = [
  {
    baseToken: '0x4200000000000000000000000000000000000006',
    quoteToken: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    bids: [
      { price: '3012.45', amount: '1.5' },
      { price: '3011.9', amount: '2.25' },
    ],
    asks: [
      { price: '3013.1', amount: '1.5' },
      { price: '3013.75', amount: '2.25' },
    ],
  },
];
const BOOK = { chainId: 8453, blockNumber: 23456789, blockTime: 1767225600, pairs: BOOK_PAIRS };
const { chainId: _chainId, ...V1_BOOK } = BOOK;
const SIGN_BODY = {
  chainId: 8453,
  tokenIn: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  tokenOut: '0x4200000000000000000000000000000000000006',
  fee: '30',
  userAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
};
const SIGN_AMOUNTS = { amountIn: '1000000000', minAmountOut: '330000000000000000' };
const { chainId: _signChainId, ...V1_SIGN_BODY } = SIGN_BODY;
const VERIFICATION_DATA =
  '0x000000000000000000000000000000000000000000000000000000000000001e000000000000000000000000000000000000000000000000000000000000000000000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c800000000000000000000000000000000000000000000000000000000000000800000000000000000000000000000000000000000000000000000000000000041abababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababab1b00000000000000000000000000000000000000000000000000000000000000';
const SIGNED = { verificationData: VERIFICATION_DATA, timestamp: 1767225600 };
const SIGNED_WITH_CALLDATA = {
  ...SIGNED,
  calldata: '0xa1b2c3d40000000000000000000000000000000000000000000000000000000000000000',
};

// ---- operations ------------------------------------------------------------------------------

interface Operation {
  operationId: string;
  summary: string;
  description: string;
  parameters?: Json[];
  requestBody?: { schema: string; examples: Record<string, unknown> };
  success: { description: string; content: Json };
  answers: Answer[];
}

const chainIdParameter = (extra: string): Json => ({
  name: 'chainId',
  in: 'query',
  required: false,
  description: `Chain to read: one value of ASCII digits only; omitted or \`0\` means 8453. Anything else (sign, space, letters, empty value, repeated parameter) is 422; a well-formed id that is not served, however large, is 400 UNSUPPORTED_CHAIN.${extra}`,
  schema: { type: 'string', pattern: '^[0-9]+$', examples: [...KNOWN_CHAIN_IDS.map(String), '0'] },
});

const json = (schema: string, examples: Record<string, unknown>): Json => ({
  'application/json': {
    schema: { $ref: `#/components/schemas/${schema}` },
    examples: Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { value }])),
  },
});

const OPERATIONS: Record<RouteName, Operation> = {
  price: {
    operationId: 'getPrice',
    summary: 'Latest orderbook of one chain',
    description:
      "Bids and asks of every tracked pair (base token / the chain's quote token), refreshed on every new block. Levels are marginal (independent price points, not cumulative depth); prices are quote token per base token and amounts are base-token quantities, both exact decimal strings in human units. Served from a cache that is at most 1 s behind the store; a book that disappears from the store (node connection lost) stops being served within 1 s. Also answers `HEAD`.",
    parameters: [
      chainIdParameter(
        ' Any other query parameter (a misspelt `chainid` included) is 400 UNSUPPORTED_FIELD naming it.',
      ),
    ],
    success: {
      description:
        "The chain's latest orderbook, exactly as computed at `blockNumber`. `pairs` may be empty when the chain is live but tracks no pairs.",
      content: json('OrderbookResponse', { book: BOOK }),
    },
    answers: [
      ...CHAIN_QUERY_ANSWERS,
      chainQueryInvalid(''),
      unavailableAnswer(
        'The chain has no live orderbook (bootstrapping, or the node connection is down), or the book store is unreachable. Never an empty or stale book. Retry shortly.',
        { SERVICE_UNAVAILABLE: 'chainId: 8453 has no live orderbook yet, retry shortly' },
      ),
    ],
  },
  priceStream: {
    operationId: 'getPriceStream',
    summary: 'Live orderbook of one chain (Server-Sent Events)',
    description: `The chain's books as a stream of Server-Sent Events instead of polling \`/v2/price\`. Each new book is one event: \`event: book\`, \`id: <blockNumber>\`, \`data:\` the exact bytes \`GET /v2/price\` would answer for that block (one line). On connect the current book is sent at once (or \`unavailable\` when there is none). When the chain's book disappears (node connection lost, bootstrapping) the stream sends \`event: unavailable\` with the \`SERVICE_UNAVAILABLE\` error envelope as \`data\` (no \`id\`), then books again once one is live. A stream never receives a block older than the last it received; it receives the same block again only right after \`unavailable\`. Reconnect with \`Last-Event-ID\` (browsers' EventSource does it for you): the current book is sent only if it is newer than that id. A comment line (\`: keep-alive\`) comes at least every ${seconds(HEARTBEAT_MS)} s. A client that reads too slowly skips to the latest book (books it could not take are dropped, never queued). The stream spends one request of the rate limit when it opens; open streams per API key are limited (default ${STREAMS_PER_KEY}, across every gateway instance): one more is 429 RATE_LIMITED. Errors before the stream starts are ordinary JSON responses in the error envelope. The gateway ends streams when it shuts down: reconnect with \`Last-Event-ID\`. Also answers \`HEAD\` (headers only, no slot taken).`,
    parameters: [
      chainIdParameter(''),
      {
        name: 'Last-Event-ID',
        in: 'header',
        required: false,
        description:
          'The `id` of the last event received (a block number), sent when reconnecting: the current book is then sent only if it is newer. Anything but ASCII digits is 422.',
        schema: { type: 'string', pattern: '^[0-9]{1,16}$', examples: ['12345678'] },
      },
    ],
    success: {
      description:
        "The stream: `text/event-stream`, open until the client leaves or the gateway shuts down. Events: `book` (id = blockNumber, data = the `/v2/price` body, see OrderbookResponse) and `unavailable` (data = the error envelope ServiceUnavailableError, with this request's id).",
      content: {
        'text/event-stream': {
          schema: { type: 'string', description: "Server-Sent Events (see the operation's description)." },
          example:
            'event: book\nid: 12345678\ndata: {"chainId":8453,"blockNumber":12345678,"blockTime":1767225600,"pairs":[]}\n\n: keep-alive\n\nevent: unavailable\ndata: {"error":{"code":"SERVICE_UNAVAILABLE","message":"chainId: 8453 has no live orderbook, retry shortly","requestId":"6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"}}\n\n',
        },
      },
    },
    answers: [
      ...CHAIN_QUERY_ANSWERS,
      chainQueryInvalid(', or `Last-Event-ID` is not a block number', {
        LAST_EVENT_ID: 'Last-Event-ID: must be the id of an event of this stream',
      }),
      {
        ...routeAnswer(
          'RATE_LIMITED',
          'The API key already has its limit of open streams (across every gateway instance). Retry after `Retry-After` seconds (the longest a stream of a stopped gateway instance can hold its slot), or close a stream first.',
          { STREAM_LIMIT: `open streams limit of ${STREAMS_PER_KEY} per API key reached` },
        ),
        headers: [...limited],
      },
      unavailableAnswer(
        'The store that counts open streams (or the API key store) is unreachable, or the request timed out before the stream started. Retry shortly. (A chain without a live book is not an error: the stream opens and sends `unavailable`.)',
        { SERVICE_UNAVAILABLE: 'stream slots unreachable, retry shortly' },
      ),
    ],
  },
  sign: {
    operationId: 'signQuote',
    summary: 'Sign a swap quote',
    description:
      "Signs a swap quote for the router's `swap` on the selected chain. The body is forwarded unchanged to the internal signer. Checks, first match wins: 401 · 429 · 413 · 400 INVALID_JSON · 400 UNSUPPORTED_FIELD · 422 VALIDATION_ERROR · 400 UNSUPPORTED_CHAIN · 503 SERVICE_UNAVAILABLE · 400 PAIR_NOT_FOUND · 403 ADDRESS_NOT_WHITELISTED · 500 SIGNING_FAILED / ENCODING_FAILED. `calldata` is present if and only if `amountIn` was sent.",
    requestBody: {
      schema: 'SignQuoteRequest',
      examples: { withCalldata: { ...SIGN_BODY, ...SIGN_AMOUNTS }, signatureOnly: SIGN_BODY },
    },
    success: {
      description: 'Signed quote.',
      content: json('SignQuoteResponse', { withCalldata: SIGNED_WITH_CALLDATA, withoutCalldata: SIGNED }),
    },
    answers: SIGN_ANSWERS(false),
  },
  openapi: {
    operationId: 'getOpenApi',
    summary: 'This OpenAPI document',
    description: 'Like every route under /v2/, needs an API key.',
    success: {
      description: 'This document.',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['openapi', 'info', 'paths'],
            properties: {
              openapi: { type: 'string', const: '3.1.0' },
              info: { type: 'object' },
              paths: { type: 'object' },
            },
          },
        },
      },
    },
    answers: [
      unavailableAnswer('The key store is unreachable, or the request timed out. Retry shortly.', {
        SERVICE_UNAVAILABLE: 'API key store unreachable, retry shortly',
      }),
    ],
  },
  v1Price: {
    operationId: 'getPriceV1',
    summary: 'Orderbook of chain 8453 (legacy)',
    description:
      'Legacy form of `GET /v2/price`: chain 8453 only; a `chainId` query parameter is ignored; the body has no `chainId`. Deprecated: use `/v2/price`. Also answers `HEAD`.\n\nAny query parameter is ignored, as in the earlier form.',
    success: {
      description:
        'The chain-8453 orderbook without `chainId`. Before the first book (bootstrapping, or no live node), `{"blockNumber":0,"blockTime":0,"pairs":[]}`, as the earlier interface did.',
      content: json('V1OrderbookResponse', {
        book: V1_BOOK,
        beforeFirstBook: { blockNumber: 0, blockTime: 0, pairs: [] },
      }),
    },
    answers: [
      unavailableAnswer(
        'The book store is unreachable (an infrastructure failure, not a chain state). Retry shortly.',
        {
          SERVICE_UNAVAILABLE: 'orderbook store unreachable, retry shortly',
        },
      ),
    ],
  },
  v1Sign: {
    operationId: 'signQuoteV1',
    summary: 'Sign a swap quote on chain 8453 (legacy)',
    description:
      'Legacy form of `POST /v2/swap/sign`: chain 8453 only; the body has no `chainId` (sending one is 400 UNSUPPORTED_FIELD); an untracked pair is 422 VALIDATION_ERROR (v1 has no PAIR_NOT_FOUND or UNSUPPORTED_CHAIN). Deprecated: use `/v2/swap/sign`.',
    requestBody: {
      schema: 'V1SignQuoteRequest',
      examples: { withCalldata: { ...V1_SIGN_BODY, ...SIGN_AMOUNTS }, signatureOnly: V1_SIGN_BODY },
    },
    success: {
      description: 'Signed quote.',
      content: json('SignQuoteResponse', { withCalldata: SIGNED_WITH_CALLDATA, withoutCalldata: SIGNED }),
    },
    answers: SIGN_ANSWERS(true),
  },
};

/** /v1 answers carry Deprecation and Link (docs/decisions.md#legacy-v1), except before routing. */
const V1_HEADERS: HeaderUse[] = [
  { name: 'Deprecation', required: true },
  { name: 'Link', required: true },
];
function legacy(answer: Answer): Answer {
  if (BEFORE_ROUTING.includes(answer) || answer === NOT_FOUND) return answer;
  const examples =
    answer === UNAUTHORIZED
      ? {
          ...answer.examples,
          UNAUTHORIZED_CHAIN: 'X-API-KEY: this API key is not enabled for chain 8453, the only chain of /v1',
        }
      : answer.examples;
  return { ...answer, shared: undefined, headers: [...answer.headers, ...V1_HEADERS], examples };
}

/** The 405 of one path: the shared answer, naming the path's methods. */
const methodNotAllowed = (methods: readonly string[]) =>
  `Known path, wrong method (checked before the API key): this path answers ${methods.join(', ')}, the value of \`Allow\`. \`CONNECT\` is answered 405 too (and the connection closed).`;

function operation(name: RouteName, routeInfo: PublicRoute, components: ComponentSet): Json {
  const op = OPERATIONS[name];
  const answers = [...COMMON, ...op.answers].map((a) => (routeInfo.legacy ? legacy(a) : a));
  if (routeInfo.legacy) answers.push(NOT_FOUND);
  const successHeaders = [...route, ...(routeInfo.legacy ? V1_HEADERS : [])];
  return {
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: [routeInfo.legacy ? 'v1' : 'v2'],
    ...(routeInfo.legacy ? { deprecated: true } : {}),
    ...(op.parameters ? { parameters: op.parameters } : {}),
    ...(op.requestBody
      ? { requestBody: { required: true, content: json(op.requestBody.schema, op.requestBody.examples) } }
      : {}),
    responses: {
      200: {
        description: op.success.description,
        headers: Object.fromEntries(successHeaders.map((h) => [h.name, components.header(h)])),
        content: op.success.content,
      },
      ...components.errorResponses(answers, { 405: methodNotAllowed(routeInfo.methods) }),
    },
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
    'Input amount in wei (canonical base-10 integer string, 1 … 2^256−1). When present, the response has `calldata`.',
  minAmountOut:
    "Minimum output in wei of tokenOut (0 … 2^256−1, default 0); used only with `amountIn`. Scale with the token's own decimals (USDT has 18 on chain 56, USDC 6 on 8453).",
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
      description: `Every route under \`/v1/\` and \`/v2/\` needs the header \`X-API-KEY\` (issued by the operator, who also whitelists your signing addresses and sets your allowed chains and rate limit).

**Errors.** Every error, including 404, 405, 413 and 429, is \`{"error":{"code","message","requestId"}}\`. Validation messages read \`<field>: <reason>\` with the field named as you sent it. Checks run in this order, first match wins: unknown route 404 NOT_FOUND · wrong method 405 METHOD_NOT_ALLOWED (with \`Allow\`) · missing/invalid key 401 UNAUTHORIZED · over the rate limit 429 RATE_LIMITED (with \`Retry-After\`) · body over ${BODY_LIMIT / 1024} KiB 413 PAYLOAD_TOO_LARGE · 400 INVALID_JSON · 400 UNSUPPORTED_FIELD · 422 VALIDATION_ERROR · 400 UNSUPPORTED_CHAIN · 503 SERVICE_UNAVAILABLE · 400 PAIR_NOT_FOUND · 403 ADDRESS_NOT_WHITELISTED · 500 SIGNING_FAILED · 500 ENCODING_FAILED · 500 INTERNAL_ERROR. The codes 404, 405, 413, 429 and 403 extend the interface specification.

**Answers before routing.** A request Node's HTTP parser rejects, or that arrives too slowly, is answered in the same envelope (with \`X-Request-Id\`) and the connection is closed: 400 MALFORMED_REQUEST (not valid HTTP/1.1), 408 REQUEST_TIMEOUT (headers not in within ${seconds(TIMEOUTS.headersMs)} s, or the whole request within ${seconds(TIMEOUTS.requestMs)} s; a sign body still arriving after ${seconds(TIMEOUT_MS)} s is 408 too), 413 PAYLOAD_TOO_LARGE (oversized chunk extensions), 417 EXPECTATION_FAILED (\`Expect\` other than \`100-continue\`), 431 HEADERS_TOO_LARGE (headers over ${maxHeaderSize / 1024} KiB), 405 METHOD_NOT_ALLOWED for \`CONNECT\`. These are the shared responses MalformedRequest, RequestTimeout, ChunkExtensionsTooLarge, ExpectationFailed and HeadersTooLarge, listed on every path. No client behaviour is answered with a 5xx.

**Request id.** Every response carries \`X-Request-Id\` (yours when you send a safe token of 1–128 characters \`[A-Za-z0-9._:-]\`, else a new UUID); it is also \`error.requestId\`. Quote it when you contact the operator.

**Rate limit.** Per integrator (all its keys together), shared by every gateway instance: a fixed window aligned to the epoch (default ${RATE_LIMIT} requests per ${RATE_WINDOW_SECONDS} s; the operator sets yours). Every authenticated response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` (seconds until the window ends); a refused request is 429 with \`Retry-After\` (seconds).

**Timeouts and availability.** A request received in full but unanswered after ${seconds(TIMEOUT_MS)} s is 503 SERVICE_UNAVAILABLE; so is a request that cannot reach the signer or the store. 503 is always safe to retry after a short delay.

**Versions.** \`/v1\` is the earlier form (chain 8453 only, no \`chainId\`, no UNSUPPORTED_CHAIN / PAIR_NOT_FOUND codes). Its responses carry \`Deprecation: true\` and a \`Link\` header to the \`/v2\` successor.

**Chains.** 8453 (default; quote token USDC, 6 decimals), 56 (USDT, 18 decimals), 4663 (USDG, 6 decimals). Amounts in wei must be scaled with the decimals of the token they are in.

**Swap flow.** 1) \`POST /v2/swap/sign\` with \`amountIn\` (and \`minAmountOut\` for slippage protection); 2) approve the chain's router for \`amountIn\` of \`tokenIn\`; 3) send \`calldata\` to the router from \`userAddress\` (or call \`swap(tokenIn, amountIn, tokenOut, minAmountOut, timestamp, verificationData)\`), before the quote expires (60 s on the reference router). The signature is bound to \`userAddress\`, the tokens, the fee and the timestamp, not to the chain.`,
      // info-license (Redocly recommended): the service is proprietary; the license says so.
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [
      {
        url: '{base_url}',
        variables: { base_url: { default: 'http://127.0.0.1:8080', description: "The gateway's address." } },
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
          calldata:
            "Present if and only if `amountIn` was sent: the ABI-encoded call `swap(address,uint256,address,uint256,uint256,bytes)` with (tokenIn, amountIn, tokenOut, minAmountOut, timestamp, verificationData); send it to the chain's router from `userAddress`.",
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
