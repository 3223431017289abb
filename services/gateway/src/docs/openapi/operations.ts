/**
 * One OpenAPI operation per route of the route table: its prose, parameters, request and
 * 200 bodies with examples, curl commands made from those examples (code-samples.ts), and its
 * error answers (answers.ts) grouped into responses.
 */
import { FILLS_MAX_PERIOD_SECONDS, FILLS_QUERY_SCHEMA, KNOWN_CHAIN_IDS } from '@pmm/protocol';
import { FILLS_PAGE } from '../../fills/fills-route';
import { ROUTES, type PublicRoute, type RouteName } from '../../http/public-routes';
import {
  BEFORE_ROUTING,
  CHAIN_QUERY_ANSWERS,
  chainQueryInvalid,
  COMMON,
  NOT_FOUND,
  routeAnswer,
  SIGN_ANSWERS,
  UNAUTHORIZED,
  haltedAnswer,
  unavailableAnswer,
  UNSUPPORTED_CHAIN_QUERY,
} from './answers';
import { curlGet, curlPost, type CodeSample } from './code-samples';
import { HEARTBEAT_MS, seconds, STREAMS_PER_KEY } from './limits';
import { STAGE_HEADERS, type Answer, type ComponentSet, type HeaderUse } from './responses';

type Json = Record<string, unknown>;

const { limited, route } = STAGE_HEADERS;

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
const V1_SIGNED = { verificationData: VERIFICATION_DATA, timestamp: 1767225600 };
const V1_SIGNED_WITH_CALLDATA = {
  ...V1_SIGNED,
  calldata: '0xa1b2c3d40000000000000000000000000000000000000000000000000000000000000000',
};
const SIGNED = { ...V1_SIGNED, deadline: 1767225660 };
const FATE = {
  chainId: 8453,
  keyId: 'pmm_k1a2b3c4d5',
  requestId: '6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
  clientRequestId: 'order-1234',
  signature: `0x${'ab'.repeat(64)}1b`,
  signedAt: 1767225600123,
  quoteTimestamp: 1767225600,
  deadline: 1767225660,
  firm: true,
  pair: 'WETH/USDC',
};
const FILLS = {
  chainId: 8453,
  from: 1767225600,
  to: 1767229200,
  ledger: { blockNumber: 23456900, blockTime: 1767229188 },
  fates: [
    {
      ...FATE,
      fate: 'executed',
      executions: 1,
      reverts: 0,
      txHash: `0x${'c1'.repeat(32)}`,
      blockNumber: 23456791,
      blockTime: 1767225604,
      delaySeconds: 4,
      delayBlocks: 2,
      amountOut: '330120000000000000',
      quotedAmountOut: '330120000000000000',
      executedVsQuotedBps: 0,
    },
    {
      ...FATE,
      requestId: '7a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
      clientRequestId: 'order-1235',
      signature: `0x${'cd'.repeat(64)}1c`,
      fate: 'reverted',
      executions: 0,
      reverts: 1,
      txHash: `0x${'d2'.repeat(32)}`,
      blockNumber: 23456840,
      blockTime: 1767225702,
      reason: 'QuoteExpired',
    },
  ],
  next: '1767225600500-0',
};
const SIGNED_WITH_CALLDATA = { ...SIGNED, calldata: V1_SIGNED_WITH_CALLDATA.calldata };

// ---- operations ------------------------------------------------------------------------------

interface Operation {
  operationId: string;
  summary: string;
  description: string;
  parameters?: Json[];
  requestBody?: { schema: string; examples: Record<string, unknown> };
  /** Rendered as `x-codeSamples`. */
  codeSamples?: CodeSample[];
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
    codeSamples: [curlGet('curl', `${ROUTES.price.path}?chainId=${BOOK.chainId}`)],
    success: {
      description:
        "The chain's latest orderbook, exactly as computed at `blockNumber`. `pairs` may be empty when the chain is live but tracks no pairs.",
      content: json('OrderbookResponse', { book: BOOK }),
    },
    answers: [
      ...CHAIN_QUERY_ANSWERS,
      chainQueryInvalid(''),
      haltedAnswer(
        'No book: the chain, everything, or your integrator is halted. A halted pair is not an error: its levels are left out of `pairs`.',
        'signing is halted on this chain by the operator; retry later',
      ),
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
    codeSamples: [
      curlGet('curl', `${ROUTES.priceStream.path}?chainId=${BOOK.chainId}`, { stream: true }),
      curlGet('curl (reconnect)', `${ROUTES.priceStream.path}?chainId=${BOOK.chainId}`, {
        stream: true,
        headers: [`Last-Event-ID: ${BOOK.blockNumber}`],
      }),
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
      haltedAnswer(
        'The stream does not open: the chain, everything, or your integrator is halted (a stream open when such a halt is made ends within 2 s; one made on the chain sends `unavailable` with code `HALTED`). A halted pair is left out of the books sent, from the next block.',
        'signing is halted on this chain by the operator; retry later',
      ),
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
      "Signs a swap quote for the router's `swap` on the selected chain. The body is forwarded unchanged to the internal signer. Checks, first match wins: 401 · 429 · 413 · 400 INVALID_JSON · 400 UNSUPPORTED_FIELD · 422 VALIDATION_ERROR · 503 HALTED (an operator's halt covers the request) · 400 UNSUPPORTED_CHAIN · 503 SERVICE_UNAVAILABLE · 400 PAIR_NOT_FOUND · 403 ADDRESS_NOT_WHITELISTED · 503 PAIR_UNAVAILABLE (the pair is not offered for the moment, with `Retry-After`) · 500 SIGNING_FAILED / ENCODING_FAILED · 429 QUOTA_EXCEEDED (the integrator's daily signatures on the chain) · 503 (the signature could not be recorded). At any step, 503 SERVICE_UNAVAILABLE when the sign can no longer be answered within its deadline, and at once when the service is over capacity (both with `Retry-After`). `calldata` is present if and only if `amountIn` was sent.",
    requestBody: {
      schema: 'SignQuoteRequest',
      examples: { withCalldata: { ...SIGN_BODY, ...SIGN_AMOUNTS }, signatureOnly: SIGN_BODY },
    },
    codeSamples: [
      curlPost('curl (with amountIn: calldata)', ROUTES.sign.path, { ...SIGN_BODY, ...SIGN_AMOUNTS }),
      curlPost('curl (signature only)', ROUTES.sign.path, SIGN_BODY),
    ],
    success: {
      description: 'Signed quote.',
      content: json('SignQuoteResponse', { withCalldata: SIGNED_WITH_CALLDATA, withoutCalldata: SIGNED }),
    },
    answers: SIGN_ANSWERS(false),
  },
  fills: {
    operationId: 'getFills',
    summary: "Your signatures' fates: executed, reverted, unused",
    description: `What became of each signature your API keys (every key of your integrator) were given on one chain in a period, by signing time: \`executed\` (its first swap: block, delay from signing, what the router paid against what it quoted), \`reverted\` (the router's error of its last reverted call, e.g. \`QuoteExpired\`, \`InsufficientOutput\`, \`WrongSender\`, \`InvalidSignature\`), \`unused\` (neither, and the maker's ledger has passed its \`deadline\`), or \`pending\` (its window is still open in the ledger's time). Only your own signatures: the integrator is the API key's. A call counts for a signature from a minute before its \`timestamp\` to ten minutes after its \`deadline\`. Paged: a page reads at most ${FILLS_PAGE.maxScan} entries of the chain's signature log (every integrator's) and answers at most ${FILLS_PAGE.maxFates} signatures; while \`next\` is not null, ask again with \`cursor=<next>\` and the same period (a page may be empty and still have a \`next\`). The period is at most ${FILLS_MAX_PERIOD_SECONDS} s (a day); signatures older than the operator's audit retention are gone. Readable while your integrator is halted. Checks, first match wins: 401 · 429 · 400 UNSUPPORTED_FIELD · 422 VALIDATION_ERROR (chainId, from, to, cursor, then the period) · 400 UNSUPPORTED_CHAIN · 503 SERVICE_UNAVAILABLE. Also answers \`HEAD\`.`,
    parameters: [
      chainIdParameter(' Any parameter but `chainId`, `from`, `to` and `cursor` is 400 UNSUPPORTED_FIELD naming it.'),
      {
        name: 'from',
        in: 'query',
        required: true,
        description:
          'Start of the period, Unix seconds, inclusive, on the signing time. Missing, repeated or not ASCII digits (at most 12) is 422.',
        schema: { ...FILLS_QUERY_SCHEMA.properties.from, examples: [String(FILLS.from)] },
      },
      {
        name: 'to',
        in: 'query',
        required: true,
        description: `End of the period, Unix seconds, exclusive: after \`from\` and at most ${FILLS_MAX_PERIOD_SECONDS} s after it (else 422). A period that has not ended yet is fine: its later signatures come on later reads.`,
        schema: { ...FILLS_QUERY_SCHEMA.properties.to, examples: [String(FILLS.to)] },
      },
      {
        name: 'cursor',
        in: 'query',
        required: false,
        description: 'The `next` of the page before, to read the rest of the period. Not of that shape is 422.',
        schema: { ...FILLS_QUERY_SCHEMA.properties.cursor, examples: [FILLS.next] },
      },
    ],
    codeSamples: [
      curlGet('curl', `${ROUTES.fills.path}?chainId=${FILLS.chainId}&from=${FILLS.from}&to=${FILLS.to}`),
      curlGet(
        'curl (next page)',
        `${ROUTES.fills.path}?chainId=${FILLS.chainId}&from=${FILLS.from}&to=${FILLS.to}&cursor=${FILLS.next}`,
      ),
    ],
    success: {
      description: 'One page of your signatures of the period, in signing order, each with its fate.',
      content: json('FillsResponse', { page: FILLS }),
    },
    answers: [
      routeAnswer(
        'UNSUPPORTED_FIELD',
        'An unknown query parameter (only `chainId`, `from`, `to` and `cursor` are defined; the message names it).',
        { UNSUPPORTED_FIELD: 'integrator: unsupported query parameter (defined: chainId, from, to, cursor)' },
      ),
      routeAnswer(
        'VALIDATION_ERROR',
        '`chainId`, `from`, `to` or `cursor` missing (from, to), repeated or malformed, or a period that ends before it starts or lasts more than a day; the message names the parameter.',
        {
          VALIDATION_ERROR: 'from: is required',
          VALIDATION_ERROR_PERIOD: `to: must be at most ${FILLS_MAX_PERIOD_SECONDS} s (a day) after from`,
          VALIDATION_ERROR_ORDER: 'to: must be after from',
          VALIDATION_ERROR_CHAIN: 'chainId: must be a base-10 unsigned integer (ASCII digits only)',
        },
      ),
      UNSUPPORTED_CHAIN_QUERY,
      unavailableAnswer(
        `The signature log or the ledger cannot be read right now, or ${FILLS_PAGE.inFlight} reads of this endpoint are already under way on this gateway instance. Retry shortly (\`Retry-After\`).`,
        {
          SERVICE_UNAVAILABLE: 'fills: the ledger cannot be read right now; retry shortly',
          SERVICE_UNAVAILABLE_BUSY: 'fills: too many reads at once; retry shortly',
        },
      ),
    ],
  },
  openapi: {
    operationId: 'getOpenApi',
    summary: 'This OpenAPI document',
    description:
      'Like every route under /v2/, needs an API key. The same document is served without a key at `/docs/openapi.json`, and rendered as a page at `/docs`.',
    codeSamples: [curlGet('curl', ROUTES.openapi.path)],
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
      haltedAnswer(
        'No book: chain 8453, everything, or your integrator is halted. A halted pair is left out of `pairs`.',
        'signing is halted on this chain by the operator; retry later',
      ),
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
      content: json('V1SignQuoteResponse', { withCalldata: V1_SIGNED_WITH_CALLDATA, withoutCalldata: V1_SIGNED }),
    },
    answers: SIGN_ANSWERS(true),
  },
};

/** /v1 answers carry Deprecation and Link (docs/decisions/0030-legacy-v1.md), except before routing. */
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

export function operation(name: RouteName, routeInfo: PublicRoute, components: ComponentSet): Json {
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
    ...(op.codeSamples ? { 'x-codeSamples': op.codeSamples } : {}),
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
