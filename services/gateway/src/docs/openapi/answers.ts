/**
 * The answers the public routes can give besides their 200: those every route shares (before
 * routing, 405, 401, 429, 500) and each route's own. responses.ts groups them by status.
 */
import { DEFAULT_MAX_FEE } from '@pmm/protocol';
import { BODY_LIMIT, MAX_HEADER_BYTES, RATE_LIMIT, seconds, SIGN_DEADLINE_MS, TIMEOUT_MS, TIMEOUTS } from './limits';
import { STAGE_HEADERS, type Answer } from './responses';

// ---- answers every route shares ------------------------------------------------------------

const { beforeRouting, beforeLimiter, limited, route, failure, unavailable } = STAGE_HEADERS;

/** Answered by Node's HTTP parser or the request timeout on any path, before routing. */
export const BEFORE_ROUTING: Answer[] = [
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
    description: `Request headers larger than ${MAX_HEADER_BYTES / 1024} KiB in total (Node's limit). Answered by any path, before routing.`,
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

/** A /v1 path of a deployment that does not serve chain 8453 (docs/decisions/0030-legacy-v1.md). */
export const NOT_FOUND: Answer = {
  code: 'NOT_FOUND',
  shared: 'NotFound',
  description: 'Unknown route (checked first, before the API key); the /v1 paths when chain 8453 is not served.',
  headers: [...beforeLimiter],
  examples: { NOT_FOUND: 'no route for GET /v1/price' },
};

export const UNAUTHORIZED: Answer = {
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
export const COMMON: Answer[] = [...BEFORE_ROUTING, METHOD_NOT_ALLOWED, UNAUTHORIZED, RATE_LIMITED, INTERNAL_ERROR];

export const unavailableAnswer = (description: string, examples: Record<string, string>): Answer => ({
  code: 'SERVICE_UNAVAILABLE',
  description,
  headers: [...unavailable],
  examples,
});

/**
 * 503 HALTED: the operator halted signing in a scope that covers the request (docs/api-refusals.md#halts).
 * `what` says what the route withholds.
 */
export const haltedAnswer = (what: string, example: string): Answer => ({
  code: 'HALTED',
  description: `${what} The operator halted signing in a scope that covers this request: everything, the chain, the pair, your integrator or the user address. The message names which kind, never why. A halt has no announced end: \`Retry-After\` (60 s) is a polling pace, not a promise; the SDK does not retry it.`,
  headers: [...unavailable],
  examples: { HALTED: example },
});

export const routeAnswer = (code: Answer['code'], description: string, examples: Record<string, string>): Answer => ({
  code,
  description,
  headers: [...route],
  examples,
});

// ---- the routes' own answers ---------------------------------------------------------------

/** A query's `chainId` not served, or not enabled for the key. */
export const UNSUPPORTED_CHAIN_QUERY: Answer = routeAnswer(
  'UNSUPPORTED_CHAIN',
  'A `chainId` that is well-formed but not served, or not enabled for this API key.',
  {
    UNSUPPORTED_CHAIN: 'chainId: 1 is not served (served: 8453, 56, 4663)',
    UNSUPPORTED_CHAIN_KEY: 'chainId: 56 is not enabled for this API key',
  },
);

export const CHAIN_QUERY_ANSWERS: Answer[] = [
  routeAnswer('UNSUPPORTED_FIELD', 'An unknown query parameter (only `chainId` is defined; the message names it).', {
    UNSUPPORTED_FIELD: 'chainid: unsupported query parameter (only chainId is defined)',
  }),
  UNSUPPORTED_CHAIN_QUERY,
];

export const chainQueryInvalid = (extra: string, examples: Record<string, string> = {}): Answer =>
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

export const SIGN_ANSWERS = (v1: boolean): Answer[] => [
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
  {
    ...routeAnswer(
      'QUOTA_EXCEEDED',
      "The API key's integrator has used up its daily quota of signatures on this chain (per UTC day; set per integrator, else the deployment's default). `Retry-After` is the seconds until 00:00 UTC.",
      {
        QUOTA_EXCEEDED:
          "this API key's daily quota of 100000 signatures on chain 8453 is used up; it renews at 00:00 UTC",
      },
    ),
    headers: [...limited],
  },
  haltedAnswer('No signature.', 'signing is halted for this pair by the operator; retry later'),
  {
    code: 'PAIR_UNAVAILABLE',
    description:
      'The pair is not offered for the moment (and is left out of `/v2/price`): the maker withholds it until its price is good again, usually within seconds. A sign with `amountIn` may also get it for that amount alone. The message never says why. Retry after `Retry-After` (seconds).',
    headers: [...unavailable],
    examples: { PAIR_UNAVAILABLE: 'this pair is not offered for the moment; retry after the time given' },
  },
  unavailableAnswer(
    `The signer is unreachable${v1 ? '' : ", or the chain's pair list is not loaded yet (bootstrapping)"}; or the service is over capacity (refused at once, never queued behind late work); or the sign could not be answered within its deadline (${SIGN_DEADLINE_MS} ms from when the request arrived, whatever step it had reached: an answer after it would come too late to use). Retry shortly (\`Retry-After\`).`,
    {
      SERVICE_UNAVAILABLE: 'signer unavailable, retry shortly',
      SERVICE_UNAVAILABLE_OVERLOAD: 'over capacity right now; retry shortly',
      SERVICE_UNAVAILABLE_DEADLINE: 'this sign could not be answered within its deadline; retry shortly',
    },
  ),
];
